//! The build path, above the index (native): from ingested documents to an `Index`
//! (`indexer`, with the documents' `summary` sentences and the chunks' vectors through
//! `chunk_embedder`), and, with the model, to the files of an index folder published whole:
//! the layout chosen by cost (`layout`), the static tier fitted (`distill`), what a rebuild
//! reuses (`reuse`), the embedding estimate (`estimate`), the browser's model (`model`), crash-safe
//! publishing (`publish`), and a split build's parts (`shard`) joined by `merge`.

mod chunk_embedder;
mod indexer;
pub mod shard;
mod summary;

#[cfg(feature = "model")]
pub mod distill;
#[cfg(feature = "model")]
mod estimate;
#[cfg(feature = "model")]
mod layout;
#[cfg(feature = "model")]
mod merge;
#[cfg(feature = "model")]
mod model;
#[cfg(feature = "model")]
mod publish;
#[cfg(feature = "model")]
mod reuse;

pub use chunk_embedder::{embed_all, ChunkEmbedder};
pub use indexer::{assemble, build, with_vectors, Previous, VectorOptions};

#[cfg(feature = "model")]
pub use {
    distill::distill_static,
    estimate::embedding_estimate,
    layout::{write_index, Layout, FIRST_ANSWER_BUDGET},
    merge::merge,
    model::{load_source_model, model_identity, write_web_model, WebWeights},
    publish::{write_synced, Staging},
    reuse::reusable,
};

/// What a shard of a split build writes in its folder (with `model/`), for `cairn merge`.
pub const PART_FILE: &str = "part.cairn";
/// The model folder inside an index folder: what a browser downloads to embed queries.
pub const MODEL_DIR: &str = "model";

/// An I/O error after what was being done, as the command line prints it: `cannot read X: …`.
#[cfg(feature = "model")]
pub(crate) fn io(
    what: impl std::fmt::Display,
) -> impl FnOnce(std::io::Error) -> crate::error::Error {
    move |e| crate::error::Error::Io(std::io::Error::new(e.kind(), format!("{what}: {e}")))
}
