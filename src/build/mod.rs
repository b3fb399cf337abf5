//! The build path above the index (native): from ingested documents and a model to the files of an
//! index folder, published whole; what a rebuild reuses, a split build's merge, the static tier.

mod estimate;
mod layout;
mod model;
mod publish;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub use estimate::embedding_estimate;
pub use layout::{write_index, Layout, FIRST_ANSWER_BUDGET};
pub use model::{load_source_model, model_identity, write_web_model, WebWeights};
pub use publish::{write_synced, Staging};

use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::fragment::load::native::Folder;
use crate::index::{build, format, shard, vector, Index, INDEX_FILE};

/// What a shard of a split build writes in its folder (with `model/`), for `cairn merge`.
pub const PART_FILE: &str = "part.cairn";
/// The model folder inside an index folder: what a browser downloads to embed queries.
pub const MODEL_DIR: &str = "model";

/// An I/O error after what was being done, as the command line prints it: `cannot read X: …`.
pub(crate) fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Io(std::io::Error::new(e.kind(), format!("{what}: {e}")))
}

/// A text's 64-bit hash: the estimate's way to tell a chunk the previous index has a vector
/// for without keeping its text twice.
pub(crate) fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// What a rebuild into `out` may take from the index there, if it was embedded by the model
/// `identity` names: unchanged chunks keep their vectors and unchanged documents their
/// summaries; and the hashes of the texts it has vectors for, so the estimate counts only the
/// chunks to embed.
pub fn reusable(out: &Path, identity: &vector::ModelIdentity) -> (Option<build::Previous>, Option<HashSet<u64>>) {
    let old = previous_index(out);
    let previous = old.as_ref().and_then(|old| build::Previous::of(old, identity));
    let previous_texts = old.filter(|_| previous.is_some()).map(|old| {
        old.chunks
            .iter()
            .map(|c| text_hash(&crate::index::indexed_text(old.document_of(c), c)))
            .collect()
    });
    (previous, previous_texts)
}

/// The index in `out` a rebuild may take vectors and summaries from: its `index.cairn`, or its
/// fragments read back whole. None when there is none, or it does not read.
fn previous_index(out: &Path) -> Option<Index> {
    match std::fs::read(out.join(INDEX_FILE)) {
        Ok(bytes) => format::read(&bytes).ok(),
        Err(_) => Folder::open(out).and_then(|mut f| f.read_index()).ok(),
    }
}

/// Distills the static tier of an index with vectors (`statics::distill`) and names its rows in
/// the index: the rows' packs, and (rows, seconds) for the summary line.
#[allow(clippy::type_complexity)]
pub fn distill_static(
    index: &mut Index,
    embedder: &Embedder,
) -> Result<(Vec<(String, Vec<u8>)>, Option<(usize, f64)>)> {
    let Some(vectors) = &index.vectors else {
        return Ok((Vec::new(), None));
    };
    let began = std::time::Instant::now();
    let distilled =
        crate::statics::distill::distill(index, &vectors.to_flat(), embedder, &Default::default())?;
    let (rows, packs) = distilled.write(index);
    let done = (rows.len(), began.elapsed().as_secs_f64());
    index.statics = Some(rows);
    Ok((packs, Some(done)))
}

/// `cairn merge`: joins the parts of a split build into the index one build would have written
/// in `out`; returns it, what was written (for the summary line) and its bytes.
pub fn merge(parts: &[PathBuf], out: &Path, model: &Path, layout: Layout) -> Result<(Index, String, usize)> {
    let read = |dir: &PathBuf| -> Result<shard::Part> {
        let path = dir.join(PART_FILE);
        let bytes = std::fs::read(&path).map_err(io(format!(
            "cannot read {}: merge takes the folders `cairn index --shard I/N --out DIR` wrote",
            path.display()
        )))?;
        shard::Part::read(&bytes).map_err(|e| Error::InvalidIndex(format!("{}: {e}", path.display())))
    };
    let joined = shard::join(parts.iter().map(read).collect::<Result<_>>()?)?;
    let (embedder, _) = load_source_model(model)?;
    if embedder.weights_sha256() != joined.identity.source_weights_sha256 {
        return Err(Error::Model(format!(
            "the shards were embedded by another model than {}; pass the shards' model with --model",
            model.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(io(format!("cannot create {}", out.display())))?;
    let staging = Staging::new(out)?;
    // The browser's model, as the shards wrote it (theirs agree: the identities do).
    model::copy_web_model(&parts[0].join(MODEL_DIR), &staging.path.join(MODEL_DIR), &joined.identity)?;
    let options = build::VectorOptions {
        embedder: &embedder,
        identity: joined.identity,
        previous: None,
        graph_from: joined.graph_from,
        graph: vector::GraphSettings::default(),
        precision: joined.precision,
    };
    let mut index = build::with_vectors(joined.index, joined.vectors, &options)?;
    let (rows_packs, _) = distill_static(&mut index, &embedder)?;
    let (path, bytes) = write_index(&index, rows_packs, layout, staging, true)?;
    Ok((index, path, bytes))
}
