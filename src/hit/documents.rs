//! `searchDocuments`: its options and its answer, documents with their matching chunks.

use serde::{Deserialize, Serialize};
use tsify::Tsify;

use super::options::read_apart;
use super::{DocType, Highlight, Options, ScoreKind, SearchOptions};

/// Options of `searchDocuments`: every search option, plus how documents are shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct DocumentSearchOptions {
    /// The search; its `limit` counts documents (default 10). (Read these options from JSON with
    /// `Options::from_json`: the derived reader leaves `search` to it.)
    #[serde(flatten, deserialize_with = "read_apart")]
    pub search: SearchOptions,
    /// A chunk scoring at least this is `isRelevant` (default 0: every matching chunk). On the
    /// response's score scale (`scoreKind`).
    #[tsify(optional)]
    pub chunk_threshold: f32,
    /// Only the chunks that matched (default true); false adds the document's other chunks, for
    /// context, with `isRelevant: false`.
    #[tsify(optional)]
    pub only_matching_chunks: bool,
    /// Add each document's full text as `content` (default false; can be large).
    #[tsify(optional)]
    pub include_full_docs: bool,
    /// Count the matching documents by these metadata fields (`facets` in the response).
    #[tsify(optional)]
    pub facets: Vec<String>,
}

impl Default for DocumentSearchOptions {
    fn default() -> Self {
        DocumentSearchOptions {
            search: SearchOptions::default(),
            chunk_threshold: 0.0,
            only_matching_chunks: true,
            include_full_docs: false,
            facets: Vec::new(),
        }
    }
}

/// The answer of `searchDocuments`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct DocumentSearchResponse {
    pub results: Vec<DocumentResult>,
    /// The scale of every score in the response.
    pub score_kind: ScoreKind,
    /// How long the search took, in milliseconds.
    pub timing: f64,
    /// How many documents matched (before `limit`).
    pub total: u32,
    /// For each requested facet field: value → number of matching documents.
    #[tsify(type = "Record<string, Record<string, number>>")]
    pub facets: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u32>>,
}

/// A document and its chunks that matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct DocumentResult {
    pub doc_id: String,
    pub doc_type: DocType,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The document's score: its best chunk's.
    pub score: f32,
    /// 1-based rank among documents.
    pub rank: u32,
    /// Its chunks, best first (then, with `onlyMatchingChunks: false`, the rest in order).
    pub chunks: Vec<DocumentChunk>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional, type = "Record<string, unknown>")]
    pub metadata: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// The full text (chunks joined by blank lines), with `includeFullDocs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A few of the document's sentences that say what it is about, with `includeSummary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// A chunk of a document result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct DocumentChunk {
    pub id: String,
    pub chunk_index: u32,
    pub content: String,
    /// The chunk's own score (0 for a context chunk that did not match).
    pub score: f32,
    /// Whether the chunk matched and passed `chunkThreshold`.
    pub is_relevant: bool,
    /// Query-term occurrences in `content` (UTF-16), when highlighting.
    pub highlights: Vec<Highlight>,
}

impl Options for DocumentSearchOptions {
    const OWN_KEYS: &'static [&'static str] = &[
        "chunkThreshold",
        "onlyMatchingChunks",
        "includeFullDocs",
        "facets",
    ];

    fn search_mut(&mut self) -> &mut SearchOptions {
        &mut self.search
    }
}
