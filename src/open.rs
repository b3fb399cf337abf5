//! An index folder opened for searching on this machine (native): one file, or fragments read
//! as each query needs them, with the model and cross-encoder its searches use.

use std::path::Path;

use crate::build::{io, MODEL_DIR};
use crate::embed::{Embedder, ModelFiles};
use crate::error::{Error, Result};
use crate::fragment::{self, load::native::Folder};
use crate::hit::{Rerank, SearchHit, SearchMode, SearchOptions};
use crate::index::INDEX_FILE;
use crate::search::QueryContext;
use crate::Searcher;

/// An index as the command line searches it: one file, or a folder of fragments read as each
/// query needs them (with the model that embeds queries, when the mode needs it).
pub enum Opened {
    Single(Searcher),
    Fragments {
        folder: std::sync::Mutex<Folder>,
        embedder: Option<Embedder>,
        /// The cross-encoder `rerank` names, once loaded.
        reranker: Option<crate::rerank::Reranker>,
    },
}

impl Opened {
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        match self {
            Opened::Single(searcher) => Ok(searcher.search(query, options)?),
            Opened::Fragments {
                folder,
                embedder,
                reranker,
            } => {
                let vector = match embedder {
                    Some(e) if options.mode != SearchMode::Lexical => Some(e.embed(query)?),
                    _ => None,
                };
                let context = QueryContext::new(vector.as_deref(), options).with_models(
                    embedder
                        .as_ref()
                        .map(|e| e as &dyn crate::search::SentenceEncoder),
                    reranker
                        .as_ref()
                        .map(|r| r as &dyn crate::search::CrossEncoder),
                );
                let mut folder = folder.lock().expect("a search panicked");
                Ok(folder.search(query, context, options)?)
            }
        }
    }

    pub fn searcher(&self) -> Result<&Searcher> {
        match self {
            Opened::Single(searcher) => Ok(searcher),
            Opened::Fragments { .. } => Err(Error::InvalidInput(
                "this is a fragmented index, which answers chunk searches only; build it with --layout single for --output documents or context".into()
            )),
        }
    }

    /// Loads the cross-encoder `rerank` names (a folder) for the searches that ask for it.
    pub fn load_reranker(&mut self, rerank: &Rerank) -> Result<()> {
        let cannot = |e: Error| {
            Error::Model(format!(
                "cannot load the cross-encoder {}: {e}",
                rerank.model
            ))
        };
        let files = ModelFiles::read_dir(Path::new(&rerank.model)).map_err(cannot)?;
        match self {
            Opened::Single(searcher) => searcher
                .load_reranker(&rerank.model, files)
                .map_err(cannot)?,
            Opened::Fragments { reranker, .. } => {
                *reranker = Some(crate::rerank::Reranker::load(files).map_err(cannot)?)
            }
        }
        Ok(())
    }
}

/// Opens an index folder (or file) and, when it has embeddings and the mode needs them, its model.
pub fn open(path: &Path, mode: SearchMode) -> Result<Opened> {
    let at = |e: Error| Error::InvalidIndex(format!("{}: {e}", path.display()));
    if path.join(fragment::META_FILE).is_file() && !path.join(INDEX_FILE).is_file() {
        let folder = Folder::open(path).map_err(at)?;
        let embedder = match &folder.index.meta().vectors {
            Some(v) if mode != SearchMode::Lexical => Some(crate::searcher::load_checked_model(
                &v.model,
                ModelFiles::read_dir(&path.join(MODEL_DIR))?,
            )?),
            _ => None,
        };
        return Ok(Opened::Fragments {
            folder: std::sync::Mutex::new(folder),
            embedder,
            reranker: None,
        });
    }
    let (file, dir) = if path.is_dir() {
        (path.join(INDEX_FILE), path.to_path_buf())
    } else {
        (
            path.to_path_buf(),
            path.parent().map(Path::to_path_buf).unwrap_or_default(),
        )
    };
    let bytes =
        std::fs::read(&file).map_err(io(format!("cannot read the index {}", file.display())))?;
    let mut searcher = Searcher::from_bytes(&bytes)
        .map_err(|e| Error::InvalidIndex(format!("{}: {e}", file.display())))?;
    if let Some(rows) = &searcher.index().statics {
        if mode != SearchMode::Lexical {
            searcher.set_statics(crate::store::rows::read_all(rows, &dir)?);
        }
    }
    if searcher.has_vectors() && mode != SearchMode::Lexical {
        searcher.load_model(ModelFiles::read_dir(&dir.join(MODEL_DIR))?)?;
    }
    Ok(Opened::Single(searcher))
}
