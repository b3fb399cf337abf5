//! The index: what a search reads. Documents, the chunks cut from them (each remembering where
//! it came from), the lexical (BM25) index over the chunks and, when the index was built with a
//! model, the chunk embeddings. `format` reads and writes it as one binary file; `crate::build`
//! assembles it from ingested documents.

pub mod format;
pub mod lexical;
pub mod vector;

use serde::{Deserialize, Serialize};

use crate::analyze::{Analyzer, AnalyzerSettings};
use crate::hit::DocType;
use lexical::{Bm25Params, LexicalIndex};
use vector::VectorIndex;

/// One source document: a file, or one record of a JSONL file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The record's own id (JSONL `_id`/`id`), or the file's path relative to its input root.
    pub id: String,
    pub doc_type: DocType,
    pub title: String,
    /// Where a reader finds the document (JSONL `url`, or the path with `--base-url`).
    pub url: Option<String>,
    /// Front-matter or JSONL `metadata`, as JSON text (postcard is not self-describing, so
    /// free-form values travel as JSON).
    pub metadata: Option<String>,
    /// When the document was created and last updated.
    pub created: Option<Timestamp>,
    pub updated: Option<Timestamp>,
    /// Who wrote it, when the source names someone (front matter or JSONL `author`,
    /// `<meta name="author">`).
    pub author: Option<String>,
    /// A few of its own sentences that say what it is about, chosen at build time
    /// (`build::summary`); none when that would be all of its text (see `Index::summary`).
    pub summary: Option<String>,
}

/// A point in time, as ISO 8601 text (as the source said it) and as seconds since 1970 (UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timestamp {
    pub iso: String,
    pub unix_seconds: i64,
}

/// A link from one indexed document to another, with the link's words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocLink {
    pub from: u32,
    pub to: u32,
    pub text: String,
    /// The relationship the linking document states (HTML `rel`, a Markdown link's title).
    pub rel: Option<String>,
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
    /// First and last page of the text, for sources with pages.
    pub pages: Option<(u32, u32)>,
}

/// Settings the index was built with; queries must be analyzed with the same ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexSettings {
    pub analyzer: AnalyzerSettings,
    pub bm25: Bm25Params,
    /// Largest chunk, in words.
    pub chunk_words: u32,
    /// Whether each document's summary was chosen (`cairn index --summaries`): they cost build
    /// time (with a model, about a chunk's embedding a document) and index bytes.
    pub summaries: bool,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            analyzer: AnalyzerSettings::default(),
            bm25: Bm25Params::default(),
            chunk_words: 200,
            summaries: false,
        }
    }
}

/// The single-file layout's file name.
pub const INDEX_FILE: &str = "index.cairn";

#[derive(Serialize, Deserialize)]
pub struct Index {
    pub settings: IndexSettings,
    pub documents: Vec<Document>,
    pub chunks: Vec<Chunk>,
    /// Links between documents, sorted by (from, to).
    pub links: Vec<DocLink>,
    pub lexical: LexicalIndex,
    pub vectors: Option<VectorIndex>,
    /// Where the static query encoder's rows are (`statics`), when it was distilled.
    pub statics: Option<crate::store::rows::StaticRows>,
    /// Each document's metadata, parsed on first use (filters, hits).
    #[serde(skip)]
    parsed_metadata: std::sync::OnceLock<Vec<Option<serde_json::Value>>>,
    /// For each document, the positions in `links` of the links to it, built on first use.
    #[serde(skip)]
    incoming_links: std::sync::OnceLock<Vec<Vec<u32>>>,
}

impl Index {
    pub fn new(
        settings: IndexSettings,
        documents: Vec<Document>,
        chunks: Vec<Chunk>,
        links: Vec<DocLink>,
        lexical: LexicalIndex,
        vectors: Option<VectorIndex>,
    ) -> Self {
        Index {
            settings,
            documents,
            chunks,
            links,
            lexical,
            vectors,
            statics: None,
            parsed_metadata: Default::default(),
            incoming_links: Default::default(),
        }
    }

    /// The metadata of document `doc`, parsed.
    pub fn metadata(&self, doc: u32) -> Option<&serde_json::Value> {
        self.parsed_metadata
            .get_or_init(|| {
                self.documents
                    .iter()
                    .map(|d| {
                        d.metadata
                            .as_deref()
                            .and_then(|m| serde_json::from_str(m).ok())
                    })
                    .collect()
            })
            .get(doc as usize)
            .and_then(Option::as_ref)
    }

    /// The links out of document `doc` (links are sorted by their source).
    pub fn links_from(&self, doc: u32) -> &[DocLink] {
        let start = self.links.partition_point(|l| l.from < doc);
        let end = start + self.links[start..].partition_point(|l| l.from == doc);
        &self.links[start..end]
    }

    /// The links into document `doc`.
    pub fn links_to(&self, doc: u32) -> impl Iterator<Item = &DocLink> {
        let incoming = self.incoming_links.get_or_init(|| {
            let mut by_target = vec![Vec::new(); self.documents.len()];
            for (i, link) in self.links.iter().enumerate() {
                by_target[link.to as usize].push(i as u32);
            }
            by_target
        });
        incoming[doc as usize]
            .iter()
            .map(|&i| &self.links[i as usize])
    }

    /// The chunks of document `doc`, as a range of chunk ids (a document's chunks are stored
    /// together, in order; empty for a document of none).
    pub fn chunks_of(&self, doc: u32) -> std::ops::Range<u32> {
        let start = self.chunks.partition_point(|c| c.doc < doc);
        let end = start + self.chunks[start..].partition_point(|c| c.doc == doc);
        start as u32..end as u32
    }

    /// Document `doc`'s summary: the one stored, else, for a document short enough to be its
    /// own summary, its text.
    pub fn summary(&self, doc: u32) -> Option<String> {
        if let Some(summary) = &self.documents[doc as usize].summary {
            return Some(summary.clone());
        }
        // A document short enough is its own summary: its folded text (`document_text`), read
        // only until it is too long, so a huge document costs no more than a short one.
        let mut text = String::new();
        let words = self
            .chunks_of(doc)
            .flat_map(|c| self.chunks[c as usize].text.split_whitespace());
        for word in words {
            if !text.is_empty() {
                text.push(' ');
            }
            if text.len() + word.len() > summary_chars::MAX {
                return None;
            }
            text.push_str(word);
        }
        (!text.is_empty()).then_some(text)
    }

    /// Document `doc`'s chunks' text, each folded to single spaces, joined by a space.
    pub fn document_text(&self, doc: u32) -> String {
        folded_text(self.chunks_of(doc).map(|c| &self.chunks[c as usize]))
    }

    pub fn analyzer(&self) -> Analyzer {
        Analyzer::new(self.settings.analyzer.clone())
    }

    pub fn document_of(&self, chunk: &Chunk) -> &Document {
        &self.documents[chunk.doc as usize]
    }
}

/// Chunks' text, each folded to single spaces, joined by a space: a document's text as its
/// summary is compared with it.
pub fn folded_text<'a>(chunks: impl IntoIterator<Item = &'a Chunk>) -> String {
    chunks
        .into_iter()
        .flat_map(|c| c.text.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long a summary may be.
pub mod summary_chars {
    /// About how many characters: sentences are added while they fit.
    pub const MAX: usize = 320;
}

/// What the index (words and model) reads before a chunk's text: the document title and the
/// headings above the chunk (a heading equal to the title once), one a line.
pub fn heading_prefix(title: &str, heading_path: &[String]) -> String {
    let mut prefix = title.to_string();
    for heading in heading_path.iter().filter(|h| *h != title) {
        prefix.push('\n');
        prefix.push_str(heading);
    }
    prefix
}

/// The text the lexical index and the model see for a chunk: the document title, the heading
/// path and the body, so a title word counts as a body word does (one field, as in plain BM25).
pub fn indexed_text(document: &Document, chunk: &Chunk) -> String {
    let mut text = heading_prefix(&document.title, &chunk.heading_path);
    text.push('\n');
    text.push_str(&chunk.text);
    text
}
