//! Document search: the chunk ranking grouped by document. A document scores as its best
//! chunk; its chunks carry their own scores and whether they pass `chunkThreshold`; facet
//! counts are taken over every matching document.

use std::collections::BTreeMap;

use super::{chunk_id, fused, rerank_retrieved, QueryContext};
use crate::error::Result;
use crate::hit::{DocumentChunk, DocumentResult, DocumentSearchOptions, DocumentSearchResponse};
use crate::index::Index;

/// Documents in order of their best chunk; each with its matching chunks, best first.
fn group(
    index: &Index,
    retrieved: &super::Retrieved,
) -> (Vec<u32>, BTreeMap<u32, Vec<(u32, f32)>>) {
    let mut order: Vec<u32> = Vec::new();
    let mut matched: BTreeMap<u32, Vec<(u32, f32)>> = BTreeMap::new();
    for c in &retrieved.candidates {
        let doc = index.chunks[c.chunk as usize].doc;
        let entry = matched.entry(doc).or_default();
        if entry.is_empty() {
            order.push(doc);
        }
        entry.push((c.chunk, c.score));
    }
    (order, matched)
}

pub fn search_documents(
    index: &Index,
    query: &str,
    context: QueryContext<'_>,
    options: &DocumentSearchOptions,
    clock_ms: impl Fn() -> f64,
) -> Result<DocumentSearchResponse> {
    let started = clock_ms();
    // The chunk pool is grown until it holds as many documents as a chunk search would have
    // chunks (`candidates`, at least `limit`), or every candidate there is: a long document's
    // chunks cannot crowd the others out of the grouping, `total` or the facets.
    let wanted = options
        .search
        .candidates
        .unwrap_or(100)
        .max(options.search.limit) as usize;
    let mut search = options.search.clone();
    let mut pool = wanted;
    let (mut retrieved, order, matched) = loop {
        search.candidates = Some(pool.min(super::limits::CANDIDATES as usize) as u32);
        let retrieved = fused(index, query, context, &search)?;
        let (order, matched) = group(index, &retrieved);
        let exhausted = retrieved.candidates.len() < pool
            || pool >= index.chunks.len()
            || pool >= super::limits::CANDIDATES as usize;
        if order.len() >= wanted || exhausted {
            break (retrieved, order, matched);
        }
        pool = pool.saturating_mul(4);
    };
    // Reranked once, on the pool that holds enough documents.
    let (order, matched) = if search.rerank.is_some() {
        rerank_retrieved(index, query, &mut retrieved, &search, context)?;
        group(index, &retrieved)
    } else {
        (order, matched)
    };
    let analyzer = index.analyzer();
    let mut facets: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for field in &options.facets {
        let counts = facets.entry(field.clone()).or_default();
        for &doc in &order {
            let values = match super::filter::field_value(index, doc, field) {
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
    let highlight_terms: &[String] = if options.search.highlight {
        &retrieved.query_terms
    } else {
        &[]
    };
    let results = order
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
            let all = index
                .first_chunk_of(doc)
                .map_or(0..0, |first| index.document_chunks(first));
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
        .collect();
    Ok(DocumentSearchResponse {
        results,
        score_kind: retrieved.score_kind,
        timing: clock_ms() - started,
        total: order.len() as u32,
        facets,
    })
}
