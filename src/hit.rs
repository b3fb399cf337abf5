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
    /// rank fusion: a sum of 1/(k + rank), small numbers that are not similarities), `weighted`
    /// (hybrid, the default: a weighted sum of each signal's score as a share of the query's
    /// best, in [0, 1]) or `reranker` (a cross-encoder's relevance in [0, 1], with `rerank`: the
    /// one scale that means the same in every mode, the place for a quality cutoff).
    pub score_kind: ScoreKind,
    /// The cross-encoder's relevance in [0, 1], on the hits `rerank` scored (its `topN`); the
    /// hits after them keep their retrieval order, have none, and `score` 0 (their retrieval
    /// score is in `retrievalScore`), so one cutoff holds for the whole response.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
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
    #[tsify(optional)]
    pub match_range: Option<MatchRange>,
    /// A short excerpt around the match, with its own highlight offsets. With highlighting only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub snippet: Option<Snippet>,
    /// Each retrieval signal that found this hit, with its rank and score there.
    pub signals: Signals,
    /// Where retrieval (fusion) put this hit, before any later reordering (the recency boost,
    /// reranking); compare with `rank` to see what moved it. Absent on a `related` hit no signal retrieved.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub retrieval_rank: Option<u32>,
    /// The retrieval score, before any later reordering.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub retrieval_score: Option<f32>,
    /// Why the hit is here: each branch's rank and score and the fused score's terms. Only when
    /// `explain` was requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub explain: Option<Explain>,
    /// The chunks either side of this one in the same document. Only when `expand` was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub neighbors: Option<Neighbors>,
    /// Links between this hit's document and other indexed documents, outgoing first, capped by
    /// `maxLinks`. An annotation: it never changes the ranking.
    pub links: Vec<HitLink>,
    /// How many links were left out for length.
    pub links_elided: u32,
    /// Set on a hit that `related` reached by following links rather than by matching the query:
    /// the link's words and the path. Such a hit comes after the direct hits; empty on a direct hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub via: Option<Via>,
    /// A few sentences of the document that say what it is about (extractive, chosen when the
    /// index was built). Only with `includeSummary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub summary: Option<String>,
    /// Front-matter or JSONL `metadata` of the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional, type = "Record<string, unknown>")]
    pub metadata: Option<serde_json::Value>,
    /// When the document was created (front matter `date`/`created`, else the file's time), ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub created_at: Option<String>,
    /// When the document was last updated (front matter `updated`, else the file's time), ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub updated_at: Option<String>,
    /// Whole days since `updatedAt` (never negative).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub age_days: Option<u32>,
    /// True when `ageDays` is at least `staleDays`: the hit may be out of date.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
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

/// Typo tolerance: `false` (default), `true` (edit distance 1 for words of 4 to 7 letters, 2
/// from 8), or the largest distance (0 to 2; still 1 under 8 letters). Applies to query words
/// the index does not have.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(untagged)]
pub enum Fuzzy {
    On(bool),
    MaxDistance(u32),
}

impl Default for Fuzzy {
    fn default() -> Self {
        Fuzzy::On(false)
    }
}

impl Fuzzy {
    /// The edit distance allowed for a word of `chars` characters.
    pub fn distance(self, chars: usize) -> u32 {
        let by_length = match chars {
            0..=3 => 0,
            4..=7 => 1,
            _ => 2,
        };
        match self {
            Fuzzy::On(false) => 0,
            Fuzzy::On(true) => by_length,
            Fuzzy::MaxDistance(d) => by_length.min(d),
        }
    }

    /// Whether any word may match with typos.
    pub fn is_on(self) -> bool {
        self.distance(usize::MAX) > 0
    }
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
    #[tsify(optional)]
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
    #[tsify(optional)]
    pub author: Option<String>,
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
    /// First page of the text, when the source has pages (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub page_from: Option<u32>,
    /// Last page of the text, when the source has pages; differs from `pageFrom` when the text
    /// straddles a page break.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
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
    #[tsify(optional)]
    pub lexical: Option<LexicalSignal>,
    /// Cosine similarity of the query's and the chunk's embeddings.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
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
    Rrf,
    /// Weighted sum of each signal's score as a share of the query's best (a cosine below 0
    /// counts as 0): semanticWeight · cosine / best cosine + (1 − semanticWeight) · bm25 / best bm25.
    #[default]
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
    /// How hybrid search fuses the signals (default `weighted`).
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
    /// Compute `highlights`, `match` and `snippet` (default false: on request, so a plain
    /// search does no extra work).
    #[tsify(optional)]
    pub highlight: bool,
    /// Prefix each hit's `text` with its heading path and a blank line, for display; every
    /// offset the hit reports is into the prefixed text (default false).
    #[tsify(optional)]
    pub prefix_headings: bool,
    /// About how many characters a snippet has (default 160).
    #[tsify(optional)]
    pub snippet_length: u32,
    /// Add `explain` to every hit (default false).
    #[tsify(optional)]
    pub explain: bool,
    /// Add `neighbors`: this many chunks either side of each hit (default 0: none).
    #[tsify(optional)]
    pub expand: u32,
    /// Follow links from the direct hits and add the linked documents (with `via`) after them
    /// (default false).
    #[tsify(optional)]
    pub related: bool,
    /// How many links `related` follows from a direct hit: 1 or 2 (default 1).
    #[tsify(optional)]
    pub related_hops: u32,
    /// The most links listed on a hit (default 5); the rest are counted in `linksElided`.
    #[tsify(optional)]
    pub max_links: u32,
    /// Keep only documents whose metadata matches: `{ field: value }` (equal, or contained in an
    /// array field), `{ field: [v1, v2] }` (any of), or `{ field: { gte, gt, lte, lt } }` (a range
    /// of numbers or ISO dates). `createdAt` and `updatedAt` can be filtered too.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional, type = "Record<string, unknown>")]
    pub filter: Option<serde_json::Value>,
    /// A hit whose document is at least this many days old is `stale` (default 365).
    #[tsify(optional)]
    pub stale_days: u32,
    /// Opt-in recency boost: multiply each score by 1 + recencyWeight · 2^(−age / halfLife)
    /// (default 0: off).
    #[tsify(optional)]
    pub recency_weight: f32,
    /// The half-life of the recency boost in days (default 180).
    #[tsify(optional)]
    pub recency_half_life_days: f32,
    /// "Now" for ages, in milliseconds since 1970 (default: the clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub now: Option<f64>,
    /// Search as you type: the last query word, when the query does not end in a space or
    /// punctuation, also matches the indexed words it begins ("instal" → "installation"), below
    /// an exact match (default false; on in `<cairn-search>`).
    #[tsify(optional)]
    pub prefix: bool,
    /// Typo tolerance for query words the index does not have (default false; on in
    /// `<cairn-search>`): see `Fuzzy`.
    #[tsify(optional)]
    pub fuzzy: Fuzzy,
    /// Add each hit's document `summary` (default false).
    #[tsify(optional)]
    pub include_summary: bool,
    /// Rerank the best fused candidates with a cross-encoder (default off): see `Rerank`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub rerank: Option<Rerank>,
    /// On a fragmented index, how many vector partitions (nearest centroids first) a semantic
    /// search scans (default: the nearest until they hold about 1,000 chunks, or twice
    /// `candidates` if more, and at least 4); more is more exact and more bytes. A single-file
    /// index ignores it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub probes: Option<u32>,
    /// On a fragmented index, how many of the best candidates of the partitions' binary-code
    /// scan are re-scored with their int8 vectors, each fetched by itself (default: 5 × `limit`,
    /// at most the pool: 50 for 10 hits); the rest of the pool the semantic signal contributes keeps the scan's
    /// estimates. A single-file index ignores it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub rescore: Option<u32>,
    /// Which encoder embeds the query: `"model"` (the sentence model) or `"static"` (the static
    /// tier's rows). Default: the model once it is loaded, the static tier until then.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub encoder: Option<Encoder>,
}

/// What made the query's vector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum Encoder {
    /// The sentence model (all-MiniLM-L6-v2).
    #[default]
    Model,
    /// The static tier: the weighted mean of the query terms' distilled rows, no transformer.
    Static,
    /// The caller (`searchWithVector`).
    Given,
}

/// Cross-encoder reranking: the `topN` best fused candidates are scored as (query, chunk) pairs
/// by a BERT cross-encoder (`BertForSequenceClassification`); `score` becomes its relevance
/// (the logit's sigmoid, in [0, 1]), `rerankerScore` is set on them, and the hits after them
/// keep their retrieval order with `score` 0. A recency boost orders the pool the top N come
/// from; the reranked score is the cross-encoder's alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rerank {
    /// The cross-encoder: a folder (CLI) or URL (browser) with `config.json`, `tokenizer.json`
    /// and `model.safetensors`. In the browser it must have been loaded (`loadReranker`; the
    /// `Cairn` client loads it on first use).
    pub model: String,
    /// How many of the best fused candidates are reranked (default 50, at most 1000).
    #[serde(default = "Rerank::default_top_n")]
    #[tsify(optional)]
    pub top_n: u32,
}

impl Rerank {
    fn default_top_n() -> u32 {
        50
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            mode: SearchMode::Hybrid,
            fusion: Fusion::Weighted,
            rrf_k: 60.0,
            semantic_weight: 0.5,
            candidates: None,
            highlight: false,
            prefix_headings: false,
            snippet_length: 160,
            explain: false,
            expand: 0,
            related: false,
            related_hops: 1,
            max_links: 5,
            filter: None,
            stale_days: 365,
            recency_weight: 0.0,
            recency_half_life_days: 180.0,
            now: None,
            prefix: false,
            fuzzy: Fuzzy::default(),
            include_summary: false,
            rerank: None,
            probes: None,
            rescore: None,
            encoder: None,
        }
    }
}

/// Options as both shells read them from JSON: an unknown key is an error that names it, not a
/// silent default. The keys an options type adds to `SearchOptions` are listed; the rest are
/// read as strict `SearchOptions` (`serde(flatten)` could not refuse unknown keys, and its
/// deserializer was 8 kB of the gzipped wasm), keeping the type's own default `limit` (the one
/// search option whose default a type changes; a test holds it).
pub trait Options: serde::de::DeserializeOwned + Default {
    /// The keys this type adds to `SearchOptions`.
    const OWN_KEYS: &'static [&'static str];

    /// The search options inside.
    fn search_mut(&mut self) -> &mut SearchOptions;

    fn from_json(value: serde_json::Value) -> Result<Self, serde_json::Error> {
        let serde_json::Value::Object(mut rest) = value else {
            return Err(serde::de::Error::custom(format!(
                "options must be a JSON object, not {value}"
            )));
        };
        if Self::OWN_KEYS.is_empty() {
            return Self::deserialize(serde_json::Value::Object(rest));
        }
        let mut own = serde_json::Map::new();
        for key in Self::OWN_KEYS {
            if let Some(v) = rest.remove(*key) {
                own.insert(key.to_string(), v);
            }
        }
        let limit = (!rest.contains_key("limit")).then(|| Self::default().search_mut().limit);
        let mut options = Self::deserialize(serde_json::Value::Object(own))?;
        let search = options.search_mut();
        *search = SearchOptions::deserialize(serde_json::Value::Object(rest))?;
        if let Some(limit) = limit {
            search.limit = limit;
        }
        Ok(options)
    }
}

/// The `search` of the options that flatten it: `Options::from_json` reads it from the keys the
/// type does not own, so the derived reader leaves it alone.
fn read_apart<'de, D: serde::Deserializer<'de>>(_: D) -> Result<SearchOptions, D::Error> {
    Ok(SearchOptions::default())
}

impl Options for SearchOptions {
    const OWN_KEYS: &'static [&'static str] = &[];

    fn search_mut(&mut self) -> &mut SearchOptions {
        self
    }
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

impl Options for ContextOptions {
    const OWN_KEYS: &'static [&'static str] = &["tokenBudget", "order", "minScore"];

    fn search_mut(&mut self) -> &mut SearchOptions {
        &mut self.search
    }
}

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
    #[tsify(optional)]
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
    #[tsify(optional)]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub updated_at: Option<String>,
    /// The full text (chunks joined by blank lines), with `includeFullDocs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub content: Option<String>,
    /// A few of the document's sentences that say what it is about, with `includeSummary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
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

/// How `buildContext` orders the admitted chunks in the prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "lowercase")]
pub enum ContextOrder {
    /// Best score first.
    #[default]
    Score,
    /// By document, then position in it (reads like the sources).
    Document,
    /// Most recently updated first.
    Recency,
}

/// Options of `buildContext`: every search option, plus the budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase", default)]
pub struct ContextOptions {
    /// The search; its `limit` is how many candidates are considered (default 20). (Read these
    /// options from JSON with `Options::from_json`: the derived reader leaves `search` to it.)
    #[serde(flatten, deserialize_with = "read_apart")]
    pub search: SearchOptions,
    /// The most tokens the prompt may take (default 1000), counted as characters / 4, rounded up.
    #[tsify(optional)]
    pub token_budget: u32,
    /// How admitted chunks are ordered in the prompt (default `score`).
    #[tsify(optional)]
    pub order: ContextOrder,
    /// Candidates scoring below this are not admitted (default: none), on `scoreKind`'s scale.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub min_score: Option<f32>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            search: SearchOptions {
                limit: 20,
                ..SearchOptions::default()
            },
            token_budget: 1000,
            order: ContextOrder::Score,
            min_score: None,
        }
    }
}

/// Why a candidate did not reach the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub enum RejectReason {
    /// Admitting it would pass the token budget.
    OverBudget,
    /// Its score is below `minScore`.
    BelowThreshold,
    /// Its text is the same as an admitted chunk's.
    Duplicate,
}

/// One candidate `buildContext` considered, admitted or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ContextCandidate {
    pub id: String,
    /// 1-based position by score across every candidate (not the prompt order).
    pub rank: u32,
    pub score: f32,
    /// Its fragment's size in tokens (characters / 4).
    pub tokens: u32,
    pub admitted: bool,
    /// Where it sits in the prompt, 0-based; admitted candidates only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub prompt_position: Option<u32>,
    /// The exact text it contributed; admitted candidates only. Joining every admitted
    /// fragment in `promptPosition` order with a blank line ("\n\n") gives `prompt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub prompt_fragment: Option<String>,
    /// Present exactly when `admitted` is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub reason: Option<RejectReason>,
    pub citation: Citation,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tsify(optional)]
    pub updated_at: Option<String>,
}

/// The answer of `buildContext`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Tsify)]
#[serde(rename_all = "camelCase")]
pub struct ContextResponse {
    pub prompt: String,
    /// The prompt's size in tokens (characters / 4).
    pub tokens: u32,
    pub order: ContextOrder,
    pub score_kind: ScoreKind,
    pub candidates: Vec<ContextCandidate>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_read_their_own_keys_and_strict_search_options() {
        let context = ContextOptions::from_json(json!({"tokenBudget": 50, "mode": "lexical"})).unwrap();
        assert_eq!((context.token_budget, context.search.limit), (50, 20), "the type's own default limit");
        assert_eq!(context.search.mode, SearchMode::Lexical);
        let documents =
            DocumentSearchOptions::from_json(json!({"limit": 3, "facets": ["tag"], "prefix": true})).unwrap();
        assert_eq!((documents.search.limit, documents.search.prefix), (3, true));
        assert_eq!(documents.facets, ["tag"]);
        for bad in [json!({"limt": 3}), json!({"facets": "tag"}), json!([1])] {
            assert!(DocumentSearchOptions::from_json(bad.clone()).is_err(), "{bad}");
            assert!(ContextOptions::from_json(bad.clone()).is_err(), "{bad}");
        }
        let err = SearchOptions::from_json(json!({"limt": 3})).unwrap_err().to_string();
        assert!(err.contains("unknown field `limt`"), "{err}");
        assert!(SearchOptions::from_json(json!([5])).is_err());
        // `limit` is the only search option whose default a type changes (`from_json` keeps it).
        let limited = |limit| SearchOptions { limit, ..SearchOptions::default() };
        assert_eq!(ContextOptions::default().search, limited(20));
        assert_eq!(DocumentSearchOptions::default().search, limited(10));
    }
}
