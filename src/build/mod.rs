//! The build path, above the index: from ingested documents to an `Index`
//! (`indexer`, with the documents' `summary` sentences and the chunks' vectors through
//! `chunk_embedder`), and, with the model, to the files of an index folder published whole:
//! the layout chosen by cost (`layout`), the static tier fitted (`distill`), what a rebuild
//! reuses (`reuse`), the embedding estimate (`estimate`), the browser's model (`model`), crash-safe
//! publishing (`publish`), and a split build's parts (`shard`) joined by `merge`; the language
//! its documents are analyzed as, or one index a language (`language`). In the browser
//! (the mutable index, `crate::live`) only the first three: no files, no model to write.

mod chunk_embedder;
mod indexer;
mod language;
#[cfg(not(browser))]
pub mod shard;
mod summary;

#[cfg(all(feature = "model", not(browser)))]
pub mod distill;
#[cfg(all(feature = "model", not(browser)))]
mod estimate;
#[cfg(all(feature = "model", not(browser)))]
mod layout;
#[cfg(all(feature = "model", not(browser)))]
mod merge;
#[cfg(all(feature = "model", not(browser)))]
mod model;
#[cfg(all(feature = "model", not(browser)))]
mod publish;
#[cfg(all(feature = "model", not(browser)))]
mod reuse;

pub use chunk_embedder::{embed_all, ChunkEmbedder};
pub use indexer::{assemble, build, with_vectors, Previous, VectorOptions};
pub use language::{choose_language, split_by_language, LanguageChoice, LanguageManifest};

#[cfg(all(feature = "model", not(browser)))]
pub use {
    distill::distill_static,
    estimate::embedding_estimate,
    layout::{write_index, Layout, FIRST_ANSWER_BUDGET},
    merge::merge,
    model::{common_tokens, load_source_model, write_web_model, WebWeights},
    publish::{write_synced, Staging},
    reuse::reusable,
};

/// What a shard of a split build writes in its folder (with `model/`), for `cairn merge`.
pub const PART_FILE: &str = "part.cairn";
/// The model folder inside an index folder: what a browser downloads to embed queries.
pub const MODEL_DIR: &str = "model";

/// An I/O error after what was being done, as the command line prints it: `cannot read X: …`.
#[cfg(all(feature = "model", not(browser)))]
pub(crate) fn io(
    what: impl std::fmt::Display,
) -> impl FnOnce(std::io::Error) -> crate::error::Error {
    move |e| crate::error::Error::Io(std::io::Error::new(e.kind(), format!("{what}: {e}")))
}
