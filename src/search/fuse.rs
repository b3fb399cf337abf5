//! Fusion: one ranking from the lexical and the semantic candidate lists. The default is a
//! weighted sum of each signal's scores, each divided by the query's best for that signal (BM25
//! is 0 at least, and a cosine of 0 or below counts as 0, so the lower end of the scale is fixed,
//! not the worst candidate's): a ranking that does not move with how many candidates a signal
//! brings (`candidates`, or how deep a fragmented index's vector scan re-scores). Reciprocal
//! rank fusion (score = Σ 1 / (k + rank)) is the option. On the five eval collections the
//! weighted sum has the higher mean nDCG@10 with the model and with the static tier, and keeps
//! the static tier's hybrid above lexical alone on CACM, where RRF did not
//! (`docs/benchmarks.md`). Each fused candidate keeps every signal's own rank and score, so a
//! hit explains itself.

use std::collections::HashMap;

use crate::hit::{Fusion, ScoreKind, SearchOptions};
use crate::index::lexical::LexicalHit;
use crate::index::vector::ScoredChunk;

/// A chunk after fusion, with each signal's 1-based rank and score.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub chunk: u32,
    /// The final score (after the recency boost, when on).
    pub score: f32,
    pub lexical: Option<(u32, f32)>,
    /// The part of the lexical score that is the BM25 of the chunk's whole document.
    pub lexical_document_score: f32,
    pub semantic: Option<(u32, f32)>,
    /// What each signal added to the fused score: (lexical, semantic).
    pub contributions: (f32, f32),
    /// Rank (1-based) and score after fusion, before any reordering; rank 0: not retrieved.
    pub retrieval_rank: u32,
    pub retrieval_score: f32,
    /// The recency boost's factor (1 when off).
    pub recency_factor: f32,
    /// The cross-encoder's relevance, on the candidates `rerank` scored.
    pub reranker_score: Option<f32>,
}

impl Candidate {
    fn new(chunk: u32) -> Self {
        Candidate {
            chunk,
            score: 0.0,
            lexical: None,
            lexical_document_score: 0.0,
            semantic: None,
            contributions: (0.0, 0.0),
            retrieval_rank: 0,
            retrieval_score: 0.0,
            recency_factor: 1.0,
            reranker_score: None,
        }
    }

    /// A chunk that no signal retrieved (reached by a link).
    pub fn unretrieved(chunk: u32) -> Self {
        Candidate::new(chunk)
    }
}

pub fn score_kind(fusion: Fusion) -> ScoreKind {
    match fusion {
        Fusion::Rrf => ScoreKind::Rrf,
        Fusion::Weighted => ScoreKind::Weighted,
    }
}

/// The candidates of a single signal, in its own order and with its own scores.
pub fn single(lexical: &[LexicalHit], semantic: &[ScoredChunk]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = lexical
        .iter()
        .zip(1..)
        .map(|(h, rank)| Candidate {
            score: h.score,
            lexical: Some((rank, h.score)),
            lexical_document_score: h.document_score,
            contributions: (h.score, 0.0),
            ..Candidate::new(h.chunk)
        })
        .collect();
    out.extend(semantic.iter().zip(1..).map(|(h, rank)| Candidate {
        score: h.score,
        semantic: Some((rank, h.score)),
        contributions: (0.0, h.score),
        ..Candidate::new(h.chunk)
    }));
    out
}

/// Fuses the two lists (each best first) into one, best first.
pub fn fuse(
    lexical: &[LexicalHit],
    semantic: &[ScoredChunk],
    options: &SearchOptions,
) -> Vec<Candidate> {
    let mut by_chunk: HashMap<u32, Candidate> = HashMap::new();
    for (i, hit) in lexical.iter().enumerate() {
        let candidate = by_chunk
            .entry(hit.chunk)
            .or_insert_with(|| empty(hit.chunk));
        candidate.lexical = Some((i as u32 + 1, hit.score));
        candidate.lexical_document_score = hit.document_score;
    }
    for (i, hit) in semantic.iter().enumerate() {
        by_chunk
            .entry(hit.chunk)
            .or_insert_with(|| empty(hit.chunk))
            .semantic = Some((i as u32 + 1, hit.score));
    }
    let mut fused: Vec<Candidate> = by_chunk.into_values().collect();
    match options.fusion {
        Fusion::Rrf => {
            let k = options.rrf_k;
            let part = |signal: Option<(u32, f32)>| {
                signal.map_or(0.0, |(rank, _)| 1.0 / (k + rank as f32))
            };
            for c in &mut fused {
                c.contributions = (part(c.lexical), part(c.semantic));
                c.score = c.contributions.0 + c.contributions.1;
            }
        }
        Fusion::Weighted => {
            let lexical_best = best(lexical.iter().map(|h| h.score));
            let semantic_best = best(semantic.iter().map(|h| h.score));
            let w = options.semantic_weight;
            for c in &mut fused {
                let lex = c.lexical.map_or(0.0, |(_, s)| share(s, lexical_best));
                let sem = c.semantic.map_or(0.0, |(_, s)| share(s, semantic_best));
                c.contributions = ((1.0 - w) * lex, w * sem);
                c.score = c.contributions.0 + c.contributions.1;
            }
        }
    }
    crate::order::top_k(&mut fused, usize::MAX, |c| c.score, |c| c.chunk);
    fused
}

fn empty(chunk: u32) -> Candidate {
    Candidate::new(chunk)
}

fn best(scores: impl Iterator<Item = f32>) -> f32 {
    scores.fold(f32::NEG_INFINITY, f32::max)
}

/// A score as a share of the query's best for its signal, from 0 (BM25's least, or a cosine
/// of 0 or below: nothing in common) to 1.
fn share(score: f32, best: f32) -> f32 {
    if best > 0.0 {
        (score / best).max(0.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(chunks: &[u32]) -> Vec<ScoredChunk> {
        chunks
            .iter()
            .enumerate()
            .map(|(i, &chunk)| ScoredChunk {
                chunk,
                score: 10.0 - i as f32,
            })
            .collect()
    }

    fn lexical(chunks: &[u32]) -> Vec<LexicalHit> {
        list(chunks)
            .into_iter()
            .map(|h| LexicalHit {
                chunk: h.chunk,
                score: h.score,
                document_score: 0.0,
            })
            .collect()
    }

    #[test]
    fn rrf_rewards_agreement_and_keeps_single_signal_hits() {
        let fused = fuse(
            &lexical(&[1, 2, 3]),
            &list(&[2, 4]),
            &SearchOptions {
                fusion: Fusion::Rrf,
                ..SearchOptions::default()
            },
        );
        assert_eq!(
            fused.iter().map(|c| c.chunk).collect::<Vec<_>>(),
            vec![2, 1, 4, 3]
        );
        let top = &fused[0];
        assert_eq!(top.lexical, Some((2, 9.0)));
        assert_eq!(top.semantic, Some((1, 10.0)));
        assert!((top.score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-7);
        let only_semantic = fused.iter().find(|c| c.chunk == 4).unwrap();
        assert_eq!(
            (only_semantic.lexical, only_semantic.semantic),
            (None, Some((2, 9.0)))
        );
    }

    #[test]
    fn weighted_fusion_normalizes_each_signal() {
        let options = SearchOptions {
            fusion: Fusion::Weighted,
            semantic_weight: 1.0,
            ..SearchOptions::default()
        };
        let fused = fuse(&lexical(&[1, 2]), &list(&[3, 1]), &options);
        assert_eq!(fused[0].chunk, 3);
        assert!((fused[0].score - 1.0).abs() < 1e-6);
        assert_eq!(fused.last().unwrap().chunk, 2);
    }
}
