//! The index: what a search reads. Documents, the chunks cut from them (each remembering where
//! it came from), the lexical (BM25) index over the chunks and, when the index was built with a
//! model, the chunk embeddings. `format` reads and writes it as one binary file; `build` (native
//! only) assembles it from ingested documents.

pub mod format;
pub mod lexical;
pub mod vector;
#[cfg(not(target_arch = "wasm32"))]
pub mod build;

use serde::{Deserialize, Serialize};

use crate::analyze::{Analyzer, AnalyzerSettings};
use crate::hit::DocType;
use lexical::{Bm25Params, LexicalIndex};
use vector::VectorIndex;

/// One source document: a file, or one record of a JSONL file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The record's own id (JSONL `_id`/`id`), or the file's path relative to its input root.
    pub id: String,
    pub doc_type: DocType,
    pub title: String,
    /// Where a reader finds the document (JSONL `url`, or the path with `--base-url`).
    pub url: Option<String>,
    /// Front-matter or JSONL `metadata`, as JSON text (kept as text so the binary format stays
    /// self-describing-free and compact).
    pub metadata: Option<String>,
}

/// A passage of a document: the unit that is indexed, embedded and returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Index into `Index::documents`.
    pub doc: u32,
    /// Position of the chunk within its document, from 0.
    pub chunk_index: u32,
    /// The headings the text sits under, outermost first.
    pub heading_path: Vec<String>,
    /// The id of the innermost heading (a URL fragment), when there is one.
    pub anchor: Option<String>,
    /// The chunk's text as a reader sees it (Markdown syntax removed).
    pub text: String,
    /// First and last line (1-based) of the chunk in the source file.
    pub line_start: u32,
    pub line_end: u32,
    /// Byte offset in the source where the chunk's text starts (for JSONL: in the record's text).
    pub source_offset: u64,
}

/// Settings the index was built with; queries must be analyzed with the same ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexSettings {
    pub analyzer: AnalyzerSettings,
    pub bm25: Bm25Params,
    /// Largest chunk, in words.
    pub chunk_words: u32,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings { analyzer: AnalyzerSettings::default(), bm25: Bm25Params::default(), chunk_words: 200 }
    }
}

#[derive(Serialize, Deserialize)]
pub struct Index {
    pub settings: IndexSettings,
    pub documents: Vec<Document>,
    pub chunks: Vec<Chunk>,
    pub lexical: LexicalIndex,
    pub vectors: Option<VectorIndex>,
}

impl Index {
    pub fn analyzer(&self) -> Analyzer {
        Analyzer::new(self.settings.analyzer.clone())
    }

    pub fn document_of(&self, chunk: &Chunk) -> &Document {
        &self.documents[chunk.doc as usize]
    }
}

/// The text the lexical index sees for a chunk: the document title, the heading path and the
/// body, so a title word counts as a body word does (one field, as in plain BM25).
pub fn indexed_text(document: &Document, chunk: &Chunk) -> String {
    let mut text = String::with_capacity(document.title.len() + chunk.text.len() + 16);
    text.push_str(&document.title);
    for heading in &chunk.heading_path {
        if heading != &document.title {
            text.push('\n');
            text.push_str(heading);
        }
    }
    text.push('\n');
    text.push_str(&chunk.text);
    text
}
