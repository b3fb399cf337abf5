//! Ranking, written once against `Source`: the filter as a mask, the lexical signal (the query's
//! terms, the word being typed completed, typos corrected), the semantic signal (the caller's
//! vector or the static tier's), fusion, the recency boost and reranking. Against a source that
//! fetches, each call goes as far as what is held allows and names the rest: a plain query
//! takes at most three rounds here (terms, typed words, centroids, fields and dates; then the
//! static rows when the static tier embeds it; then typo words, expansions' terms and vector
//! partitions and records as each becomes known).

use super::source::{Held, Need, Source, Step, Wait};
use super::{expand, filter, Candidate, Query, QueryContext, Retrieved};
use crate::error::{Error, Result};
use crate::hit::{Encoder, ScoreKind, SearchMode, SearchOptions};
use crate::index::lexical::LexicalIndex;

/// The ranking of a query, and what the hits are built with.
pub(crate) struct Retrieval<'s> {
    pub retrieved: Retrieved,
    /// The lexical index of the query's terms (None for a query with nothing to search).
    pub lexical: Option<Held<'s, LexicalIndex>>,
    /// The static tier's vector of the query, when it embedded it (`Some(None)`: none of its
    /// terms has a row).
    pub static_encoding: Option<Option<Vec<f32>>>,
}

impl Retrieval<'_> {
    /// A query with nothing to search: no candidates.
    fn empty(query_terms: Vec<String>) -> Self {
        Retrieval {
            retrieved: Retrieved {
                candidates: Vec::new(),
                score_kind: ScoreKind::Bm25,
                query_terms,
                expansions: Vec::new(),
                documents: None,
            },
            lexical: None,
            static_encoding: None,
        }
    }
}

/// The context a search runs in once the static tier has embedded the query, if it did.
pub(crate) fn with_static<'a>(
    context: QueryContext<'a>,
    encoding: &'a Option<Option<Vec<f32>>>,
) -> QueryContext<'a> {
    match encoding {
        Some(vector) => QueryContext {
            vector: vector.as_deref(),
            vector_from_caller: false,
            encoder: Encoder::Static,
            ..context
        },
        None => context,
    }
}

/// The fused (and recency-boosted) candidates, best first, before any reranking.
pub(crate) fn retrieve<'s, S: Source + ?Sized>(
    source: &'s S,
    query: &Query,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Step<Retrieval<'s>>> {
    super::validate(options)?;
    super::check_summaries(options, source.settings())?;
    let filter = options
        .filter
        .as_ref()
        .map(filter::Filter::parse)
        .transpose()?;
    let mut query_terms = query.terms.clone();
    // The word being typed, whose completions are searched: even a lone stop word ("the") may
    // complete to indexed words.
    let typed = query
        .typed
        .as_ref()
        .filter(|t| options.prefix && t.folded.chars().count() >= expand::PREFIX_MIN_CHARS)
        .map(|t| t.folded.clone());
    // No terms of its own (`empty`), and none it could complete to (`nothing`).
    let empty = query_terms.is_empty() && !context.vector_from_caller;
    let nothing = empty && typed.is_none();
    let has_vectors = source.has_vectors();
    // The static tier embeds the query when no vector is given (or it is asked for).
    let use_static = source.statics().is_some()
        && has_vectors
        && options.mode != SearchMode::Lexical
        && !empty
        && match options.encoder {
            Some(Encoder::Static) => true,
            Some(_) => false,
            None => context.vector.is_none(),
        };
    let mut vector = if use_static {
        None
    } else {
        super::semantic_vector(has_vectors, context, options, empty)?
    };
    if nothing {
        return Ok(Step::Done(Retrieval::empty(query_terms)));
    }
    let lexical_ran = options.mode != SearchMode::Semantic;

    // What every later step reads: the query's terms, the words being typed, the filter's
    // fields, the dates, and what a vector search needs first.
    let mut need = Need::default();
    if lexical_ran || options.highlight || use_static {
        source.want_terms(&mut query_terms.iter().map(String::as_str), &mut need);
    }
    // The static rows' buckets come with the terms, found by the terms' text.
    if let (true, true, Some(table)) = (use_static, source.fetches(), source.statics()) {
        need.rows = table.wanted(query_terms.iter().map(String::as_str));
    }
    let mut prefixes: Vec<String> = typed.into_iter().collect();
    for p in &prefixes {
        source.want_words(p, &mut need);
    }
    if vector.is_some() || use_static {
        source.want_vectors(&mut need);
    }
    if let Some(v) = vector {
        source.want_nearest(v, options, &mut need);
    }
    for field in filter.iter().flat_map(|f| f.fields()) {
        source.want_field(field, &mut need);
    }
    if options.recency_weight > 0.0 {
        source.want_dates(&mut need);
    }
    if let Some(wait) = need.wait() {
        return Ok(wait.widen());
    }
    let documents = filter.map(|f| {
        (0..source.document_count() as u32)
            .map(|doc| f.matches_values(&|field| source.field_value(doc, field)))
            .collect::<Vec<bool>>()
    });
    let mask: Option<Vec<bool>> = documents.as_ref().map(|d| {
        (0..source.chunk_count() as u32)
            .map(|c| d[source.doc_of(c) as usize])
            .collect()
    });
    let mask = mask.as_deref();

    // The static tier's rows for the query's terms, then its vector.
    let mut static_encoding = None;
    if let (true, Some(table)) = (use_static, source.statics()) {
        let terms = crate::statics::weigh_query(&query_terms, |t| source.term_weight(t));
        let rows = table.missing(&terms);
        if rows.is_empty() {
            static_encoding = Some(table.encode(&terms)?);
        } else if source.fetches() {
            return Ok(Step::Need(Need {
                rows,
                ..Need::default()
            }));
        }
    }
    let context = super::retrieve::with_static(context, &static_encoding);
    if use_static {
        vector = super::semantic_vector(has_vectors, context, options, empty)?;
    }

    // The words a misspelled word is looked for among (those that share its first letter).
    let mut fuzzy_words = 0;
    for (token, folded) in query.tokens.iter().zip(&query.folded) {
        if source.has_term(&token.term) || fuzzy_words == expand::FUZZY_WORDS {
            continue;
        }
        fuzzy_words += 1;
        let chars = folded.chars().count();
        if let Some(first) = folded
            .chars()
            .next()
            .filter(|_| options.fuzzy.distance(chars) > 0 && chars <= expand::FUZZY_MAX_CHARS)
        {
            let first = first.to_string();
            source.want_words(&first, &mut need);
            if !prefixes.contains(&first) {
                prefixes.push(first);
            }
        }
    }
    // Both signals go as far as what is held allows: the lexical one to its expansions' terms,
    // the semantic one to its partitions and records.
    let lexical_ready = need.is_empty();
    let lexical = source.lexicon(&query_terms, &prefixes);
    let made;
    let expanded = match context.expanded {
        Some(expanded) => expanded,
        None => {
            made = expand::expand(&lexical, query, options);
            &made
        }
    };
    if lexical_ready {
        if empty && expanded.expansions.is_empty() {
            // The typed word completed to nothing: an empty query.
            return Ok(Step::Done(Retrieval::empty(query_terms)));
        }
        if empty {
            // Only its completions to search: a query with terms.
            super::semantic_vector(has_vectors, context, options, false)?;
        }
        source.want_terms(
            &mut expanded
                .words
                .iter()
                .flat_map(|w| &w.alternatives)
                .map(|&(t, _)| lexical.term(t)),
            &mut need,
        );
    }
    let semantic = match vector {
        Some(v) => source.nearest(v, mask, options, &mut need)?,
        None => Vec::new(),
    };
    if let Some(wait) = need.wait() {
        return Ok(wait.widen());
    }
    let lexical_hits = if lexical_ran {
        lexical.search_words(&expanded.words, super::pool(options), mask)
    } else {
        Vec::new()
    };
    let (mut candidates, score_kind) = super::fuse_signals(
        &lexical_hits,
        &semantic,
        lexical_ran,
        vector.is_some(),
        options,
    );
    super::boost_recency(&mut candidates, options, &|chunk| {
        let at = source.date(source.doc_of(chunk))?;
        Some(super::days_since(at, context.now_ms))
    });
    for e in &expanded.expansions {
        if !query_terms.contains(&e.term) {
            query_terms.push(e.term.clone());
        }
    }
    let expansions = expanded.expansions.clone();
    Ok(Step::Done(Retrieval {
        retrieved: Retrieved {
            candidates,
            score_kind,
            query_terms,
            expansions,
            documents,
        },
        lexical: Some(lexical),
        static_encoding,
    }))
}

/// With `rerank`, reorders the best `topN` candidates by the cross-encoder's relevance (ties
/// keep their order) and gives those after them score 0, so one scale (and one cutoff) holds
/// for the whole response; their retrieval score stays in `retrievalScore`. The scores come
/// from the loaded cross-encoder, else from the source (added after a `Score` step).
pub(crate) fn rerank<S: Source + ?Sized>(
    source: &S,
    query: &str,
    retrieved: &mut Retrieved,
    options: &SearchOptions,
    context: QueryContext<'_>,
) -> Result<Option<Wait>> {
    let Some(asked) = &options.rerank else {
        return Ok(None);
    };
    let top: Vec<u32> = retrieved
        .candidates
        .iter()
        .take(asked.top_n as usize)
        .map(|c| c.chunk)
        .collect();
    retrieved.score_kind = ScoreKind::Reranker;
    if top.is_empty() {
        return Ok(None);
    }
    let mut need = Need::default();
    for &c in &top {
        source.want_text(c, &mut need);
    }
    if let Some(wait) = need.wait() {
        return Ok(Some(wait));
    }
    let model = super::canonical_model(&asked.model);
    // The candidates are scored together, in one batch (its padding moves a score in its last
    // bits).
    let scores = match (context.reranker, source.rerank_scores(&model, query, &top)) {
        (_, Some(scores)) => scores.to_vec(),
        (Some(reranker), None) => {
            let texts: Vec<String> = top.iter().map(|&c| source.indexed_text(c)).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            reranker.relevance(query, &texts)?
        }
        (None, None) => {
            let texts = top.iter().map(|&c| source.indexed_text(c)).collect();
            return Ok(Some(Step::Score(super::source::RerankRequest {
                model,
                query: query.to_string(),
                chunks: top,
                texts,
            })));
        }
    };
    if scores.len() != top.len() {
        return Err(Error::Model(format!(
            "the cross-encoder gave {} scores for {} texts",
            scores.len(),
            top.len()
        )));
    }
    reorder(&mut retrieved.candidates, &scores).map(|()| None)
}

/// Reorders the first `scores.len()` candidates by the cross-encoder's `scores` (ties keep
/// their order) and gives those after them score 0.
fn reorder(candidates: &mut [Candidate], scores: &[f32]) -> Result<()> {
    let top = scores.len().min(candidates.len());
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::Model(
            "the cross-encoder gave a score that is not a number".into(),
        ));
    }
    for (c, &s) in candidates.iter_mut().zip(scores) {
        c.score = s;
        c.reranker_score = Some(s);
    }
    candidates[top..].iter_mut().for_each(|c| c.score = 0.0);
    crate::order::sort_by(&mut candidates[..top], |a, b| b.score.total_cmp(&a.score));
    Ok(())
}
