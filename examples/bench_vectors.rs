//! Vector search benchmark (native): HNSW build time, recall@10 against the exact scan, and
//! per-query latency of both, at 1k, 10k and 100k vectors. It also writes index folders of those
//! sizes for the wasm benchmark (`bench/query.mjs`).
//!
//! The vectors are real all-MiniLM-L6-v2 chunk embeddings from an index built with `cairn index`
//! (the five eval collections together give about 7,500). Sizes beyond that reuse them with a
//! small Gaussian perturbation (σ = 0.02 a component before renormalizing), which keeps the real
//! distribution's shape; the figures say which sizes are real.
//!
//! Usage: cargo run --example bench_vectors -- SOURCE_DIR[,SOURCE_DIR...] OUT_DIR [ef_construction ...]
//! (the vectors of every source are pooled; the first source's chunks give the written indexes
//! their texts)

use std::time::Instant;

use cairn::index::lexical::{ChunkTerms, LexicalIndex};
use cairn::index::vector::{GraphSettings, Precision, VectorIndex};
use cairn::index::{format, Index};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [source, out, efs @ ..] = &args[..] else {
        eprintln!("usage: bench_vectors SOURCE_INDEX_DIR OUT_DIR [ef_construction ...]");
        std::process::exit(2);
    };
    let efs: Vec<usize> = if efs.is_empty() {
        vec![64]
    } else {
        efs.iter().map(|e| e.parse().expect("a number")).collect()
    };
    let open = |dir: &str| {
        format::read(&std::fs::read(format!("{dir}/index.cairn")).expect("a source index"))
            .expect("a valid index")
    };
    let sources: Vec<Index> = source.split(',').map(open).collect();
    let index = &sources[0];
    let vectors = index.vectors.as_ref().expect("an index with embeddings");
    let dim = vectors.dimension();
    let real: Vec<f32> = sources
        .iter()
        .flat_map(|s| s.vectors.as_ref().expect("embeddings").to_flat())
        .collect();
    let real_count = real.len() / dim;
    println!("source: {real_count} real embeddings of dimension {dim}");
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;

    // Queries: 200 held-out real vectors, perturbed so none is an exact copy of a point.
    let queries: Vec<Vec<f32>> = (0..200)
        .map(|i| perturb(&real[(i * 37 % real_count) * dim..][..dim], 0.05, &mut rng))
        .collect();

    for &n in &[1_000usize, 10_000, 100_000] {
        let mut flat = Vec::with_capacity(n * dim);
        for i in 0..n {
            let v = &real[(i % real_count) * dim..][..dim];
            if i < real_count {
                flat.extend_from_slice(v);
            } else {
                flat.extend(perturb(v, 0.02, &mut rng));
            }
        }
        let exact = VectorIndex::flat(vectors.model.clone(), flat.clone(), Precision::F32);
        let started = Instant::now();
        let truth: Vec<Vec<u32>> = queries
            .iter()
            .map(|q| {
                exact
                    .search_exact(q, 10, None)
                    .iter()
                    .map(|h| h.chunk)
                    .collect()
            })
            .collect();
        let exact_ms = started.elapsed().as_secs_f64() * 1000.0 / queries.len() as f64;
        let real_note = if n <= real_count {
            "real"
        } else {
            "real + perturbed copies"
        };
        println!("\n{n} vectors ({real_note}): exact scan {exact_ms:.3} ms/query");
        for &ef in &efs {
            let settings = GraphSettings {
                ef_construction: ef,
                ..GraphSettings::default()
            };
            let started = Instant::now();
            let graph = VectorIndex::graph(vectors.model.clone(), flat.clone(), settings);
            let build_s = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let found: Vec<Vec<u32>> = queries
                .iter()
                .map(|q| {
                    graph
                        .search(q, 10, None)
                        .unwrap()
                        .iter()
                        .map(|h| h.chunk)
                        .collect()
                })
                .collect();
            let hnsw_ms = started.elapsed().as_secs_f64() * 1000.0 / queries.len() as f64;
            let hits: usize = truth
                .iter()
                .zip(&found)
                .map(|(t, f)| f.iter().filter(|c| t.contains(c)).count())
                .sum();
            let recall = hits as f64 / (10 * queries.len()) as f64;
            println!(
                "  hnsw ef_construction {ef}, ef_search {}: build {build_s:.1} s, recall@10 {recall:.4}, {hnsw_ms:.3} ms/query",
                settings.ef_search
            );
            if ef == efs[0] {
                write_index(index, out, &format!("graph-{n}"), graph);
            }
        }
        let int8 = VectorIndex::flat(vectors.model.clone(), flat.clone(), Precision::Int8);
        let int8_truth: Vec<Vec<u32>> = queries
            .iter()
            .map(|q| {
                int8.search(q, 10, None)
                    .unwrap()
                    .iter()
                    .map(|h| h.chunk)
                    .collect()
            })
            .collect();
        let hits: usize = truth
            .iter()
            .zip(&int8_truth)
            .map(|(t, f)| f.iter().filter(|c| t.contains(c)).count())
            .sum();
        println!(
            "  int8 scan: recall@10 {:.4} against the f32 scan",
            hits as f64 / (10 * queries.len()) as f64
        );
        write_index(index, out, &format!("int8-{n}"), int8);
        write_index(index, out, &format!("flat-{n}"), exact);
    }
}

/// Writes an index of `n` chunks (texts reused from the source) with these vectors.
fn write_index(source: &Index, out: &str, name: &str, vectors: VectorIndex) {
    let n = vectors.len();
    let dir = format!("{out}/{name}");
    std::fs::create_dir_all(&dir).unwrap();
    // One document a chunk, so the cycled chunks stay grouped by document.
    let mut documents = Vec::with_capacity(n);
    let chunks: Vec<_> = (0..n)
        .map(|i| {
            let mut chunk = source.chunks[i % source.chunks.len()].clone();
            let mut document = source.document_of(&chunk).clone();
            document.id = format!("{}~{i}", document.id);
            documents.push(document);
            chunk.doc = i as u32;
            chunk
        })
        .collect();
    let analyzer = source.analyzer();
    let terms: Vec<ChunkTerms> = chunks
        .iter()
        .map(|c| ChunkTerms {
            document: c.doc,
            terms: analyzer.terms(&cairn::index::indexed_text(&documents[c.doc as usize], c)),
        })
        .collect();
    let index = Index::new(
        source.settings.clone(),
        documents,
        chunks,
        Vec::new(),
        LexicalIndex::build(source.settings.bm25, terms),
        Some(vectors),
    );
    std::fs::write(format!("{dir}/index.cairn"), format::write(&index).unwrap()).unwrap();
}

/// `v` plus Gaussian noise of deviation `sigma` per component, renormalized.
fn perturb(v: &[f32], sigma: f32, rng: &mut u64) -> Vec<f32> {
    let mut next = || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        (*rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out: Vec<f32> = v
        .iter()
        .map(|x| {
            // Box-Muller
            let (u1, u2) = (next().max(1e-12), next());
            x + sigma * ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
        })
        .collect();
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
    out.iter_mut().for_each(|x| *x /= norm);
    out
}
