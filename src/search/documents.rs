//! Document search's parts (`answer::search_documents` runs them): the chunk ranking grouped
//! by document. A document scores as its best chunk; its chunks carry their own scores and whether they pass `chunkThreshold`; facet
//! counts are taken over every matching document.

use std::collections::BTreeMap;

use super::chunk_id;
use crate::hit::{DocumentChunk, DocumentResult, DocumentSearchOptions};
use crate::index::Index;

/// How many documents a document search gathers before it stops growing its chunk pool.
pub(crate) fn documents_wanted(options: &DocumentSearchOptions) -> usize {
    options
        .search
        .candidates
        .unwrap_or(100)
        .max(options.search.limit) as usize
}

/// The next chunk pool of a document search whose pool `pool` gave `candidates` fused
/// candidates of `chunks` and `documents` of the `wanted` documents; None when it has them
/// all, or every candidate there is.
pub(crate) fn next_pool(
    pool: usize,
    candidates: usize,
    chunks: usize,
    documents: usize,
    wanted: usize,
) -> Option<usize> {
    let exhausted =
        candidates < pool || pool >= chunks || pool >= super::limits::CANDIDATES as usize;
    (documents < wanted && !exhausted).then(|| pool.saturating_mul(4))
}

/// The candidates, best first, as documents in order of their best chunk (`order`), each with
/// its matching chunks and their scores, best first (`matched`).
pub(crate) fn group_by(
    candidates: &[super::Candidate],
    doc_of: &dyn Fn(u32) -> u32,
) -> (Vec<u32>, BTreeMap<u32, Vec<(u32, f32)>>) {
    let mut order: Vec<u32> = Vec::new();
    let mut matched: BTreeMap<u32, Vec<(u32, f32)>> = BTreeMap::new();
    for c in candidates {
        let doc = doc_of(c.chunk);
        let entry = matched.entry(doc).or_default();
        if entry.is_empty() {
            order.push(doc);
        }
        entry.push((c.chunk, c.score));
    }
    (order, matched)
}

/// How many of the documents `order` have each value of each of `fields` (an array field
/// counts each of its items), by the values `value` gives.
pub(crate) fn facets(
    order: &[u32],
    fields: &[String],
    value: &dyn Fn(u32, &str) -> Option<serde_json::Value>,
) -> BTreeMap<String, BTreeMap<String, u32>> {
    let mut facets: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for field in fields {
        let counts = facets.entry(field.clone()).or_default();
        for &doc in order {
            let values = match value(doc, field) {
                Some(serde_json::Value::Array(items)) => items,
                Some(v) => vec![v],
                None => Vec::new(),
            };
            for v in values {
                let key = v
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string());
                *counts.entry(key).or_default() += 1;
            }
        }
    }
    facets
}

/// The first `limit` documents of `order` as results, from `index` (which holds them, their
/// matching chunks, and all their chunks when the options show them).
pub(crate) fn results(
    index: &Index,
    order: &[u32],
    matched: &BTreeMap<u32, Vec<(u32, f32)>>,
    query_terms: &[String],
    options: &DocumentSearchOptions,
) -> Vec<DocumentResult> {
    let analyzer = index.analyzer();
    let highlight_terms: &[String] = if options.search.highlight {
        query_terms
    } else {
        &[]
    };
    order
        .iter()
        .take(options.search.limit as usize)
        .enumerate()
        .map(|(i, &doc)| {
            let document = &index.documents[doc as usize];
            let hits = &matched[&doc];
            let chunk = |id: u32, score: f32, relevant: bool| {
                let c = &index.chunks[id as usize];
                DocumentChunk {
                    id: chunk_id(index, id),
                    chunk_index: c.chunk_index,
                    content: c.text.clone(),
                    score,
                    is_relevant: relevant,
                    highlights: super::highlight::highlights(&analyzer, &c.text, highlight_terms),
                }
            };
            let mut chunks: Vec<DocumentChunk> = hits
                .iter()
                .map(|&(id, score)| chunk(id, score, score >= options.chunk_threshold))
                .collect();
            let all = index.chunks_of(doc);
            if !options.only_matching_chunks {
                chunks.extend(
                    all.clone()
                        .filter(|id| !hits.iter().any(|h| h.0 == *id))
                        .map(|id| chunk(id, 0.0, false)),
                );
            }
            DocumentResult {
                doc_id: document.id.clone(),
                doc_type: document.doc_type,
                title: document.title.clone(),
                url: document.url.clone(),
                score: hits[0].1,
                rank: i as u32 + 1,
                chunks,
                metadata: index.metadata(doc).cloned(),
                created_at: document.created.as_ref().map(|t| t.iso.clone()),
                updated_at: document.updated.as_ref().map(|t| t.iso.clone()),
                content: options.include_full_docs.then(|| {
                    all.map(|id| index.chunks[id as usize].text.as_str())
                        .collect::<Vec<_>>()
                        .join("\n\n")
                }),
                summary: options
                    .search
                    .include_summary
                    .then(|| index.summary(doc))
                    .flatten(),
            }
        })
        .collect()
}
