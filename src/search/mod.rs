//! Search, one engine for every storage: `source` is the seam (what the engine reads of an
//! index: the single file holds it all, a fragmented index names what it still needs);
//! `retrieve` ranks (filter → lexical and vector retrieval → fusion → recency → rerank);
//! `answer` turns a ranking into hits, documents or a prompt's context, dressed by `hits` only
//! as the options ask. The caller brings the query's embedding (and the model, for semantic
//! `match` sentences) when a model is loaded.

pub mod answer;
pub mod context;
pub mod documents;
pub mod expand;
pub mod filter;
pub mod fuse;
pub mod highlight;
mod hits;
pub mod query;
pub mod retrieve;
pub mod source;

use crate::error::{Error, Result};
use crate::hit::{Expansion, ScoreKind, SearchHit, SearchMode, SearchOptions};
use crate::index::Index;
pub use fuse::Candidate;
pub use hits::{build_hits, chunk_id};
pub use query::Query;
pub use source::{Need, Source, Step, Whole};

/// A search of the whole index `index` (no static tier): its hits.
pub fn search(
    index: &Index,
    query: &str,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Vec<SearchHit>> {
    let query = Query::new(&index.analyzer(), query)?;
    answered(answer::search(
        &Whole {
            index,
            statics: None,
        },
        &query,
        context,
        options,
    )?)
}

/// The answer of a source that never waits (the single file); a cross-encoder's scores it asks
/// for mean the one `rerank` names is not loaded.
pub fn answered<T>(step: Step<T>) -> Result<T> {
    match step {
        Step::Done(answer) => Ok(answer),
        Step::Score(request) => Err(not_loaded(&request.model)),
        Step::Need(..) => Err(Error::InvalidIndex(
            "the index asked for parts of itself it should hold; build it again".into(),
        )),
    }
}

/// What the caller brings besides the query text.
#[derive(Clone, Copy, Default)]
pub struct QueryContext<'a> {
    /// The query's embedding, when the model is loaded.
    pub vector: Option<&'a [f32]>,
    /// Whether the caller brought `vector` itself (`searchWithVector`): then a query text with no
    /// terms still searches by the vector; otherwise such a query has no hits.
    pub vector_from_caller: bool,
    /// What made `vector`.
    pub encoder: crate::hit::Encoder,
    /// The model, for finding the closest sentence of a hit only the semantic signal found.
    pub embedder: Option<&'a dyn SentenceEncoder>,
    /// Now, in milliseconds since 1970 (for ages and the recency boost).
    pub now_ms: f64,
    /// The cross-encoder `rerank` scores with, once the shell has loaded the one it names.
    pub reranker: Option<&'a dyn CrossEncoder>,
    /// The query's expansion, when the caller made it already (for the encoders' corrected
    /// text); otherwise the search makes it.
    pub expanded: Option<&'a expand::Expanded>,
}

impl<'a> QueryContext<'a> {
    /// A query the page's model embedded (`vector`), or that nothing embedded (`None`): no
    /// models for sentences or reranking, the search makes the expansion, now as `options` says.
    pub fn new(vector: Option<&'a [f32]>, options: &SearchOptions) -> Self {
        QueryContext {
            vector,
            vector_from_caller: false,
            encoder: crate::hit::Encoder::Model,
            embedder: None,
            now_ms: options.now.unwrap_or_else(now_ms),
            reranker: None,
            expanded: None,
        }
    }

    /// A query whose vector the caller brought (`searchWithVector`).
    pub fn given(vector: &'a [f32], options: &SearchOptions) -> Self {
        QueryContext {
            vector_from_caller: true,
            encoder: crate::hit::Encoder::Given,
            ..QueryContext::new(Some(vector), options)
        }
    }

    /// With the models the shell has loaded: the sentence model, and the cross-encoder when it
    /// is the one the options name.
    pub fn with_models(
        self,
        embedder: Option<&'a dyn SentenceEncoder>,
        reranker: Option<&'a dyn CrossEncoder>,
    ) -> Self {
        QueryContext {
            embedder,
            reranker,
            ..self
        }
    }
}

/// What embeds a hit's sentences to find the one closest to the query by meaning: the sentence
/// model (`embed::Embedder`), or a stand-in in tests.
pub trait SentenceEncoder {
    /// Whether `text` can be embedded now (the browser's 8-bit model holds only the word rows
    /// fetched so far).
    fn can_embed(&self, text: &str) -> bool;
    /// The unit vectors of `texts`, in order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// What reranks: a cross-encoder's relevance in [0, 1] of each text to the query
/// (`rerank::Reranker`, or a stand-in in tests).
pub trait CrossEncoder {
    fn relevance(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>>;
}

/// The largest values the options and the query may take; beyond them a search is an error
/// that says so (`docs/limits.md`). Each bounds work or memory that grows with it.
pub mod limits {
    /// Characters of a query (a pasted paragraph fits; CISI's longest query has 2,023).
    pub const QUERY_CHARS: usize = 16_384;
    /// Terms of a query, after stop words are dropped (Lucene's classic clause limit).
    pub const QUERY_TERMS: usize = 1024;
    /// `rerank.topN`: a cross-encoder call a candidate.
    pub const RERANK_TOP_N: u32 = 1000;
    /// `limit`.
    pub const LIMIT: u32 = 1000;
    /// `candidates`: the pool each signal contributes.
    pub const CANDIDATES: u32 = 100_000;
    /// `snippetLength`, in characters.
    pub const SNIPPET_LENGTH: u32 = 10_000;
    /// `expand`: neighbors either side of a hit.
    pub const EXPAND: u32 = 100;
    /// `maxLinks`.
    pub const MAX_LINKS: u32 = 1000;
    /// Characters of sentences the model reads per search to find the closest sentence of hits
    /// only the semantic signal found, counted as the padded batch (sentences × the longest):
    /// about one 256-token model call. Hits past it keep their first sentence as `match`. Each
    /// sentence is cut at `SENTENCE_CHARS`.
    pub const SENTENCE_BUDGET_CHARS: usize = 1200;
    pub const SENTENCE_CHARS: usize = 300;
}

/// A ranking: the fused candidates, best first, and how they were scored.
pub struct Retrieved {
    pub candidates: Vec<Candidate>,
    pub score_kind: ScoreKind,
    /// The analyzed query terms, then the terms expansions reached: what highlights mark.
    pub query_terms: Vec<String>,
    /// The expansions (`prefix`, `fuzzy`) the lexical signal searched.
    pub expansions: Vec<Expansion>,
    /// Which documents the `filter` lets through (None: every one). Links to the others are
    /// left out and `related` never reaches them.
    pub documents: Option<Vec<bool>>,
}

impl Retrieved {
    pub fn allows(&self, doc: u32) -> bool {
        self.documents.as_ref().is_none_or(|d| d[doc as usize])
    }
}

/// The error of a `rerank` whose cross-encoder is not loaded.
pub(crate) fn not_loaded(model: &str) -> Error {
    Error::InvalidInput(format!(
        "the cross-encoder {model:?} is not loaded, so rerank cannot run; load it first (loadReranker in the browser, --rerank on the command line)"
    ))
}

/// A cross-encoder's name as `rerank.model` and loaders compare it: without a trailing `/`.
pub fn canonical_model(name: &str) -> String {
    name.trim_end_matches('/').to_string()
}

/// The query vector a search uses: the caller's, when the index has vectors and the mode asks
/// for meaning; an error for a semantic search that cannot run.
pub(crate) fn semantic_vector<'a>(
    has_vectors: bool,
    context: QueryContext<'a>,
    options: &SearchOptions,
    nothing: bool,
) -> Result<Option<&'a [f32]>> {
    match (has_vectors, context.vector) {
        (false, _) if options.mode == SearchMode::Semantic => Err(Error::InvalidInput(
            "this index has no embeddings, so it cannot answer a semantic search; rebuild it without --no-embed, or search with mode \"lexical\"".into(),
        )),
        (true, None) if options.mode == SearchMode::Semantic && !nothing => Err(Error::InvalidInput(
            "the embedding model is not loaded yet, or the word rows of this query's tokens (the 8-bit model: fetch them with modelRows and addModelRow), so a semantic search cannot run; wait for the model (or search with mode \"hybrid\", which answers lexically until it arrives)".into(),
        )),
        (true, Some(v)) if options.mode != SearchMode::Lexical => Ok(Some(v)),
        _ => Ok(None),
    }
}

/// One ranking from the signals that ran, each candidate with its retrieval rank and score.
pub(crate) fn fuse_signals(
    lexical: &[crate::index::lexical::LexicalHit],
    semantic: &[crate::index::vector::ScoredChunk],
    lexical_ran: bool,
    semantic_ran: bool,
    options: &SearchOptions,
) -> (Vec<Candidate>, ScoreKind) {
    let (mut candidates, score_kind) = if lexical_ran && semantic_ran {
        (
            fuse::fuse(lexical, semantic, options),
            fuse::score_kind(options.fusion),
        )
    } else if semantic_ran {
        (fuse::single(&[], semantic), ScoreKind::Cosine)
    } else {
        (fuse::single(lexical, &[]), ScoreKind::Bm25)
    };
    for (i, c) in candidates.iter_mut().enumerate() {
        c.retrieval_rank = i as u32 + 1;
        c.retrieval_score = c.score;
    }
    (candidates, score_kind)
}

/// `includeSummary` on an index built without summaries is an error that says to rebuild.
pub(crate) fn check_summaries(
    options: &SearchOptions,
    settings: &crate::index::IndexSettings,
) -> Result<()> {
    if options.include_summary && !settings.summaries {
        return Err(Error::InvalidInput(
            "this index has no summaries; rebuild it with `cairn index --summaries` to use includeSummary".into(),
        ));
    }
    Ok(())
}

/// How many candidates each signal contributes before fusion.
pub(crate) fn pool(options: &SearchOptions) -> usize {
    options
        .candidates
        .map(|c| c as usize)
        .unwrap_or(100)
        .max(options.limit as usize)
}

pub(crate) fn validate(options: &SearchOptions) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidInput(m));
    let at_most = |name: &str, value: u32, max: u32| {
        if value > max {
            bad(format!("{name} must be at most {max}, not {value}"))
        } else {
            Ok(())
        }
    };
    if options.limit == 0 {
        return bad("limit must be at least 1".into());
    }
    at_most("limit", options.limit, limits::LIMIT)?;
    at_most(
        "candidates",
        options.candidates.unwrap_or(0),
        limits::CANDIDATES,
    )?;
    at_most(
        "snippetLength",
        options.snippet_length,
        limits::SNIPPET_LENGTH,
    )?;
    at_most("expand", options.expand, limits::EXPAND)?;
    at_most("maxLinks", options.max_links, limits::MAX_LINKS)?;
    for (name, value) in [
        ("maxDocuments", options.max_documents),
        ("maxPerDocument", options.max_per_document),
    ] {
        if value == Some(0) {
            return bad(format!(
                "{name} must be at least 1 (leave it out for any number)"
            ));
        }
    }
    if options.encoder == Some(crate::hit::Encoder::Given) {
        return bad("encoder must be \"model\" or \"static\"; to search with your own vector, call searchWithVector".into());
    }
    if let Some(rerank) = &options.rerank {
        if rerank.top_n == 0 {
            return bad("rerank.topN must be at least 1".into());
        }
        at_most("rerank.topN", rerank.top_n, limits::RERANK_TOP_N)?;
    }
    if options.now.is_some_and(|n| !n.is_finite()) {
        return bad("now must be a finite number of milliseconds since 1970".into());
    }
    if !(options.rrf_k.is_finite() && options.rrf_k >= 0.0) {
        return bad(format!(
            "rrfK must be a number >= 0, not {}",
            crate::error::number(options.rrf_k)
        ));
    }
    if !(0.0..=1.0).contains(&options.semantic_weight) {
        return bad(format!(
            "semanticWeight must be between 0 and 1, not {}",
            crate::error::number(options.semantic_weight)
        ));
    }
    if !(1..=2).contains(&options.related_hops) {
        return bad(format!(
            "relatedHops must be 1 or 2, not {}",
            options.related_hops
        ));
    }
    if !(options.recency_weight.is_finite() && options.recency_weight >= 0.0) {
        return bad(format!(
            "recencyWeight must be a number >= 0, not {}",
            crate::error::number(options.recency_weight)
        ));
    }
    if !(options.recency_half_life_days.is_finite() && options.recency_half_life_days > 0.0) {
        return bad(format!(
            "recencyHalfLifeDays must be a number > 0, not {}",
            crate::error::number(options.recency_half_life_days)
        ));
    }
    Ok(())
}

/// Whole days from the document's update (or creation) to `now_ms`, never negative.
pub fn age_days(index: &Index, doc: u32, now_ms: f64) -> Option<u32> {
    let document = &index.documents[doc as usize];
    let at = document.updated.as_ref().or(document.created.as_ref())?;
    Some(days_since(at.unix_seconds, now_ms))
}

/// Milliseconds since 1970, from the platform's clock.
pub fn now_ms() -> f64 {
    #[cfg(browser)]
    {
        js_sys::Date::now()
    }
    #[cfg(not(browser))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }
}

/// Whole days from `unix_seconds` to `now_ms` (0 for a date in the future).
pub(crate) fn days_since(unix_seconds: i64, now_ms: f64) -> u32 {
    let days = (now_ms / 1000.0 - unix_seconds as f64) / 86_400.0;
    days.max(0.0).floor() as u32
}

/// With `recencyWeight`, multiplies each candidate's score by 1 + weight × 2^(−age / half-life)
/// (the age of its document in days, which `age` gives by chunk; undated documents keep their
/// score) and orders the candidates again.
pub(crate) fn boost_recency(
    candidates: &mut Vec<Candidate>,
    options: &SearchOptions,
    age: &dyn Fn(u32) -> Option<u32>,
) {
    if options.recency_weight <= 0.0 {
        return;
    }
    for c in candidates.iter_mut() {
        if let Some(age) = age(c.chunk) {
            c.recency_factor = 1.0
                + options.recency_weight * (-(age as f32) / options.recency_half_life_days).exp2();
            c.score *= c.recency_factor;
        }
    }
    crate::order::top_k(candidates, usize::MAX, |c| c.score, |c| c.chunk);
}
