//! The lexical index: an inverted index from analyzed terms to the chunks that contain them,
//! scored with BM25. Terms are kept sorted (binary search); a posting list stores chunk-id gaps
//! and term frequencies, which the index file writes as varints. Each term's IDF is computed once
//! at build time and stored, so scores are bit-identical on every target.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.2, b: 0.75 }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Postings {
    /// Chunk ids as gaps from the previous one (the first from 0).
    chunk_gaps: Vec<u32>,
    freqs: Vec<u32>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LexicalIndex {
    params: Bm25Params,
    terms: Vec<String>,
    idf: Vec<f32>,
    postings: Vec<Postings>,
    /// Length of every chunk in terms.
    chunk_lengths: Vec<u32>,
    average_length: f32,
}

/// A chunk's BM25 score for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredChunk {
    pub chunk: u32,
    pub score: f32,
}

impl LexicalIndex {
    /// Builds the index from each chunk's analyzed terms, in chunk order.
    pub fn build(params: Bm25Params, chunk_terms: impl IntoIterator<Item = Vec<String>>) -> Self {
        let mut by_term: BTreeMap<String, Postings> = BTreeMap::new();
        let mut last_chunk: BTreeMap<String, u32> = BTreeMap::new();
        let mut chunk_lengths = Vec::new();
        for (chunk, terms) in chunk_terms.into_iter().enumerate() {
            let chunk = chunk as u32;
            chunk_lengths.push(terms.len() as u32);
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            for term in terms {
                *counts.entry(term).or_default() += 1;
            }
            for (term, freq) in counts {
                let previous = last_chunk.insert(term.clone(), chunk).unwrap_or(0);
                let postings = by_term.entry(term).or_default();
                postings.chunk_gaps.push(chunk - previous);
                postings.freqs.push(freq);
            }
        }
        let chunk_count = chunk_lengths.len() as f64;
        let total: u64 = chunk_lengths.iter().map(|&l| l as u64).sum();
        let average_length = if chunk_lengths.is_empty() { 0.0 } else { (total as f64 / chunk_count) as f32 };
        let (terms, postings): (Vec<String>, Vec<Postings>) = by_term.into_iter().unzip();
        let idf = postings
            .iter()
            .map(|p| {
                let df = p.freqs.len() as f64;
                (1.0 + (chunk_count - df + 0.5) / (df + 0.5)).ln() as f32
            })
            .collect();
        LexicalIndex { params, terms, idf, postings, chunk_lengths, average_length }
    }

    pub fn chunk_count(&self) -> usize {
        self.chunk_lengths.len()
    }

    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// Checks what the file format cannot: that every array agrees with the others.
    pub fn validate(&self, chunk_count: usize) -> Result<(), String> {
        if self.chunk_lengths.len() != chunk_count {
            return Err(format!("lexical index covers {} chunks, the index has {chunk_count}", self.chunk_lengths.len()));
        }
        if self.idf.len() != self.terms.len() || self.postings.len() != self.terms.len() {
            return Err("lexical index term tables differ in length".into());
        }
        for postings in &self.postings {
            if postings.freqs.len() != postings.chunk_gaps.len() {
                return Err("a posting list's chunk ids and frequencies differ in length".into());
            }
            let last: u64 = postings.chunk_gaps.iter().map(|&g| g as u64).sum();
            if !postings.chunk_gaps.is_empty() && last >= chunk_count as u64 {
                return Err("a posting list points past the last chunk".into());
            }
        }
        Ok(())
    }

    /// The stored IDF of an analyzed term, if the index has it.
    pub fn idf(&self, term: &str) -> Option<f32> {
        self.terms.binary_search_by(|t| t.as_str().cmp(term)).ok().map(|i| self.idf[i])
    }

    /// The `limit` best chunks for the analyzed query terms, best first; ties go to the lower
    /// chunk id. A query term that repeats counts once per occurrence, as in Lucene. With
    /// `allowed`, only chunks marked true are scored.
    pub fn search(&self, query_terms: &[String], limit: usize, allowed: Option<&[bool]>) -> Vec<ScoredChunk> {
        let mut scores = vec![0f32; self.chunk_lengths.len()];
        let mut touched = Vec::new();
        let Bm25Params { k1, b } = self.params;
        for term in query_terms {
            let Ok(t) = self.terms.binary_search(term) else { continue };
            let idf = self.idf[t];
            let postings = &self.postings[t];
            let mut chunk = 0u32;
            for (gap, &freq) in postings.chunk_gaps.iter().zip(&postings.freqs) {
                chunk += gap;
                if allowed.is_some_and(|a| !a[chunk as usize]) {
                    continue;
                }
                let tf = freq as f32;
                let length = self.chunk_lengths[chunk as usize] as f32;
                let norm = k1 * (1.0 - b + b * length / self.average_length);
                let slot = &mut scores[chunk as usize];
                if *slot == 0.0 {
                    touched.push(chunk);
                }
                *slot += idf * (tf * (k1 + 1.0)) / (tf + norm);
            }
        }
        let mut hits: Vec<ScoredChunk> =
            touched.into_iter().map(|chunk| ScoredChunk { chunk, score: scores[chunk as usize] }).collect();
        crate::search::top_k(&mut hits, limit, |h| h.score, |h| h.chunk);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn ranks_by_bm25() {
        let index = LexicalIndex::build(
            Bm25Params::default(),
            vec![terms("apple banana"), terms("apple apple apple cherry"), terms("cherry date")],
        );
        let hits = index.search(&terms("apple"), 10, None);
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![1, 0]);
        // idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5))
        let idf = (1.0f64 + 1.5 / 2.5).ln() as f32;
        let avg = 8.0 / 3.0;
        let expected = idf * 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * 2.0 / avg));
        assert!((hits[1].score - expected).abs() < 1e-5, "{} vs {expected}", hits[1].score);
        assert!(index.search(&terms("zebra"), 10, None).is_empty());
        assert_eq!(index.search(&terms("apple"), 10, Some(&[true, false, true])).len(), 1);
        assert!(index.validate(3).is_ok());
        assert!(index.validate(2).is_err());
    }
}
