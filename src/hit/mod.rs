//! The public types a search returns and takes: `SearchHit` and its parts, and `SearchOptions`.
//! They are serialized with the same camelCase names to JavaScript (through serde-wasm-bindgen)
//! and to the CLI's `--json` output, and their TypeScript declarations are generated from these
//! definitions (tsify), so the type a JavaScript caller sees is this one, field for field.
//!
//! Every offset into `text` is in UTF-16 code units, so `text.slice(start, end)` is right in
//! JavaScript.

use serde::{Deserialize, Serialize};
use tsify::Tsify;

mod context;
mod documents;
mod options;

pub use context::{ContextCandidate, ContextOptions, ContextOrder, ContextResponse, RejectReason};
pub use documents::{DocumentChunk, DocumentResult, DocumentSearchOptions, DocumentSearchResponse};
pub use options::{Encoder, Fusion, Fuzzy, Options, Rerank, SearchMode, SearchOptions};

/// What kind of source a document came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum DocType {
    Md,
    Html,
    #[default]
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
    /// rank fusion: a sum of 1/(k + rank), small numbers that are not similarities), `weighted`
    /// (hybrid, the default: a weighted sum of each signal's score as a share of the query's
    /// best, in [0, 1]) or `reranker` (a cross-encoder's relevance in [0, 1], with `rerank`: the
    /// one scale that means the same in every mode, the place for a quality cutoff).
    pub score_kind: ScoreKind,
    /// The cross-encoder's relevance in [0, 1], on the hits `rerank` scored (its `topN`); the
    /// hits after them keep their retrieval order, have none, and `score` 0 (their retrieval
    /// score is in `retrievalScore`), so one cutoff holds for the whole response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reranker_score: Option<f32>,
    /// The chunk's text.
    pub text: String,
    /// Where the text came from. Always render it.
    pub citation: Citation,
    /// Every occurrence of a query term in `text` (after stemming and folding), in UTF-16 code
    /// units of `text`, in order. Empty when highlighting is off.
    pub highlights: Vec<Highlight>,
    /// The best-matching sentence inside `text` (UTF-16): the one with the most query-term
    /// weight, or for a hit only the semantic signal found, the one closest to the query in
    /// meaning. `text.slice(match.start, match.start + match.length)`. With highlighting only.
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_range: Option<MatchRange>,
    /// A short excerpt around the match, with its own highlight offsets. With highlighting only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<Snippet>,
    /// Each retrieval signal that found this hit, with its rank and score there.
    pub signals: Signals,
    /// Where retrieval (fusion) put this hit, before any later reordering (the recency boost,
    /// reranking); compare with `rank` to see what moved it. Absent on a `related` hit no signal retrieved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrieval_rank: Option<u32>,
    /// The retrieval score, before any later reordering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retrieval_score: Option<f32>,
    /// Why the hit is here: each branch's rank and score and the fused score's terms. Only when
    /// `explain` was requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
    /// The chunks either side of this one in the same document. Only when `expand` was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neighbors: Option<Neighbors>,
    /// Links between this hit's document and other indexed documents, outgoing first, capped by
    /// `maxLinks`. An annotation: it never changes the ranking.
    pub links: Vec<HitLink>,
    /// How many links were left out for length (0 with `maxLinks: 0`, which reads none).
    pub links_elided: u32,
    /// Set on a hit that `related` reached by following links rather than by matching the query:
    /// the link's words and the path. Such a hit comes after the direct hits; empty on a direct hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    /// A few sentences of the document that say what it is about (extractive, chosen when the
    /// index was built). Only with `includeSummary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Front-matter or JSONL `metadata` of the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional, type = "Record<string, unknown>")]
    pub metadata: Option<serde_json::Value>,
    /// When the document was created (front matter `date`/`created`, else the file's time), ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When the document was last updated (front matter `updated`, else the file's time), ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Whole days since `updatedAt` (never negative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_days: Option<u32>,
    /// True when `ageDays` is at least `staleDays`: the hit may be out of date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
}

/// A range of a hit's `text`, in UTF-16 code units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct MatchRange {
    pub start: u32,
    pub length: u32,
}

/// A cropped excerpt of a hit's text around its match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct Snippet {
    /// The excerpt; "…" marks where it was cropped.
    pub text: String,
    /// Query-term occurrences in the snippet's own text (UTF-16).
    pub highlights: Vec<Highlight>,
}

/// Why a hit is here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Explain {
    /// The retrieval branches that found the hit.
    pub found_by: Vec<SignalName>,
    /// How the score was made: `bm25`, `cosine`, `rrf` or `weighted`.
    pub method: ScoreKind,
    /// The terms that add up to the retrieval score, one a branch.
    pub terms: Vec<ScoreTerm>,
    /// The factor the recency boost multiplied the score by (1 when off).
    pub recency_factor: f32,
    /// The analyzed query terms this hit's text contains.
    pub matched_terms: Vec<String>,
    /// The expansions (`prefix`, `fuzzy`) of query words that this hit's text contains.
    pub expansions: Vec<Expansion>,
}

/// A query word standing for an indexed word it was not: the words a prefix begins (`prefix`),
/// or the words within an edit distance (`fuzzy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Expansion {
    /// The query's word, folded ("instal").
    pub query: String,
    /// The indexed word it reached ("installation"), folded.
    pub word: String,
    /// The term that word is indexed as ("instal"): what the text matched.
    pub term: String,
    pub kind: ExpansionKind,
    /// The factor on this term's BM25, below 1 (an exact match's).
    pub weight: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum ExpansionKind {
    Prefix,
    Fuzzy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum SignalName {
    Lexical,
    Semantic,
}

/// One branch's part of the retrieval score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct ScoreTerm {
    pub signal: SignalName,
    /// The branch's rank (1-based) and raw score.
    pub rank: u32,
    pub score: f32,
    /// What it adds to the fused score: 1/(k + rank) for RRF, weight × score / the best score for
    /// weighted fusion, the raw score for a single branch.
    pub contribution: f32,
}

/// Neighboring chunks of a hit, nearest last in `before` and nearest first in `after`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct Neighbors {
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// A link between two indexed documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct HitLink {
    /// The other document's id.
    pub target_id: String,
    /// What kind of source the other document is.
    pub target_type: DocType,
    /// The other document's title.
    pub title: String,
    /// The link's own words.
    pub text: String,
    /// `out`: this document links to the other; `in`: the other links here.
    pub direction: LinkDirection,
    /// The relationship the link states (HTML `rel`, a Markdown link's title), read in the
    /// direction travelled: on an `out` link, what the other document is to this one, as
    /// written; on an `in` link, what this one is to the other, so a known pair reads inverted
    /// (`next` ↔ `prev`) and any other as `"<rel> of"` ("license of"). Absent when the source
    /// states none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum LinkDirection {
    Out,
    In,
}

/// How `related` reached a hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Via {
    /// The words of the link followed last.
    pub text: String,
    /// Every link's words from the direct hit to this one, joined by " → " (two hops read as a path).
    pub path: String,
    /// The id of the direct hit the path starts from.
    pub from_id: String,
    /// How many links were followed (1 or 2).
    pub hops: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum ScoreKind {
    Bm25,
    Cosine,
    Rrf,
    Weighted,
    Reranker,
}

/// Where a hit's text came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    /// The document's id: a JSONL record's own `_id`/`id`, or the file's path under its input.
    pub doc_id: String,
    pub doc_type: DocType,
    /// What the text is: a section of a document, a web page's body, a PDF page, a record's
    /// field, a text file's passage. A recalled record and a manual's section are different
    /// kinds of claim.
    pub kind: CitationKind,
    pub title: String,
    /// Who wrote the document, when its source names someone (front matter or JSONL `author`,
    /// `<meta name="author">`): a note by someone, not the document restating itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Where a reader opens the document, with `#anchor` of the heading when the source has one.
    #[serde(skip_serializing_if = "Option::is_none")]
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
    /// First page of the text, when the source has pages (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_from: Option<u32>,
    /// Last page of the text, when the source has pages; differs from `pageFrom` when the text
    /// straddles a page break.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_to: Option<u32>,
}

/// What a hit's text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum CitationKind {
    /// A passage of a Markdown document, under its headings (`headingPath`).
    Section,
    /// The body of an HTML page (its `<main>`, `<article>` or marked content), under its headings.
    Page,
    /// Text of a PDF, on the pages `pageFrom`..`pageTo`.
    PdfPage,
    /// The `text` field of a JSONL record.
    RecordField,
    /// A passage of a plain text file.
    Passage,
}

impl CitationKind {
    pub fn of(doc_type: DocType) -> Self {
        match doc_type {
            DocType::Md => CitationKind::Section,
            DocType::Html => CitationKind::Page,
            DocType::Pdf => CitationKind::PdfPage,
            DocType::Jsonl => CitationKind::RecordField,
            DocType::Text => CitationKind::Passage,
        }
    }
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
    /// BM25 of the chunk (its title, headings and text) plus BM25 of its whole document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical: Option<LexicalSignal>,
    /// Cosine similarity of the query's and the chunk's embeddings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticSignal>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct LexicalSignal {
    /// 1-based rank among the lexical candidates.
    pub rank: u32,
    /// BM25 score: the chunk's own plus `documentScore`.
    pub score: f32,
    /// The part of `score` that is the BM25 of the chunk's whole document, so a passage of a
    /// document about the query ranks above an equal passage of one that mentions it in passing.
    pub document_score: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
pub struct SemanticSignal {
    /// 1-based rank among the semantic candidates.
    pub rank: u32,
    /// Cosine similarity in [-1, 1].
    pub score: f32,
    /// Cosine distance, 1 - score: lower is closer.
    pub distance: f32,
    /// What embedded the query: `"model"`, `"static"` (while the model downloads) or `"given"`.
    pub encoder: Encoder,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_read_their_own_keys_and_strict_search_options() {
        let context =
            ContextOptions::from_json(json!({"tokenBudget": 50, "mode": "lexical"})).unwrap();
        assert_eq!(
            (context.token_budget, context.search.limit),
            (50, 20),
            "the type's own default limit"
        );
        assert_eq!(context.search.mode, SearchMode::Lexical);
        let documents = DocumentSearchOptions::from_json(
            json!({"limit": 3, "facets": ["tag"], "prefix": true}),
        )
        .unwrap();
        assert_eq!((documents.search.limit, documents.search.prefix), (3, true));
        assert_eq!(documents.facets, ["tag"]);
        for bad in [json!({"limt": 3}), json!({"facets": "tag"}), json!([1])] {
            assert!(
                DocumentSearchOptions::from_json(bad.clone()).is_err(),
                "{bad}"
            );
            assert!(ContextOptions::from_json(bad.clone()).is_err(), "{bad}");
        }
        let err = SearchOptions::from_json(json!({"limt": 3}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `limt`"), "{err}");
        assert!(SearchOptions::from_json(json!([5])).is_err());
        // `limit` is the only search option whose default a type changes (`from_json` keeps it).
        let limited = |limit| SearchOptions {
            limit,
            ..SearchOptions::default()
        };
        assert_eq!(ContextOptions::default().search, limited(20));
        assert_eq!(DocumentSearchOptions::default().search, limited(10));
    }
}
