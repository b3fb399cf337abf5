//! The options of a search (`SearchOptions` and the types of its fields), and `Options`, how
//! both shells read an options type from JSON.

use serde::{Deserialize, Serialize};
use tsify::Tsify;

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

/// Which signals a search uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Tsify)]
#[cfg_attr(not(browser), derive(clap::ValueEnum))]
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
#[cfg_attr(not(browser), derive(clap::ValueEnum))]
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
    /// The hits of at most this many documents (those of the best hits): a hit of another
    /// document is left out, as a results list of that many pages would drop it (default: any
    /// number). A fragmented index fetches no text for what is left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_documents: Option<u32>,
    /// At most this many hits of one document, its best (default: any number).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_per_document: Option<u32>,
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
    pub rerank: Option<Rerank>,
    /// On a fragmented index, how many vector partitions (nearest centroids first) a semantic
    /// search scans (default: the nearest until they hold about 1,000 chunks, or twice
    /// `candidates` if more, and at least 4); more is more exact and more bytes. A single-file
    /// index ignores it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probes: Option<u32>,
    /// On a fragmented index, how many of the best candidates of the partitions' binary-code
    /// scan are re-scored with their int8 vectors, each fetched by itself (default: in a
    /// semantic search 5 × `limit`, at most the pool: 50 for 10 hits; in a hybrid search 0, the
    /// scan's estimates alone, which save a round of requests and rank as well once fused); the
    /// rest of the pool the semantic signal contributes keeps the scan's estimates. A
    /// single-file index ignores it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rescore: Option<u32>,
    /// Which encoder embeds the query: `"model"` (the sentence model) or `"static"` (the static
    /// tier's rows). Default: the model once it is loaded, the static tier until then.
    #[serde(skip_serializing_if = "Option::is_none")]
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
            max_documents: None,
            max_per_document: None,
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
pub(super) fn read_apart<'de, D: serde::Deserializer<'de>>(
    _: D,
) -> Result<SearchOptions, D::Error> {
    Ok(SearchOptions::default())
}

impl Options for SearchOptions {
    const OWN_KEYS: &'static [&'static str] = &[];

    fn search_mut(&mut self) -> &mut SearchOptions {
        self
    }
}
