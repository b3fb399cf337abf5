//! Distilling the static table at index time (native, with the model): the rows that make the
//! weighted mean of a text's term rows reproduce the model's embedding of that text.
//!
//! Each row starts as the model's embedding of its term's word alone (what one-word queries
//! get from the model), and is fitted, by ridge regression towards that start, to the site's
//! own texts: every chunk (its vector is already computed) and the short texts a query looks
//! like, the titles and headings (embedded here). The least-squares problem is solved by
//! conjugate gradients, each output dimension on its own and in a fixed order, so the table
//! is the same bytes for the same index on any number of cores.

use rayon::prelude::*;

use super::chunk_embedder::{embed_all, ChunkEmbedder};
use crate::embed::Embedder;
use crate::error::Result;
use crate::index::Index;
use crate::statics::{query_terms, weight};

#[derive(Debug, Clone, Copy)]
pub struct DistillOptions {
    /// The most rows: the terms most chunks hold (a term without a row adds nothing to a query's
    /// static vector; lexical search still finds it).
    pub max_rows: usize,
    /// How strongly rows stay near the model's embedding of their word, relative to the
    /// average weight a term gets from the texts.
    pub ridge: f32,
    /// Conjugate-gradient steps.
    pub iterations: usize,
    /// Whether titles and headings are texts to fit (besides chunks).
    pub headings: bool,
}

impl Default for DistillOptions {
    fn default() -> Self {
        DistillOptions {
            max_rows: 100_000,
            ridge: 1.0,
            iterations: 40,
            headings: false,
        }
    }
}

/// One text to fit: its terms (row, share of the text's weight, summing to 1) and the model's
/// embedding of it.
struct Sample<'a> {
    rows: Vec<(u32, f32)>,
    target: std::borrow::Cow<'a, [f32]>,
}

/// The distilled rows: `rows` (`dimension` f32 each) for the term ids `terms` (ascending).
pub struct Distilled {
    pub terms: Vec<u32>,
    pub rows: Vec<f32>,
}

impl Distilled {
    /// The rows' directory and packs (`store::rows::write_terms`).
    pub fn write(&self, index: &Index) -> (crate::store::rows::StaticRows, Vec<(String, Vec<u8>)>) {
        let dimension = self.rows.len() / self.terms.len().max(1);
        let names: Vec<&str> = self.terms.iter().map(|&t| index.lexical.term(t)).collect();
        crate::store::rows::write_terms(
            dimension.max(1),
            index.lexical.term_count(),
            &self.terms,
            &names,
            &self.rows,
        )
    }
}

/// Distills the static rows of `index`, whose chunk vectors (`dimension` f32 each, in chunk
/// order) are `chunk_vectors`.
pub fn distill(
    index: &Index,
    chunk_vectors: &[f32],
    embedder: &dyn ChunkEmbedder,
    options: &DistillOptions,
) -> Result<Distilled> {
    let lexical = &index.lexical;
    let dim = embedder.dimension();
    let term_count = lexical.term_count();
    // The terms that get rows: those most chunks hold.
    let mut terms: Vec<u32> = (0..term_count as u32).collect();
    terms.sort_by_key(|&t| (std::cmp::Reverse(lexical.chunk_frequency(t)), t));
    terms.truncate(options.max_rows);
    terms.sort_unstable();
    let mut row_of = vec![u32::MAX; term_count];
    for (r, &t) in terms.iter().enumerate() {
        row_of[t as usize] = r as u32;
    }

    // Each row's start: the model's embedding of its term's shortest word.
    let mut words: Vec<Option<&str>> = vec![None; term_count];
    for (word, &t) in lexical.words.iter().zip(&lexical.word_terms) {
        let slot = &mut words[t as usize];
        if slot.is_none_or(|w| (word.len(), word.as_str()) < (w.len(), w)) {
            *slot = Some(word);
        }
    }
    let start_texts: Vec<String> = terms
        .iter()
        .map(|&t| words[t as usize].unwrap_or(lexical.term(t)).to_string())
        .collect();
    let start = embedder.embed_short(&start_texts)?;

    // The texts to fit: every chunk, by its postings.
    let mut by_chunk: Vec<Vec<(u32, f32)>> = vec![Vec::new(); index.chunks.len()];
    for (t, postings) in lexical.postings.iter().enumerate() {
        let r = row_of[t];
        if r == u32::MAX {
            continue;
        }
        for (chunk, &freq) in postings.chunks().zip(&postings.freqs) {
            by_chunk[chunk as usize].push((r, weight(freq, lexical.idf[t])));
        }
    }
    let mut samples: Vec<Sample> = by_chunk
        .into_iter()
        .enumerate()
        .filter_map(|(c, rows)| {
            let target = chunk_vectors.get(c * dim..(c + 1) * dim)?;
            Some(Sample {
                rows,
                target: std::borrow::Cow::Borrowed(target),
            })
        })
        .collect();
    // And the titles and headings, each once.
    if options.headings {
        let analyzer = index.analyzer();
        let mut texts: Vec<String> = index
            .documents
            .iter()
            .map(|d| d.title.clone())
            .chain(
                index
                    .chunks
                    .iter()
                    .flat_map(|c| c.heading_path.iter().cloned()),
            )
            .filter(|t| !t.trim().is_empty())
            .collect();
        texts.sort();
        texts.dedup();
        let targets = embed_all(embedder, &texts, &|_, _| {})?;
        for (text, target) in texts.iter().zip(targets.chunks_exact(dim)) {
            let mut rows: Vec<(u32, f32)> = Vec::new();
            for (t, w) in query_terms(lexical, &analyzer.terms(text)) {
                let r = row_of[t as usize];
                if r != u32::MAX {
                    rows.push((r, w));
                }
            }
            samples.push(Sample {
                rows,
                target: std::borrow::Cow::Owned(target.to_vec()),
            });
        }
    }
    for sample in &mut samples {
        let total: f32 = sample.rows.iter().map(|r| r.1).sum();
        if total > 0.0 {
            sample.rows.iter_mut().for_each(|r| r.1 /= total);
        } else {
            sample.rows.clear();
        }
    }
    samples.retain(|s| !s.rows.is_empty());

    let rows = solve(&samples, &start, terms.len(), dim, options);
    Ok(Distilled { terms, rows })
}

/// Columns solved together: one cache line of f32s per row.
const BLOCK: usize = 16;

/// Ridge regression by conjugate gradients: the rows X (n × dim) minimizing
/// Σ_s |A_s X − e_s|² + λ |X − X₀|², with λ = `ridge` × the mean of diag(AᵀA).
/// Each block of columns is solved alone, in a fixed order, from X₀.
fn solve(
    samples: &[Sample],
    start: &[f32],
    n: usize,
    dim: usize,
    options: &DistillOptions,
) -> Vec<f32> {
    let mut diagonal = vec![0f32; n];
    for s in samples {
        for &(r, a) in &s.rows {
            diagonal[r as usize] += a * a;
        }
    }
    let lambda = options.ridge * diagonal.iter().sum::<f32>() / n.max(1) as f32;
    let blocks: Vec<Vec<f32>> = (0..dim.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let cols = (b * BLOCK..((b + 1) * BLOCK).min(dim)).collect::<Vec<_>>();
            solve_block(samples, start, n, dim, &cols, lambda, options.iterations)
        })
        .collect();
    let mut rows = vec![0f32; n * dim];
    for (b, block) in blocks.iter().enumerate() {
        for r in 0..n {
            for j in 0..BLOCK.min(dim - b * BLOCK) {
                rows[r * dim + b * BLOCK + j] = block[r * BLOCK + j];
            }
        }
    }
    rows
}

/// (AᵀA + λI) p for a block of columns (n × BLOCK, row-major).
fn apply(samples: &[Sample], p: &[f32], lambda: f32, out: &mut [f32]) {
    for (o, x) in out.iter_mut().zip(p) {
        *o = lambda * x;
    }
    let mut y = [0f32; BLOCK];
    for s in samples {
        y.fill(0.0);
        for &(r, a) in &s.rows {
            let row = &p[r as usize * BLOCK..][..BLOCK];
            for j in 0..BLOCK {
                y[j] += a * row[j];
            }
        }
        for &(r, a) in &s.rows {
            let row = &mut out[r as usize * BLOCK..][..BLOCK];
            for j in 0..BLOCK {
                row[j] += a * y[j];
            }
        }
    }
}

fn solve_block(
    samples: &[Sample],
    start: &[f32],
    n: usize,
    dim: usize,
    cols: &[usize],
    lambda: f32,
    iterations: usize,
) -> Vec<f32> {
    // x₀ = X₀; b = Aᵀe + λX₀.
    let mut x = vec![0f32; n * BLOCK];
    for r in 0..n {
        for (j, &c) in cols.iter().enumerate() {
            x[r * BLOCK + j] = start[r * dim + c];
        }
    }
    let mut b: Vec<f32> = x.iter().map(|v| lambda * v).collect();
    for s in samples {
        for &(r, a) in &s.rows {
            for (j, &c) in cols.iter().enumerate() {
                b[r as usize * BLOCK + j] += a * s.target[c];
            }
        }
    }
    let mut ap = vec![0f32; n * BLOCK];
    apply(samples, &x, lambda, &mut ap);
    let mut r: Vec<f32> = b.iter().zip(&ap).map(|(b, a)| b - a).collect();
    let mut p = r.clone();
    let dots = |u: &[f32], v: &[f32]| {
        let mut d = [0f64; BLOCK];
        for (cu, cv) in u.chunks_exact(BLOCK).zip(v.chunks_exact(BLOCK)) {
            for j in 0..BLOCK {
                d[j] += cu[j] as f64 * cv[j] as f64;
            }
        }
        d
    };
    // Each column's a / b (0 where b is not positive).
    let ratio = |a: &[f64], b: &[f64]| -> Vec<f32> {
        (0..BLOCK)
            .map(|j| {
                if b[j] > 0.0 {
                    (a[j] / b[j]) as f32
                } else {
                    0.0
                }
            })
            .collect()
    };
    let mut rs = dots(&r, &r);
    for _ in 0..iterations {
        apply(samples, &p, lambda, &mut ap);
        let pap = dots(&p, &ap);
        let alpha = ratio(&rs, &pap);
        for i in 0..n * BLOCK {
            let j = i % BLOCK;
            x[i] += alpha[j] * p[i];
            r[i] -= alpha[j] * ap[i];
        }
        let next = dots(&r, &r);
        let beta = ratio(&next, &rs);
        for i in 0..n * BLOCK {
            p[i] = r[i] + beta[i % BLOCK] * p[i];
        }
        rs = next;
    }
    x
}

/// Distills the static tier of an index with vectors (`distill`) and names its rows in
/// the index: the rows' packs, and (rows, seconds) for the summary line.
#[allow(clippy::type_complexity)]
pub fn distill_static(
    index: &mut Index,
    embedder: &Embedder,
) -> Result<(Vec<(String, Vec<u8>)>, Option<(usize, f64)>)> {
    let Some(vectors) = &index.vectors else {
        return Ok((Vec::new(), None));
    };
    let began = std::time::Instant::now();
    let distilled = distill(index, &vectors.to_flat(), embedder, &Default::default())?;
    let (rows, packs) = distilled.write(index);
    let done = (rows.len(), began.elapsed().as_secs_f64());
    index.statics = Some(rows);
    Ok((packs, Some(done)))
}
