//! The public types a search returns and takes: `SearchHit` and its parts, and `SearchOptions`.
//! They are serialized with the same camelCase names to JavaScript (through serde-wasm-bindgen)
//! and to the CLI's `--json` output, and their TypeScript declarations are generated from these
//! definitions (tsify), so the type a JavaScript caller sees is this one, field for field.
//!
//! Every offset into `text` is in UTF-16 code units, so `text.slice(start, end)` is right in
//! JavaScript.

use serde::{Deserialize, Serialize};
use tsify::Tsify;

/// What kind of source a document came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum DocType {
    Md,
    Html,
    Text,
    Pdf,
    Jsonl,
}

/// One ranked result: a chunk of a document, why it matched and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// Stable id of the chunk: `<docId>#<chunkIndex>`.
    pub id: String,
    /// 1-based position of the hit in this response.
    pub rank: u32,
    /// Relevance, higher is better. Comparable within one response only; its scale is named by
    /// `scoreKind`.
    pub score: f32,
    /// The scale of `score`: `bm25` (lexical), `cosine` (semantic), `rrf` (hybrid, reciprocal
    /// rank fusion: a sum of 1/(k + rank), small numbers that are not similarities) or `weighted`
    /// (hybrid, a weighted sum of min-max normalized signal scores, in [0, 1]).
    pub score_kind: ScoreKind,
    /// The chunk's text.
    pub text: String,
    /// Where the text came from. Always render it.
    pub citation: Citation,
    /// Every occurrence of a query term in `text` (after stemming and folding), in UTF-16 code
    /// units of `text`, in order. Empty when highlighting is off.
    pub highlights: Vec<Highlight>,
    /// Each retrieval signal that found this hit, with its rank and score there.
    pub signals: Signals,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum ScoreKind {
    Bm25,
    Cosine,
    Rrf,
    Weighted,
}

/// Where a hit's text came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    /// The document's id: a JSONL record's own `_id`/`id`, or the file's path under its input.
    pub doc_id: String,
    pub doc_type: DocType,
    pub title: String,
    /// Where a reader opens the document, with `#anchor` of the heading when the source has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub url: Option<String>,
    /// The headings the text sits under, outermost first.
    pub heading_path: Vec<String>,
    /// Position of the chunk within its document, from 0.
    pub chunk_index: u32,
    /// First line of the text in the source file, 1-based.
    pub line_start: u32,
    /// Last line of the text in the source file, 1-based, inclusive.
    pub line_end: u32,
    /// Byte offset in the source file where the text starts (for a JSONL record: in its `text`).
    pub source_offset: u64,
}

/// A query term's occurrence in a text, in UTF-16 code units: `text.slice(start, end)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Tsify)]
pub struct Highlight {
    pub start: u32,
    pub end: u32,
    /// The analyzed query term that matched (lower-cased, folded and stemmed).
    pub term: String,
}

/// Which retrieval signals found a hit. Ranks are 1-based over each signal's whole candidate
/// pool, so a hit found by only one signal is still explained.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Tsify)]
pub struct Signals {
    /// BM25 over the chunk's title, headings and text.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub lexical: Option<LexicalSignal>,
    /// Cosine similarity of the query's and the chunk's embeddings.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub semantic: Option<SemanticSignal>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct LexicalSignal {
    /// 1-based rank among the lexical candidates.
    pub rank: u32,
    /// BM25 score.
    pub score: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct SemanticSignal {
    /// 1-based rank among the semantic candidates.
    pub rank: u32,
    /// Cosine similarity in [-1, 1].
    pub score: f32,
    /// Cosine distance, 1 - score: lower is closer.
    pub distance: f32,
}

/// Which signals a search uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 only.
    Lexical,
    /// Embeddings only; needs the model.
    Semantic,
    /// Both, fused. Until the model is loaded, a hybrid search answers with lexical hits.
    #[default]
    Hybrid,
}

/// How hybrid search combines the two rankings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Reciprocal rank fusion: score = Σ 1 / (rrfK + rank).
    #[default]
    Rrf,
    /// Weighted sum of min-max normalized scores: semanticWeight · cosine + (1 − semanticWeight) · bm25.
    Weighted,
}

/// Options of a search. Every field is optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SearchOptions {
    /// How many hits to return (default 10).
    #[tsify(optional)]
    pub limit: u32,
    /// `hybrid` (default), `lexical` or `semantic`.
    #[tsify(optional)]
    pub mode: SearchMode,
    /// How hybrid search fuses the signals (default `rrf`).
    #[tsify(optional)]
    pub fusion: Fusion,
    /// The k of reciprocal rank fusion (default 60).
    #[tsify(optional)]
    pub rrf_k: f32,
    /// Weight of the semantic signal in `weighted` fusion, 0 to 1 (default 0.5).
    #[tsify(optional)]
    pub semantic_weight: f32,
    /// How many candidates each signal contributes before fusion (default max(limit, 100)).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub candidates: Option<u32>,
    /// Compute `highlights` (default true).
    #[tsify(optional)]
    pub highlight: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            mode: SearchMode::Hybrid,
            fusion: Fusion::Rrf,
            rrf_k: 60.0,
            semantic_weight: 0.5,
            candidates: None,
            highlight: true,
        }
    }
}
