//! An index folder opened for searching on this machine (native): one file, or fragments read
//! as each query needs them, with the model and cross-encoder its searches use.

use std::path::Path;

use crate::build::{io, MODEL_DIR};
use crate::embed::{Embedder, ModelFiles};
use crate::error::{Error, Result};
use crate::fragment::load::{native::Folder, Fragmented, Step};
use crate::fragment::META_FILE;
use crate::hit::{
    ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, Rerank,
    SearchHit, SearchMode, SearchOptions,
};
use crate::index::INDEX_FILE;
use crate::search::{answer, now_ms, CrossEncoder, Query, QueryContext, SentenceEncoder, Source};
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
        self.answer(
            query,
            options,
            |single| single.search(query, options),
            |index, query, context| answer::search(index, query, context, options),
        )
    }

    pub fn search_documents(
        &self,
        query: &str,
        options: &DocumentSearchOptions,
    ) -> Result<DocumentSearchResponse> {
        self.answer(
            query,
            &options.search,
            |single| single.search_documents(query, options),
            |index, query, context| {
                answer::search_documents(index, query, context, options, now_ms)
            },
        )
    }

    pub fn build_context(&self, query: &str, options: &ContextOptions) -> Result<ContextResponse> {
        self.answer(
            query,
            &options.search,
            |single| single.build_context(query, options),
            |index, query, context| answer::build_context(index, query, context, options),
        )
    }

    /// One answer from either layout: the single file's `Searcher` prepares the query itself;
    /// for fragments the query is embedded here and the folder fetches what each step needs.
    fn answer<T>(
        &self,
        query: &str,
        options: &SearchOptions,
        single: impl FnOnce(&Searcher) -> Result<T>,
        fragmented: impl Fn(&Fragmented, &Query, QueryContext<'_>) -> Result<Step<T>>,
    ) -> Result<T> {
        let (folder, embedder, reranker) = match self {
            Opened::Single(searcher) => return single(searcher),
            Opened::Fragments {
                folder,
                embedder,
                reranker,
            } => (folder, embedder, reranker),
        };
        let lock = || folder.lock().expect("a search panicked");
        let query = Query::new(&lock().index.analyzer(), query)?;
        let vector = match embedder {
            Some(e) if options.mode != SearchMode::Lexical => Some(e.embed(query.text)?),
            _ => None,
        };
        let context = QueryContext::new(vector.as_deref(), options).with_models(
            embedder.as_ref().map(|e| e as &dyn SentenceEncoder),
            reranker.as_ref().map(|r| r as &dyn CrossEncoder),
        );
        lock().run(context.reranker, |index| fragmented(index, &query, context))
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
    if path.join(META_FILE).is_file() && !path.join(INDEX_FILE).is_file() {
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
    if path.is_dir() && !path.join(INDEX_FILE).is_file() {
        let manifest = std::fs::read(path.join(crate::build::LanguageManifest::FILE))
            .ok()
            .and_then(|bytes| crate::build::LanguageManifest::read(&bytes));
        if let Some(manifest) = manifest {
            let folders: Vec<String> = manifest
                .languages
                .iter()
                .map(|l| path.join(&l.path).display().to_string())
                .collect();
            return Err(Error::InvalidInput(format!(
                "{} holds one index a language ({}); search one of them: {}",
                path.display(),
                crate::build::LanguageManifest::FILE,
                folders.join(", ")
            )));
        }
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
