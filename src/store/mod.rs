//! Storage encodings, below both the index and the model: the envelope every cairn file is
//! written in (`envelope`), packs and int8 records fetched by range (`pack`), and the row store
//! the static tier and the browser's word table keep their rows in (`rows`).

pub mod envelope;
pub mod pack;
pub mod rows;
