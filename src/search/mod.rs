//! Search: retrieve candidates from each signal, fuse them, and turn the winners into
//! `SearchHit`s with citations and highlights. The same code answers the CLI and the browser;
//! the caller supplies the query embedding when the model is loaded.

pub mod fuse;
pub mod highlight;

use crate::error::{Error, Result};
use crate::hit::{Citation, LexicalSignal, ScoreKind, SearchHit, SearchMode, SearchOptions, SemanticSignal, Signals};
use crate::index::Index;
use fuse::Candidate;

/// Whether the caller has a query embedding, and if not, why not.
pub enum QueryVector<'a> {
    Ready(&'a [f32]),
    /// The index has embeddings, but the model is still loading (browser) or was not asked for.
    NotReady,
}

/// Runs one search.
pub fn search(index: &Index, query: &str, vector: QueryVector<'_>, options: &SearchOptions) -> Result<Vec<SearchHit>> {
    validate(options)?;
    let limit = options.limit as usize;
    let pool = options.candidates.map(|c| c as usize).unwrap_or(100).max(limit);
    let analyzer = index.analyzer();
    let query_terms = analyzer.terms(query);

    let want_semantic = options.mode != SearchMode::Lexical;
    let semantic_vector = match (&index.vectors, vector) {
        (Some(_), QueryVector::Ready(v)) if want_semantic => Some(v),
        (None, _) if options.mode == SearchMode::Semantic => {
            return Err(Error::InvalidInput(
                "this index has no embeddings, so it cannot answer a semantic search; rebuild it without --no-embed, or search with mode \"lexical\"".into(),
            ))
        }
        (Some(_), QueryVector::NotReady) if options.mode == SearchMode::Semantic => {
            return Err(Error::InvalidInput(
                "the embedding model is not loaded yet, so a semantic search cannot run; wait for the model (or search with mode \"hybrid\", which answers lexically until it arrives)".into(),
            ))
        }
        _ => None,
    };

    let lexical = if options.mode == SearchMode::Semantic { Vec::new() } else { index.lexical.search(&query_terms, pool) };
    let semantic = match (semantic_vector, &index.vectors) {
        (Some(v), Some(vectors)) => vectors.search(v, pool)?,
        _ => Vec::new(),
    };
    let semantic_ran = semantic_vector.is_some();
    let lexical_ran = options.mode != SearchMode::Semantic;

    let (candidates, score_kind) = if lexical_ran && semantic_ran {
        (fuse::fuse(&lexical, &semantic, options), fuse::score_kind(options.fusion))
    } else if semantic_ran {
        (fuse::single(&[], &semantic), ScoreKind::Cosine)
    } else {
        (fuse::single(&lexical, &[]), ScoreKind::Bm25)
    };

    let highlight_terms = if options.highlight { query_terms } else { Vec::new() };
    let hits = candidates
        .into_iter()
        .take(limit)
        .enumerate()
        .map(|(i, candidate)| make_hit(index, &candidate, i as u32 + 1, score_kind, &highlight_terms))
        .collect();
    Ok(hits)
}

fn validate(options: &SearchOptions) -> Result<()> {
    if options.limit == 0 {
        return Err(Error::InvalidInput("limit must be at least 1".into()));
    }
    if !(options.rrf_k.is_finite() && options.rrf_k >= 0.0) {
        return Err(Error::InvalidInput(format!("rrfK must be a number >= 0, not {}", options.rrf_k)));
    }
    if !(0.0..=1.0).contains(&options.semantic_weight) {
        return Err(Error::InvalidInput(format!(
            "semanticWeight must be between 0 and 1, not {}",
            options.semantic_weight
        )));
    }
    Ok(())
}

fn make_hit(index: &Index, candidate: &Candidate, rank: u32, score_kind: ScoreKind, terms: &[String]) -> SearchHit {
    let chunk = &index.chunks[candidate.chunk as usize];
    let document = index.document_of(chunk);
    let url = document.url.as_ref().map(|url| match &chunk.anchor {
        Some(anchor) if !url.contains('#') => format!("{url}#{anchor}"),
        _ => url.clone(),
    });
    SearchHit {
        id: format!("{}#{}", document.id, chunk.chunk_index),
        rank,
        score: candidate.score,
        score_kind,
        highlights: highlight::highlights(&index.analyzer(), &chunk.text, terms),
        text: chunk.text.clone(),
        citation: Citation {
            doc_id: document.id.clone(),
            doc_type: document.doc_type,
            title: document.title.clone(),
            url,
            heading_path: chunk.heading_path.clone(),
            chunk_index: chunk.chunk_index,
            line_start: chunk.line_start,
            line_end: chunk.line_end,
            source_offset: chunk.source_offset,
        },
        signals: Signals {
            lexical: candidate.lexical.map(|(rank, score)| LexicalSignal { rank, score }),
            semantic: candidate.semantic.map(|(rank, score)| SemanticSignal { rank, score, distance: 1.0 - score }),
        },
    }
}

/// Keeps the `k` best items, sorted best first; ties go to the lower id, so every target
/// returns the same order.
pub(crate) fn top_k<T>(items: &mut Vec<T>, k: usize, score: impl Fn(&T) -> f32, id: impl Fn(&T) -> u32) {
    let order = |a: &T, b: &T| score(b).total_cmp(&score(a)).then_with(|| id(a).cmp(&id(b)));
    if items.len() > k {
        if k == 0 {
            items.clear();
            return;
        }
        items.select_nth_unstable_by(k - 1, order);
        items.truncate(k);
    }
    items.sort_unstable_by(order);
}
