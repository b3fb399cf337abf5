//! cairn: hybrid search (BM25 + sentence embeddings) that runs entirely in the browser.
//!
//! The pipeline, one module a stage:
//! `ingest` (files → documents) → `chunk` (documents → passages) → `analyze` (text → terms)
//! → `index` (lexical BM25 + vector, one binary file) → `search` (retrieve, fuse, highlight)
//! → `hit` (the `SearchHit` a caller receives). `embed` runs the sentence model (its BERT is
//! `encoder`) on both targets;
//! `searcher` ties an index to its model, and `live` changes one in place (the browser's mutable
//! index). Natively, `build` writes and publishes an index folder and `open` opens one to search. The CLI (`src/main.rs`, `cli`) and the wasm bindings
//! (`wasm`) are thin shells over this core.

pub mod analyze;
// The build path: natively, and in the browser's mutable index (`live`, the `edit` module).
#[cfg(any(not(browser), feature = "edit"))]
pub mod build;
#[cfg(feature = "model")]
pub mod embed;
#[cfg(feature = "model")]
pub mod encoder;
pub mod error;
pub mod eval;
pub mod fragment;
pub mod hit;
pub mod index;
#[cfg(all(feature = "model", any(not(browser), feature = "edit")))]
pub mod live;
#[cfg(all(feature = "model", not(browser)))]
pub mod open;
pub mod order;
#[cfg(feature = "model")]
pub mod rerank;
pub mod search;
pub mod searcher;
pub mod statics;
pub mod store;

#[cfg(any(not(browser), feature = "edit"))]
pub mod chunk;
#[cfg(any(not(browser), feature = "edit"))]
pub mod ingest;

#[cfg(browser)]
pub mod wasm;

/// Talc instead of dlmalloc in the browser: fewer bytes to download, and faster.
#[cfg(all(browser, not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

pub use error::{Error, Result};
pub use hit::{SearchHit, SearchOptions};
pub use searcher::Searcher;
