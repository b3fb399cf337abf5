//! The answers, written once against `Source`: hits (with their neighbors and the documents
//! linked to them), documents (`searchDocuments`) and a prompt's context (`buildContext`).
//! Each ranks with `retrieve`, then wants the text of what it shows and builds it from the
//! source's `View`.

use std::collections::{HashMap, HashSet};

use super::retrieve::{rerank, retrieve, with_static, Retrieval};
use super::source::{Need, Source, Step, Wait};
use super::{documents, Candidate, Query, QueryContext, Retrieved};
use crate::error::Result;
use crate::hit::{
    ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, ScoreKind,
    SearchHit, SearchOptions, Via,
};
use crate::order;

/// A search's hits, or what it needs first.
pub fn search<S: Source + ?Sized>(
    source: &S,
    query: &Query,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Step<Vec<SearchHit>>> {
    Ok(hits(source, query, context, options)?.map(|(hits, _)| hits))
}

/// The best `limit` candidates, of at most `maxDocuments` documents and `maxPerDocument` a
/// document.
fn shown_candidates<S: Source + ?Sized>(
    source: &S,
    candidates: &[Candidate],
    options: &SearchOptions,
) -> Vec<Candidate> {
    let (documents, per_document) = (
        options.max_documents.unwrap_or(u32::MAX) as usize,
        options.max_per_document.unwrap_or(u32::MAX),
    );
    let mut taken: HashMap<u32, u32> = HashMap::new();
    candidates
        .iter()
        .filter(|c| {
            let doc = source.doc_of(c.chunk);
            if !taken.contains_key(&doc) && taken.len() >= documents {
                return false;
            }
            let n = taken.entry(doc).or_default();
            *n += 1;
            *n <= per_document
        })
        .take(options.limit as usize)
        .cloned()
        .collect()
}

/// A prompt's context (`buildContext`) from the hits of its search.
pub fn build_context<S: Source + ?Sized>(
    source: &S,
    query: &Query,
    context: QueryContext<'_>,
    options: &ContextOptions,
) -> Result<Step<ContextResponse>> {
    let search = super::context::search_options(options);
    Ok(hits(source, query, context, &search)?
        .map(|(hits, kind)| super::context::from_hits(&hits, kind, options)))
}

/// The hits of a search, with the scale of their scores.
fn hits<S: Source + ?Sized>(
    source: &S,
    query: &Query,
    context: QueryContext<'_>,
    options: &SearchOptions,
) -> Result<Step<(Vec<SearchHit>, ScoreKind)>> {
    let mut r = match retrieve(source, query, context, options)?.done() {
        Ok(r) => r,
        Err(step) => return Ok(step),
    };
    if let Some(wait) = rerank(source, query.text, &mut r.retrieved, options, context)? {
        return Ok(wait.widen());
    }
    let chosen = shown_candidates(source, &r.retrieved.candidates, options);
    // The text of the hits shown, and of their neighbors.
    let mut wanted = Vec::new();
    for c in &chosen {
        let all = source.chunks_of(source.doc_of(c.chunk));
        let from = c.chunk.saturating_sub(options.expand).max(all.start);
        let to = c.chunk.saturating_add(options.expand).min(all.end - 1);
        wanted.extend(from..=to);
    }
    let direct: Vec<u32> = chosen.iter().map(|c| source.doc_of(c.chunk)).collect();
    // Their documents' links, in the same round, only when the hits show them or follow them.
    let links = if options.max_links > 0 || options.related {
        &direct[..]
    } else {
        &[]
    };
    if let Some(wait) = texts_needed(source, &wanted, links) {
        return Ok(wait.widen());
    }
    let related = if options.related {
        match related(source, &direct, &r.retrieved, options, &mut wanted) {
            Ok(related) => related,
            Err(wait) => return Ok(wait.widen()),
        }
    } else {
        Vec::new()
    };
    let score_kind = r.retrieved.score_kind;
    let Retrieval {
        retrieved,
        lexical,
        static_encoding,
    } = r;
    let Some(lexical) = lexical else {
        return Ok(Step::Done((Vec::new(), score_kind)));
    };
    let view = source.view(&sorted(wanted), lexical);
    let in_view = |candidates: &mut dyn Iterator<Item = &Candidate>| -> Vec<Candidate> {
        candidates
            .filter_map(|c| {
                let chunk = view.chunk(c.chunk)?;
                Some(Candidate { chunk, ..c.clone() })
            })
            .collect()
    };
    let shown = Retrieved {
        candidates: in_view(&mut chosen.iter()),
        query_terms: retrieved.query_terms,
        expansions: retrieved.expansions,
        // The filter's mask, over the view's documents: links to the others are left out.
        documents: retrieved
            .documents
            .as_deref()
            .map(|d| view.document_mask(d)),
        score_kind,
    };
    let context = with_static(context, &static_encoding);
    let refs: Vec<&Candidate> = shown.candidates.iter().collect();
    let mut hits = super::build_hits(&view.index, &shown, &refs, context, options)?;
    let linked = in_view(&mut related.iter().map(|(c, _, _)| c));
    let refs: Vec<&Candidate> = linked.iter().collect();
    let mut more = super::build_hits(&view.index, &shown, &refs, context, options)?;
    for (i, (hit, (_, from, mut via))) in more.iter_mut().zip(related).enumerate() {
        via.from_id = hits[from].id.clone();
        hit.rank = hits.len() as u32 + i as u32 + 1;
        hit.via = Some(via);
    }
    hits.append(&mut more);
    Ok(Step::Done((hits, score_kind)))
}

/// The documents the hits (`direct`, their documents in order) link to, hop by hop (up to
/// `relatedHops`), as far as the hits `related` can show: each by the chunk shown of it (its
/// best in the pool, else its first), the hit it was reached from and how. Their text is added
/// to `wanted`; while a hop's text is missing, the step that fetches it.
fn related<S: Source + ?Sized>(
    source: &S,
    direct: &[u32],
    retrieved: &Retrieved,
    options: &SearchOptions,
    wanted: &mut Vec<u32>,
) -> std::result::Result<Vec<(Candidate, usize, Via)>, Wait> {
    let mut best: HashMap<u32, &Candidate> = HashMap::new();
    for c in &retrieved.candidates {
        best.entry(source.doc_of(c.chunk)).or_insert(c);
    }
    let most = options.limit.saturating_mul(options.max_links.max(1)) as usize;
    let mut seen: HashSet<u32> = direct.iter().copied().collect();
    let mut found: Vec<(Candidate, usize, Via)> = Vec::new();
    // (document, the hit it was reached from, the link texts on the way)
    let mut frontier: Vec<(u32, usize, Vec<String>)> = direct
        .iter()
        .enumerate()
        .map(|(i, &d)| (d, i, Vec::new()))
        .collect();
    let mut need = Need::default();
    for hop in 1..=options.related_hops {
        if found.len() >= most {
            break;
        }
        let mut next = Vec::new();
        for (doc, from, path) in &frontier {
            for link in source.links_from(*doc) {
                if !retrieved.allows(link.to) || !seen.insert(link.to) {
                    continue;
                }
                let mut path = path.clone();
                path.push(link.text.clone());
                let chunks = source.chunks_of(link.to);
                let shown = match best.get(&link.to) {
                    Some(&c) => Some(c.clone()),
                    None => (!chunks.is_empty()).then(|| Candidate::unretrieved(chunks.start)),
                };
                let listed = found.len() < most && shown.is_some();
                if let Some(c) = shown.as_ref().filter(|_| listed) {
                    wanted.push(c.chunk);
                    source.want_text(c.chunk, &mut need);
                }
                // Its links, with its text: its hit lists them, or the next hop follows them.
                if (listed && options.max_links > 0) || hop < options.related_hops {
                    source.want_links(link.to, &mut need);
                }
                let via = Via {
                    text: link.text.clone(),
                    path: path.join(" → "),
                    from_id: String::new(),
                    hops: hop,
                };
                found.push((
                    shown.unwrap_or_else(|| Candidate::unretrieved(u32::MAX)),
                    *from,
                    via,
                ));
                next.push((link.to, *from, path));
            }
        }
        if let Some(wait) = need.wait() {
            return Err(wait);
        }
        frontier = next;
    }
    found.truncate(most);
    // A linked document of no chunks has nothing to show.
    found.retain(|(c, _, _)| c.chunk != u32::MAX);
    Ok(found)
}

/// `chunks` in order, each once.
fn sorted(mut chunks: Vec<u32>) -> Vec<u32> {
    order::sort(&mut chunks);
    chunks.dedup();
    chunks
}

/// The text of `chunks` and the links of `documents` not held yet, as a step; none when all
/// are in.
fn texts_needed<S: Source + ?Sized>(source: &S, chunks: &[u32], documents: &[u32]) -> Option<Wait> {
    let mut need = Need::default();
    for &c in chunks {
        source.want_text(c, &mut need);
    }
    for &d in documents {
        source.want_links(d, &mut need);
    }
    need.wait()
}

/// Document search (`searchDocuments`): the chunk pool grown until it holds as many documents
/// as a chunk search would have chunks (`candidates`, at least `limit`), or every candidate
/// there is, so a long document's chunks cannot crowd the others out of the grouping, `total`
/// or the facets; reranked once, on that pool; the facets counted over every matching document.
pub fn search_documents<S: Source + ?Sized>(
    source: &S,
    query: &Query,
    context: QueryContext<'_>,
    options: &DocumentSearchOptions,
    clock_ms: impl Fn() -> f64,
) -> Result<Step<DocumentSearchResponse>> {
    let started = clock_ms();
    if options.search.max_documents.is_some() || options.search.max_per_document.is_some() {
        return Err(crate::error::Error::InvalidInput(
            "maxDocuments and maxPerDocument shape a search's hits; searchDocuments gives `limit` documents, each with its matching chunks".into(),
        ));
    }
    let wanted = documents::documents_wanted(options);
    let doc_of = |chunk: u32| source.doc_of(chunk);
    let mut search = options.search.clone();
    let mut pool = wanted;
    let (mut r, order, matched) = loop {
        search.candidates = Some(pool.min(super::limits::CANDIDATES as usize) as u32);
        let r = match retrieve(source, query, context, &search)?.done() {
            Ok(r) => r,
            Err(step) => return Ok(step),
        };
        let (order, matched) = documents::group_by(&r.retrieved.candidates, &doc_of);
        let candidates = r.retrieved.candidates.len();
        match documents::next_pool(pool, candidates, source.chunk_count(), order.len(), wanted) {
            Some(next) => pool = next,
            None => break (r, order, matched),
        }
    };
    let (order, matched) = if search.rerank.is_some() {
        if let Some(wait) = rerank(source, query.text, &mut r.retrieved, &search, context)? {
            return Ok(wait.widen());
        }
        documents::group_by(&r.retrieved.candidates, &doc_of)
    } else {
        (order, matched)
    };
    let mut need = Need::default();
    for field in &options.facets {
        source.want_field(field, &mut need);
    }
    if let Some(wait) = need.wait() {
        return Ok(wait.widen());
    }
    let facets = documents::facets(&order, &options.facets, &|doc, field| {
        source.field_value(doc, field)
    });
    // The text of the documents shown: their matching chunks, or all their chunks when the
    // options show them.
    let shown = &order[..order.len().min(options.search.limit as usize)];
    let whole = !options.only_matching_chunks || options.include_full_docs;
    let mut wanted_chunks = Vec::new();
    for doc in shown {
        if whole {
            wanted_chunks.extend(source.chunks_of(*doc));
        } else {
            wanted_chunks.extend(matched[doc].iter().map(|&(c, _)| c));
        }
    }
    if let Some(wait) = texts_needed(source, &wanted_chunks, &[]) {
        return Ok(wait.widen());
    }
    let results = match r.lexical {
        Some(lexical) => {
            let view = source.view(&sorted(wanted_chunks), lexical);
            let in_view = |doc: &u32| {
                view.document(*doc)
                    .expect("a shown document is in the view")
            };
            let matched = order::map(shown.iter().map(|doc| {
                let chunks = matched[doc]
                    .iter()
                    .filter_map(|&(c, score)| Some((view.chunk(c)?, score)));
                (in_view(doc), chunks.collect())
            }));
            let shown: Vec<u32> = shown.iter().map(in_view).collect();
            documents::results(
                &view.index,
                &shown,
                &matched,
                &r.retrieved.query_terms,
                options,
            )
        }
        None => Vec::new(),
    };
    Ok(Step::Done(DocumentSearchResponse {
        results,
        score_kind: r.retrieved.score_kind,
        timing: clock_ms() - started,
        total: order.len() as u32,
        facets,
    }))
}
