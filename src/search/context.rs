//! Budgeted context for a prompt: the best chunks that fit a token budget, in the order asked
//! for, with a record of every candidate considered: its rank by score, whether it was
//! admitted, where it sits in the prompt and the exact fragment it contributed, or why not.
//! Joining the admitted fragments in prompt order with a blank line gives the prompt exactly.

use crate::hit::{
    ContextCandidate, ContextOptions, ContextOrder, ContextResponse, RejectReason, ScoreKind,
    SearchHit, SearchOptions,
};

/// Tokens as characters / 4, rounded up: a budget unit that needs no tokenizer.
pub fn estimate_tokens(text: &str) -> u32 {
    (text.chars().count() as u32).div_ceil(4)
}

/// The fragment a hit contributes: a citation line, then its text.
fn fragment(hit: &SearchHit) -> String {
    let c = &hit.citation;
    let mut head = c.title.clone();
    for h in c.heading_path.iter().filter(|h| **h != c.title) {
        head.push_str(" › ");
        head.push_str(h);
    }
    if head.is_empty() {
        head = c.doc_id.clone();
    }
    let source = c.url.clone().unwrap_or_else(|| c.doc_id.clone());
    format!("[{head}]({source})\n{}", hit.text)
}

/// The search a context is built from: `options.search` without highlights or related
/// documents.
pub fn search_options(options: &ContextOptions) -> SearchOptions {
    SearchOptions {
        highlight: false,
        related: false,
        ..options.search.clone()
    }
}

/// The context of the hits of [`search_options`]'s search (whose scores are `score_kind`).
pub fn from_hits(
    hits: &[SearchHit],
    score_kind: ScoreKind,
    options: &ContextOptions,
) -> ContextResponse {
    let mut used = 0u32;
    let mut admitted: Vec<usize> = Vec::new();
    let mut candidates: Vec<ContextCandidate> = Vec::with_capacity(hits.len());
    for (i, hit) in hits.iter().enumerate() {
        let text = fragment(hit);
        let tokens = estimate_tokens(&text);
        let reason = if options.min_score.is_some_and(|min| hit.score < min) {
            Some(RejectReason::BelowThreshold)
        } else if admitted
            .iter()
            .any(|&a| hits[a].text.trim() == hit.text.trim())
        {
            Some(RejectReason::Duplicate)
        } else if used + tokens + if admitted.is_empty() { 0 } else { 1 } > options.token_budget {
            Some(RejectReason::OverBudget)
        } else {
            None
        };
        if reason.is_none() {
            // The blank line joining fragments is 2 characters: counted as one more token.
            used += tokens + if admitted.is_empty() { 0 } else { 1 };
            admitted.push(i);
        }
        candidates.push(ContextCandidate {
            id: hit.id.clone(),
            rank: i as u32 + 1,
            score: hit.score,
            tokens,
            admitted: reason.is_none(),
            prompt_position: None,
            prompt_fragment: reason.is_none().then_some(text),
            reason,
            citation: hit.citation.clone(),
            updated_at: hit.updated_at.clone(),
        });
    }
    match options.order {
        ContextOrder::Score => {}
        ContextOrder::Document => crate::order::sort_by(&mut admitted, |&a, &b| {
            (&hits[a].citation.doc_id, hits[a].citation.chunk_index)
                .cmp(&(&hits[b].citation.doc_id, hits[b].citation.chunk_index))
        }),
        // Newest first; undated last; ties by score.
        ContextOrder::Recency => crate::order::sort_by(&mut admitted, |&a, &b| {
            hits[b].updated_at.cmp(&hits[a].updated_at).then(a.cmp(&b))
        }),
    }
    let mut prompt_parts = Vec::with_capacity(admitted.len());
    for (position, &i) in admitted.iter().enumerate() {
        candidates[i].prompt_position = Some(position as u32);
        prompt_parts.push(candidates[i].prompt_fragment.clone().unwrap_or_default());
    }
    let prompt = prompt_parts.join("\n\n");
    ContextResponse {
        tokens: estimate_tokens(&prompt),
        prompt,
        order: options.order,
        score_kind,
        candidates,
    }
}
