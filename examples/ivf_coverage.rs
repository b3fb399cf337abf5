//! How much of the exact top 10 the probed IVF partitions hold, with the partitions ranked as a
//! query ranks them (the centroids' binary codes in the meta) and exactly (their int8
//! centroids), at several scan budgets: where the vector side's recall is lost before any code
//! is scanned. Builds the partitions as `cairn index --layout fragments` would.
//!
//!   cargo run --release --example ivf_coverage -- INDEX.cairn QUERIES.f32 [PARTITIONS]

use cairn::fragment::{write::ivf, CodeQuery};
use cairn::index::format;
use cairn::index::vector::dot;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index, queries, rest @ ..] = &args[..] else {
        return Err("usage: ivf_coverage INDEX.cairn QUERIES.f32 [PARTITIONS]".into());
    };
    let index = format::read(&std::fs::read(index)?)?;
    let vectors = index.vectors.as_ref().ok_or("the index has no vectors")?.to_flat();
    let dim = index.vectors.as_ref().map_or(0, |v| v.dimension());
    let queries: Vec<f32> = std::fs::read(queries)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let n = vectors.len() / dim;
    let k = match rest.first() {
        Some(k) => k.parse()?,
        None => (2.0 * (n as f64).sqrt()).round() as usize,
    };
    let (centroids, partitions, _) = ivf(&vectors, dim, k);
    let mut owner = vec![0usize; n];
    for (j, p) in partitions.iter().enumerate() {
        let mut chunk = 0u32;
        for gap in &p.chunk_gaps {
            chunk += gap;
            owner[chunk as usize] = j;
        }
    }
    let exact_centroids: Vec<Vec<f32>> = partitions
        .iter()
        .map(|p| p.centroid.iter().map(|&x| x as f32 * p.centroid_scale).collect())
        .collect();
    let budgets = [500u32, 1_000, 2_000, 4_000];
    let mut held = vec![[0usize; 2]; budgets.len()];
    let code_bytes = dim.div_ceil(8);
    for q in queries.chunks_exact(dim) {
        let mut scored: Vec<(f32, usize)> = (0..n).map(|i| (dot(q, &vectors[i * dim..(i + 1) * dim]), i)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let top: Vec<usize> = scored[..10].iter().map(|&(_, i)| owner[i]).collect();
        let codes = CodeQuery::new(q);
        let base = dot(q, &centroids.mean);
        let mut by_code: Vec<(f32, usize)> = (0..k)
            .map(|j| {
                let code = &centroids.codes[j * code_bytes..(j + 1) * code_bytes];
                (codes.estimate(base, centroids.lengths.get(j), code), j)
            })
            .collect();
        let mut exactly: Vec<(f32, usize)> = (0..k).map(|j| (dot(q, &exact_centroids[j]), j)).collect();
        by_code.sort_by(|a, b| b.0.total_cmp(&a.0));
        exactly.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (b, &budget) in budgets.iter().enumerate() {
            for (r, ranking) in [&by_code, &exactly].into_iter().enumerate() {
                // As the loader probes: the nearest partitions until they hold the budget, at least 4.
                let (mut codes_held, mut probed) = (0u32, Vec::new());
                for &(_, j) in ranking {
                    if codes_held >= budget && probed.len() >= 4 {
                        break;
                    }
                    codes_held += centroids.sizes[j];
                    probed.push(j);
                }
                held[b][r] += top.iter().filter(|p| probed.contains(p)).count();
            }
        }
    }
    let total = (10 * queries.len() / dim) as f64;
    println!("{n} vectors, {k} partitions, {} queries", queries.len() / dim);
    println!("| scan budget (codes) | top 10 in the probed partitions, ranked by code | ranked exactly |");
    println!("|---|---|---|");
    for (b, budget) in budgets.iter().enumerate() {
        println!("| {budget} | {:.3} | {:.3} |", held[b][0] as f64 / total, held[b][1] as f64 / total);
    }
    Ok(())
}
