//! Recall@10 of IVF search against the exact scan, by partitions, probes and how many
//! candidates of a binary (sign) code scan are re-scored with their int8 vectors; and the bytes
//! each costs a query. For choosing the vector layout of a fragmented index.
//!
//!   cargo run --example ivf_recall -- SITE_DIR   (a folder `synthetic_site` wrote)

use cairn::fragment::write::ivf;
use cairn::index::format;
use cairn::index::vector::dot;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: ivf_recall SITE_DIR")?;
    let index = format::read(&std::fs::read(format!("{dir}/single/index.cairn"))?)?;
    let vectors = index.vectors.as_ref().ok_or("no vectors")?;
    let dim = vectors.dimension();
    let flat = vectors.to_flat();
    let n = flat.len() / dim;
    let queries: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/queries.json"))?)?;
    let queries: Vec<Vec<f32>> = queries
        .iter()
        .map(|q| {
            q["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect()
        })
        .collect();
    let row = |i: usize| &flat[i * dim..(i + 1) * dim];
    let truth: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| top(n, 10, |i| dot(q, row(i))))
        .collect();
    for k in [316usize, 632, 1000] {
        let started = std::time::Instant::now();
        let (centroids, partitions, _) = ivf(&flat, dim, k);
        let build = started.elapsed().as_secs_f64();
        let members: Vec<Vec<usize>> = partitions
            .iter()
            .map(|p| {
                let mut c = 0usize;
                p.chunk_gaps
                    .iter()
                    .map(|&g| {
                        c += g as usize;
                        c
                    })
                    .collect()
            })
            .collect();
        let centroid = |j: usize| -> Vec<f32> {
            centroids.values[j * dim..(j + 1) * dim]
                .iter()
                .map(|&x| x as f32 * centroids.scales[j])
                .collect()
        };
        let cents: Vec<Vec<f32>> = (0..k).map(centroid).collect();
        println!("k {k} ({:.1} s k-means, {:.0} a partition)", build, n as f64 / k as f64);
        for probes in [1usize, 2, 4, 8, 16] {
            for rescore in [64usize] {
                let mut found = 0;
                let mut scanned = 0;
                for (q, t) in queries.iter().zip(&truth) {
                    // Centroids as binary codes too (48 bytes each): ranked by the query
                    // against their signs, when CAIRN_BINARY_CENTROIDS is set.
                    let near = if std::env::var_os("CAIRN_BINARY_CENTROIDS").is_some() {
                        top(k, probes, |j| cents[j].iter().zip(q).map(|(c, y)| if *c >= 0.0 { *y } else { -*y }).sum())
                    } else {
                        top(k, probes, |j| dot(q, &cents[j]))
                    };
                    let candidates: Vec<usize> =
                        near.iter().flat_map(|&j| members[j].iter().copied()).collect();
                    scanned += candidates.len();
                    // Binary codes: the query against each component's sign.
                    let binary = |i: usize| -> f32 {
                        row(i)
                            .iter()
                            .zip(q)
                            .map(|(x, y)| if *x >= 0.0 { *y } else { -*y })
                            .sum()
                    };
                    let shortlist = top(candidates.len(), rescore.min(candidates.len()), |c| {
                        binary(candidates[c])
                    });
                    let best = top(shortlist.len(), 10, |s| dot(q, row(candidates[shortlist[s]])));
                    let best: Vec<usize> =
                        best.iter().map(|&s| candidates[shortlist[s]]).collect();
                    found += t.iter().filter(|c| best.contains(c)).count();
                }
                let per_query = scanned as f64 / queries.len() as f64;
                let rescored = if rescore == usize::MAX { per_query } else { (rescore as f64).min(per_query) };
                println!(
                    "  probes {probes:>2} rescore {:>5}: recall@10 {:.3}, {:.0} codes scanned ({:.0} kB at 50 B), {:.0} vectors re-scored ({:.0} kB at 392 B), centroids {:.0} kB",
                    if rescore == usize::MAX { "all".to_string() } else { rescore.to_string() },
                    found as f64 / (10 * queries.len()) as f64,
                    per_query,
                    per_query * 50.0 / 1000.0,
                    rescored,
                    rescored * 392.0 / 1000.0,
                    k as f64 * 388.0 / 1000.0,
                );
            }
        }
    }
    Ok(())
}

/// The `k` best of `0..n` by `score`, best first.
fn top(n: usize, k: usize, score: impl Fn(usize) -> f32) -> Vec<usize> {
    let mut all: Vec<(f32, usize)> = (0..n).map(|i| (score(i), i)).collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    all.truncate(k);
    all.into_iter().map(|(_, i)| i).collect()
}
