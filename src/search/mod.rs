//! Search: retrieve candidates from each signal, fuse them, and turn the winners into
//! `SearchHit`s. The same code answers the CLI and the browser; the caller supplies the query
//! embedding (and the model, for semantic `match` sentences) when the model is loaded.
//!
//! `retrieve` is the ranking (filter → lexical and vector retrieval → fusion → optional recency
//! boost); `hits` dresses ranked candidates as `SearchHit`s, doing only the work the options ask
//! for. `documents` and `context` build on the same two steps.

pub mod context;
pub mod documents;
pub mod expand;
pub mod filter;
pub mod fuse;
pub mod highlight;
pub mod order;

#[cfg(feature = "model")]
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::hit::{
    Citation, CitationKind, Expansion, Explain, HitLink, LexicalSignal, LinkDirection, Neighbors,
    ScoreKind, ScoreTerm, SearchHit, SearchMode, SearchOptions, SemanticSignal, SignalName,
    Signals, Via,
};
#[cfg(feature = "model")]
use crate::index::vector::dot;
use crate::index::Index;
pub use fuse::Candidate;

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
    #[cfg(feature = "model")]
    pub embedder: Option<&'a Embedder>,
    /// Now, in milliseconds since 1970 (for ages and the recency boost).
    pub now_ms: f64,
    /// The cross-encoder `rerank` scores with, once the shell has loaded the one it names.
    pub reranker: Option<&'a dyn CrossEncoder>,
    /// The query's expansion, when the caller made it already (for the encoders' corrected
    /// text); otherwise the search makes it.
    pub expanded: Option<&'a expand::Expanded>,
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

/// Runs one search.
pub fn search(
    index: &Index,
    query: &str,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Vec<SearchHit>> {
    let retrieved = retrieve(index, query, context, options)?;
    let direct: Vec<&Candidate> = retrieved
        .candidates
        .iter()
        .take(options.limit as usize)
        .collect();
    let mut hits = build_hits(index, &retrieved, &direct, context, options)?;
    if options.related {
        let direct_docs: Vec<u32> = direct
            .iter()
            .map(|c| index.chunks[c.chunk as usize].doc)
            .collect();
        hits.extend(related_hits(
            index,
            &retrieved,
            &hits,
            &direct_docs,
            context,
            options,
        )?);
    }
    Ok(hits)
}

/// Ranks the index's chunks for a query: every candidate of the pool, best first, reranked
/// when `rerank` asks.
pub fn retrieve(
    index: &Index,
    query: &str,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Retrieved> {
    let mut retrieved = fused(index, query, context, options)?;
    rerank_retrieved(index, query, &mut retrieved, options, context)?;
    Ok(retrieved)
}

/// Reranks a ranking when `rerank` asks (once: `searchDocuments` fuses several pools first).
pub fn rerank_retrieved(
    index: &Index,
    query: &str,
    retrieved: &mut Retrieved,
    options: &SearchOptions,
    context: QueryContext<'_>,
) -> Result<()> {
    if let Some(asked) = &options.rerank {
        rerank(index, query, &mut retrieved.candidates, asked, context)?;
        retrieved.score_kind = ScoreKind::Reranker;
    }
    Ok(())
}

/// The fused (and recency-boosted) ranking, before any reranking.
pub fn fused(
    index: &Index,
    query: &str,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Retrieved> {
    validate(options)?;
    check_summaries(options, &index.settings)?;
    let filter = options
        .filter
        .as_ref()
        .map(filter::Filter::parse)
        .transpose()?;
    let mut query_terms = query_terms(index, query)?;
    let made;
    let expanded = match context.expanded {
        Some(expanded) => expanded,
        None => {
            made = expand::expand(&index.lexical, &index.analyzer(), query, options);
            &made
        }
    };
    for e in &expanded.expansions {
        if !query_terms.contains(&e.term) {
            query_terms.push(e.term.clone());
        }
    }
    let pool = pool(options);
    let documents = filter.map(|f| f.document_mask(index));
    let mask = documents.as_ref().map(|d| {
        index
            .chunks
            .iter()
            .map(|c| d[c.doc as usize])
            .collect::<Vec<bool>>()
    });
    let mask = mask.as_deref();

    // Nothing to match and nothing to mean: an empty, stop-word or punctuation query.
    let nothing = query_terms.is_empty() && !context.vector_from_caller;
    let semantic_vector = semantic_vector(index.vectors.is_some(), context, options, nothing)?;
    if nothing {
        return Ok(Retrieved {
            candidates: Vec::new(),
            score_kind: ScoreKind::Bm25,
            query_terms,
            expansions: Vec::new(),
            documents,
        });
    }
    let lexical_ran = options.mode != SearchMode::Semantic;
    let lexical = if lexical_ran {
        index.lexical.search_words(&expanded.words, pool, mask)
    } else {
        Vec::new()
    };
    let semantic = match (semantic_vector, &index.vectors) {
        (Some(v), Some(vectors)) => vectors.search(v, pool, mask)?,
        _ => Vec::new(),
    };

    let (mut candidates, score_kind) =
        fuse_signals(&lexical, &semantic, lexical_ran, semantic_vector.is_some(), options);
    boost_recency(&mut candidates, options, &|chunk| {
        age_days(index, index.chunks[chunk as usize].doc, context.now_ms)
    });
    Ok(Retrieved {
        candidates,
        score_kind,
        query_terms,
        expansions: expanded.expansions.clone(),
        documents,
    })
}

/// Scores the best `topN` candidates with the cross-encoder and reorders them by its relevance
/// (ties keep their order); the candidates after them keep their order with score 0, so one
/// scale (and one cutoff) holds for the whole response: their retrieval score stays in
/// `retrievalScore`. The recency boost has ordered the pool the top N are taken from; their
/// score is the cross-encoder's alone.
fn rerank(
    index: &Index,
    query: &str,
    candidates: &mut [Candidate],
    rerank: &crate::hit::Rerank,
    context: QueryContext<'_>,
) -> Result<()> {
    let reranker = context.reranker.ok_or_else(|| not_loaded(&rerank.model))?;
    let top = (rerank.top_n as usize).min(candidates.len());
    let texts: Vec<String> = candidates[..top]
        .iter()
        .map(|c| {
            let chunk = &index.chunks[c.chunk as usize];
            crate::index::indexed_text(index.document_of(chunk), chunk)
        })
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let scores = reranker.relevance(query, &texts)?;
    if scores.len() != top {
        return Err(Error::Model(format!(
            "the cross-encoder gave {} scores for {top} texts",
            scores.len()
        )));
    }
    reorder(candidates, &scores)
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

/// Reorders the first `scores.len()` candidates by the cross-encoder's `scores` (ties keep
/// their order) and gives those after them score 0 (see `rerank`).
pub(crate) fn reorder(candidates: &mut [Candidate], scores: &[f32]) -> Result<()> {
    let top = scores.len().min(candidates.len());
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::Model("the cross-encoder gave a score that is not a number".into()));
    }
    for (c, &s) in candidates.iter_mut().zip(scores) {
        c.score = s;
        c.reranker_score = Some(s);
    }
    candidates[top..].iter_mut().for_each(|c| c.score = 0.0);
    order::sort_by(&mut candidates[..top], |a, b| b.score.total_cmp(&a.score));
    Ok(())
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
pub(crate) fn check_summaries(options: &SearchOptions, settings: &crate::index::IndexSettings) -> Result<()> {
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

/// The query's terms, after checking the query is within the limits.
pub fn query_terms(index: &Index, query: &str) -> Result<Vec<String>> {
    analyze_query(&index.analyzer(), query)
}

/// [`query_terms`] with the analyzer an index was built with.
pub(crate) fn analyze_query(analyzer: &crate::analyze::Analyzer, query: &str) -> Result<Vec<String>> {
    let chars = query.chars().count();
    if chars > limits::QUERY_CHARS {
        return Err(Error::InvalidInput(format!(
            "the query has {chars} characters; cairn searches at most {} (shorten it)",
            limits::QUERY_CHARS
        )));
    }
    let terms = analyzer.terms(query);
    if terms.len() > limits::QUERY_TERMS {
        return Err(Error::InvalidInput(format!(
            "the query has {} terms (stop words left out); cairn searches at most {} (shorten it)",
            terms.len(),
            limits::QUERY_TERMS
        )));
    }
    Ok(terms)
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
        return bad(format!("rrfK must be a number >= 0, not {}", crate::error::number(options.rrf_k)));
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
            c.recency_factor =
                1.0 + options.recency_weight * (-(age as f32) / options.recency_half_life_days).exp2();
            c.score *= c.recency_factor;
        }
    }
    top_k(candidates, usize::MAX, |c| c.score, |c| c.chunk);
}

/// Builds the hits for `chosen` candidates (in order), doing only what the options ask for.
pub fn build_hits(
    index: &Index,
    retrieved: &Retrieved,
    chosen: &[&Candidate],
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Vec<SearchHit>> {
    let mut hits: Vec<SearchHit> = chosen
        .iter()
        .enumerate()
        .map(|(i, c)| base_hit(index, c, i as u32 + 1, retrieved, context, options))
        .collect();
    if options.highlight {
        add_matches(index, retrieved, chosen, &mut hits, context, options)?;
    }
    Ok(hits)
}

fn base_hit(
    index: &Index,
    candidate: &Candidate,
    rank: u32,
    retrieved: &Retrieved,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> SearchHit {
    let chunk = &index.chunks[candidate.chunk as usize];
    let document = index.document_of(chunk);
    let url = document.url.as_ref().map(|url| match &chunk.anchor {
        Some(anchor) if !url.contains('#') => format!("{url}#{anchor}"),
        _ => url.clone(),
    });
    let age_days = age_days(index, chunk.doc, context.now_ms);
    let (links, links_elided) = links_of(index, chunk.doc, options.max_links as usize, retrieved);
    SearchHit {
        id: chunk_id(index, candidate.chunk),
        rank,
        score: candidate.score,
        score_kind: retrieved.score_kind,
        text: display_text(index, candidate.chunk, options),
        highlights: Vec::new(),
        match_range: None,
        snippet: None,
        citation: Citation {
            doc_id: document.id.clone(),
            doc_type: document.doc_type,
            kind: CitationKind::of(document.doc_type),
            title: document.title.clone(),
            author: document.author.clone(),
            url,
            heading_path: chunk.heading_path.clone(),
            chunk_index: chunk.chunk_index,
            line_start: chunk.line_start,
            line_end: chunk.line_end,
            source_offset: chunk.source_offset,
            page_from: chunk.pages.map(|p| p.0),
            page_to: chunk.pages.map(|p| p.1),
        },
        signals: Signals {
            lexical: candidate.lexical.map(|(rank, score)| LexicalSignal {
                rank,
                score,
                document_score: candidate.lexical_document_score,
            }),
            semantic: candidate.semantic.map(|(rank, score)| SemanticSignal {
                rank,
                score,
                distance: 1.0 - score,
                encoder: context.encoder,
            }),
        },
        retrieval_rank: (candidate.retrieval_rank > 0).then_some(candidate.retrieval_rank),
        retrieval_score: (candidate.retrieval_rank > 0).then_some(candidate.retrieval_score),
        explain: options
            .explain
            .then(|| explain(index, candidate, retrieved)),
        neighbors: (options.expand > 0).then(|| neighbors(index, candidate.chunk, options.expand)),
        links,
        links_elided,
        via: None,
        summary: options
            .include_summary
            .then(|| index.summary(chunk.doc))
            .flatten(),
        reranker_score: candidate.reranker_score,
        metadata: index.metadata(chunk.doc).cloned(),
        created_at: document.created.as_ref().map(|t| t.iso.clone()),
        updated_at: document.updated.as_ref().map(|t| t.iso.clone()),
        age_days,
        stale: age_days.map(|a| a >= options.stale_days),
    }
}

/// `<docId>#<chunkIndex>`.
pub fn chunk_id(index: &Index, chunk: u32) -> String {
    let c = &index.chunks[chunk as usize];
    format!("{}#{}", index.document_of(c).id, c.chunk_index)
}

/// The chunk's text, prefixed by its heading path when asked.
fn display_text(index: &Index, chunk: u32, options: &SearchOptions) -> String {
    let c = &index.chunks[chunk as usize];
    if options.prefix_headings && !c.heading_path.is_empty() {
        format!("{}\n\n{}", c.heading_path.join(" › "), c.text)
    } else {
        c.text.clone()
    }
}

/// Highlights, the best-matching sentence and a snippet for each hit.
fn add_matches(
    index: &Index,
    retrieved: &Retrieved,
    chosen: &[&Candidate],
    hits: &mut [SearchHit],
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<()> {
    let analyzer = index.analyzer();
    let idf = |t: &str| index.lexical.idf(t).unwrap_or(0.0);
    let mut per_hit = Vec::with_capacity(hits.len());
    for hit in hits.iter() {
        let matches = highlight::term_matches(&analyzer, &hit.text, &retrieved.query_terms);
        let sentences = highlight::sentences(&hit.text);
        let best = highlight::best_lexical_sentence(&sentences, &matches, idf);
        per_hit.push((matches, sentences, best));
    }
    #[cfg(feature = "model")]
    closest_sentences(chosen, hits, &mut per_hit, context)?;
    #[cfg(not(feature = "model"))]
    let _ = (chosen, context);
    for (hit, (matches, sentences, best)) in hits.iter_mut().zip(per_hit) {
        let focus = best
            .or((!sentences.is_empty()).then_some(0))
            .map(|b| sentences[b].clone());
        if let Some(focus) = &focus {
            hit.match_range = Some(highlight::match_range(&hit.text, focus));
            hit.snippet = Some(highlight::snippet(
                &hit.text,
                focus,
                &matches,
                options.snippet_length as usize,
            ));
        }
        hit.highlights = highlight::to_utf16(&hit.text, &matches, 0);
    }
    Ok(())
}

/// For hits with no query term in them (found by meaning), the sentence closest in meaning to
/// the query. The model reads one batch per search, of at most `limits::SENTENCE_BUDGET_CHARS`
/// (each sentence cut at `limits::SENTENCE_CHARS`), filled from the best-ranked such hits; a
/// hit past that budget (or, with the 8-bit model in a browser, one whose sentences need word
/// rows not fetched yet) keeps its first sentence. So highlighting costs at most about one model
/// call, whatever the limit.
#[cfg(feature = "model")]
fn closest_sentences(
    chosen: &[&Candidate],
    hits: &[SearchHit],
    per_hit: &mut [(
        Vec<highlight::TermMatch>,
        Vec<std::ops::Range<usize>>,
        Option<usize>,
    )],
    context: QueryContext<'_>,
) -> Result<()> {
    let (Some(embedder), Some(query)) = (context.embedder, context.vector) else {
        return Ok(());
    };
    let mut pending: Vec<usize> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut longest = 0;
    for (i, (_, sentences, best)) in per_hit.iter().enumerate() {
        if best.is_some() || chosen[i].semantic.is_none() || sentences.len() < 2 {
            continue;
        }
        let text = &hits[i].text;
        let these: Vec<&str> = sentences
            .iter()
            .map(|r| highlight::truncate_chars(&text[r.clone()], limits::SENTENCE_CHARS))
            .collect();
        // The 8-bit model in a browser holds only the word rows fetched so far: a hit whose
        // sentences need others keeps its first sentence.
        if !these.iter().all(|s| embedder.missing_rows(s).is_ok_and(|m| m.is_empty())) {
            continue;
        }
        let widest = these
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
            .max(longest);
        if (texts.len() + these.len()) * widest > limits::SENTENCE_BUDGET_CHARS {
            continue;
        }
        longest = widest;
        pending.push(i);
        texts.extend(these);
    }
    let vectors = embedder.embed_batch(&texts)?;
    let mut next = 0;
    for i in pending {
        let n = per_hit[i].1.len();
        let scores = vectors[next..next + n].iter().map(|v| dot(query, v));
        next += n;
        per_hit[i].2 = scores
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(j, _)| j);
    }
    Ok(())
}

fn explain(index: &Index, candidate: &Candidate, retrieved: &Retrieved) -> Explain {
    let branches = [
        (SignalName::Lexical, candidate.lexical),
        (SignalName::Semantic, candidate.semantic),
    ];
    let found_by: Vec<SignalName> = branches
        .iter()
        .filter(|(_, s)| s.is_some())
        .map(|(n, _)| *n)
        .collect();
    let terms = branches
        .iter()
        .filter_map(|(signal, s)| s.map(|(rank, score)| (*signal, rank, score)))
        .map(|(signal, rank, score)| {
            let contribution = if signal == SignalName::Lexical {
                candidate.contributions.0
            } else {
                candidate.contributions.1
            };
            ScoreTerm {
                signal,
                rank,
                score,
                contribution,
            }
        })
        .collect();
    let text = crate::index::indexed_text(
        index.document_of(&index.chunks[candidate.chunk as usize]),
        &index.chunks[candidate.chunk as usize],
    );
    let present = index.analyzer().terms(&text);
    let mut matched_terms: Vec<String> = Vec::new();
    for term in retrieved.query_terms.iter().filter(|t| present.contains(t)) {
        if !matched_terms.contains(term) {
            matched_terms.push(term.clone());
        }
    }
    let expansions = retrieved
        .expansions
        .iter()
        .filter(|e| present.contains(&e.term))
        .cloned()
        .collect();
    Explain {
        found_by,
        method: retrieved.score_kind,
        terms,
        recency_factor: candidate.recency_factor,
        matched_terms,
        expansions,
    }
}

fn neighbors(index: &Index, chunk: u32, n: u32) -> Neighbors {
    let range = index.document_chunks(chunk);
    let before = (chunk.saturating_sub(n).max(range.start)..chunk)
        .map(|c| index.chunks[c as usize].text.clone())
        .collect();
    let after = (chunk + 1..chunk.saturating_add(1).saturating_add(n).min(range.end))
        .map(|c| index.chunks[c as usize].text.clone())
        .collect();
    Neighbors { before, after }
}

/// The document's links to documents the filter lets through, outgoing first, at most `max`;
/// and how many of those were left out.
fn links_of(index: &Index, doc: u32, max: usize, retrieved: &Retrieved) -> (Vec<HitLink>, u32) {
    let link = |other: u32, l: &crate::index::DocLink, direction| {
        let document = &index.documents[other as usize];
        HitLink {
            target_id: document.id.clone(),
            target_type: document.doc_type,
            title: document.title.clone(),
            text: l.text.clone(),
            direction,
            rel: l.rel.as_deref().map(|rel| match direction {
                LinkDirection::Out => rel.to_string(),
                LinkDirection::In => inverse_rel(rel),
            }),
        }
    };
    let outgoing = index
        .links_from(doc)
        .iter()
        .filter(|l| retrieved.allows(l.to))
        .map(|l| link(l.to, l, LinkDirection::Out));
    let incoming = index
        .links_to(doc)
        .filter(|l| retrieved.allows(l.from))
        .map(|l| link(l.from, l, LinkDirection::In));
    let all: Vec<HitLink> = outgoing.chain(incoming).collect();
    let elided = all.len().saturating_sub(max) as u32;
    (all.into_iter().take(max).collect(), elided)
}

/// A stated relationship read from its target's side: HTML's paired link types inverted,
/// anything else as "<rel> of".
fn inverse_rel(rel: &str) -> String {
    const PAIRS: [(&str, &str); 5] = [
        ("next", "prev"),
        ("prev", "next"),
        ("previous", "next"),
        ("parent", "child"),
        ("child", "parent"),
    ];
    // Several paired link types (`rel="next parent"`) are each inverted.
    let paired = |t: &str| {
        PAIRS
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(t))
            .map(|(_, b)| *b)
    };
    let inverted: Option<Vec<&str>> = rel.split(' ').map(paired).collect();
    match inverted {
        Some(tokens) => tokens.join(" "),
        None => format!("{rel} of"),
    }
}

/// Hits reached by following links (out of each direct hit's document, up to `relatedHops`),
/// after the direct hits, without touching their scores. A linked document is represented by
/// its best-ranked chunk in the pool, else its first chunk.
pub(crate) fn related_hits(
    index: &Index,
    retrieved: &Retrieved,
    direct: &[SearchHit],
    direct_docs: &[u32],
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Vec<SearchHit>> {
    let mut seen: std::collections::HashSet<u32> = direct_docs.iter().copied().collect();
    let mut found: Vec<(u32, Via)> = Vec::new();
    let mut frontier: Vec<(u32, String, Vec<String>)> = direct
        .iter()
        .zip(direct_docs)
        .map(|(h, &doc)| (doc, h.id.clone(), Vec::new()))
        .collect();
    for hop in 1..=options.related_hops {
        let mut next = Vec::new();
        for (doc, from_id, path) in &frontier {
            for link in index.links_from(*doc) {
                if !retrieved.allows(link.to) || !seen.insert(link.to) {
                    continue;
                }
                let mut path = path.clone();
                path.push(link.text.clone());
                found.push((
                    link.to,
                    Via {
                        text: link.text.clone(),
                        path: path.join(" → "),
                        from_id: from_id.clone(),
                        hops: hop,
                    },
                ));
                next.push((link.to, from_id.clone(), path));
            }
        }
        frontier = next;
    }
    let mut chosen: Vec<Candidate> = Vec::new();
    let mut vias = Vec::new();
    for (doc, via) in found
        .into_iter()
        .take(options.limit.saturating_mul(options.max_links.max(1)) as usize)
    {
        let pooled = retrieved
            .candidates
            .iter()
            .find(|c| index.chunks[c.chunk as usize].doc == doc);
        let candidate = match (pooled, index.first_chunk_of(doc)) {
            (Some(c), _) => c.clone(),
            (None, Some(chunk)) => Candidate::unretrieved(chunk),
            (None, None) => continue,
        };
        chosen.push(candidate);
        vias.push(via);
    }
    let refs: Vec<&Candidate> = chosen.iter().collect();
    let mut hits = build_hits(index, retrieved, &refs, context, options)?;
    for (i, (hit, via)) in hits.iter_mut().zip(vias).enumerate() {
        hit.rank = direct.len() as u32 + i as u32 + 1;
        hit.via = Some(via);
    }
    Ok(hits)
}

/// Keeps the `k` best items, sorted best first; ties go to the lower id, so every target
/// returns the same order.
pub(crate) fn top_k<T>(
    items: &mut Vec<T>,
    k: usize,
    score: impl Fn(&T) -> f32,
    id: impl Fn(&T) -> u32,
) {
    order::top_by(items, k, |a, b| score(b).total_cmp(&score(a)).then_with(|| id(a).cmp(&id(b))));
}
