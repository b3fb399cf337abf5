//! Hits: ranked candidates dressed as `SearchHit`s from an `Index` (the whole one, or a
//! source's view of the chunks shown), doing only the work the options ask for: highlights,
//! the sentence that matches, explain, neighbors, links.

#[cfg(feature = "model")]
use super::limits;
use super::{age_days, highlight, Candidate, QueryContext, Retrieved};
use crate::error::Result;
use crate::hit::{
    Citation, CitationKind, Explain, HitLink, LexicalSignal, LinkDirection, Neighbors, ScoreTerm,
    SearchHit, SearchOptions, SemanticSignal, SignalName, Signals,
};
#[cfg(feature = "model")]
use crate::index::vector::dot;
use crate::index::Index;

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
    // Only a module with the model has a sentence encoder to bring; the lean ones leave it out.
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
        if !these.iter().all(|s| embedder.can_embed(s)) {
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
    let range = index.chunks_of(index.chunks[chunk as usize].doc);
    let before = (chunk.saturating_sub(n).max(range.start)..chunk)
        .map(|c| index.chunks[c as usize].text.clone())
        .collect();
    let after = (chunk + 1..chunk.saturating_add(1).saturating_add(n).min(range.end))
        .map(|c| index.chunks[c as usize].text.clone())
        .collect();
    Neighbors { before, after }
}

/// The document's links to documents the filter lets through, outgoing first, at most `max`;
/// and how many of those were left out. None, and none counted, with `max` 0: a search that
/// shows no links never reads them (a fragmented index does not fetch them).
fn links_of(index: &Index, doc: u32, max: usize, retrieved: &Retrieved) -> (Vec<HitLink>, u32) {
    if max == 0 {
        return (Vec::new(), 0);
    }
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
