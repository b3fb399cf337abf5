//! Where the IVF vector side of a fragmented index loses recall@10 against the exact top 10, on
//! an index with vectors and query vectors (as `synthetic_site` writes them). Builds the
//! partitions as `cairn index --layout fragments` does (`PARTITIONS` of them, default as it
//! does), then prints two tables:
//! - coverage: the share of the exact top 10 that lies in the probed partitions at all, at scan
//!   budgets of 500 to 4,000 codes, with the centroids ranked by the meta's binary codes (as the
//!   loader ranks them) and exactly (their int8 centroids);
//! - re-scoring: at the scan budget `BUDGET` (default 1,000), the exact top 10 found when the
//!   probed members are ranked by the layout's binary codes of their differences from the
//!   centroid (48 bytes at 384 dimensions, and a length byte), or by 4-bit product-quantization
//!   codes of the same differences (48 subspaces of 8 dimensions, two to a byte: 24 bytes; 16
//!   centroids a subspace by k-means on a sample, one codebook for the index), and the best `R`
//!   re-scored exactly.
//!
//!   cargo run --release --example ivf_recall -- INDEX.cairn QUERIES.f32 [BUDGET [PARTITIONS]]

use cairn::fragment::write::{self, ivf};
use cairn::fragment::{default_probes, CodeQuery};
use cairn::index::format;
use cairn::index::vector::dot;

const SUBSPACES: usize = 48;
const LEVELS: usize = 16;
const BUDGETS: [u32; 4] = [500, 1_000, 2_000, 4_000];
const DEPTHS: [usize; 5] = [25, 40, 50, 100, 200];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index, queries, rest @ ..] = &args[..] else {
        return Err("usage: ivf_recall INDEX.cairn QUERIES.f32 [BUDGET [PARTITIONS]]".into());
    };
    let budget: u32 = rest.first().map_or(Ok(1_000), |b| b.parse())?;
    let partitions: Option<usize> = rest.get(1).map(|k| k.parse()).transpose()?;
    let index = format::read(&std::fs::read(index)?)?;
    let stored = index.vectors.as_ref().ok_or("the index has no vectors")?;
    let (vectors, dim) = (stored.to_flat(), stored.dimension());
    let queries: Vec<f32> = std::fs::read(queries)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let n = vectors.len() / dim;
    let k = partitions.unwrap_or_else(|| write::default_partitions(n));
    let row = |i: usize| &vectors[i * dim..(i + 1) * dim];
    let (centroids, partitions, _) = ivf(&vectors, dim, k, 0);
    let bases: Vec<Vec<f32>> = partitions
        .iter()
        .map(|p| {
            p.centroid
                .iter()
                .map(|&x| x as f32 * p.centroid_scale)
                .collect()
        })
        .collect();
    let members: Vec<Vec<usize>> = partitions
        .iter()
        .map(|p| {
            let mut chunk = 0usize;
            p.chunk_gaps
                .iter()
                .map(|&gap| {
                    chunk += gap as usize;
                    chunk
                })
                .collect()
        })
        .collect();
    let mut owner = vec![0usize; n];
    for (j, m) in members.iter().enumerate() {
        m.iter().for_each(|&i| owner[i] = j);
    }
    // The differences from the centroids, in partition order, and their PQ codes.
    let differences: Vec<f32> = members
        .iter()
        .enumerate()
        .flat_map(|(j, m)| {
            let base = &bases[j];
            m.iter()
                .flat_map(move |&i| row(i).iter().zip(base).map(|(x, b)| x - b))
        })
        .collect();
    let sub = dim / SUBSPACES;
    let codebook = train(&differences, dim, sub);
    let pq: Vec<u8> = differences
        .chunks_exact(dim)
        .flat_map(|d| {
            (0..SUBSPACES)
                .map(|m| nearest(&codebook[m], &d[m * sub..(m + 1) * sub], sub) as u8)
                .collect::<Vec<_>>()
        })
        .collect();
    let first_member: Vec<usize> = members
        .iter()
        .scan(0, |at, m| {
            *at += m.len();
            Some(*at - m.len())
        })
        .collect();

    let code_bytes = dim.div_ceil(8);
    let mut covered = [[0usize; 2]; BUDGETS.len()];
    let mut found = [[0usize; 2]; DEPTHS.len()];
    let mut scanned = 0usize;
    for q in queries.chunks_exact(dim) {
        let mut exact: Vec<(f32, usize)> = (0..n).map(|i| (dot(q, row(i)), i)).collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        let truth: Vec<usize> = exact[..10].iter().map(|&(_, i)| i).collect();
        let codes = CodeQuery::new(q);
        let base = dot(q, &centroids.mean);
        let mut by_code: Vec<(f32, usize)> = (0..k)
            .map(|j| {
                let code = &centroids.codes[j * code_bytes..(j + 1) * code_bytes];
                (codes.estimate(base, centroids.lengths.get(j), code), j)
            })
            .collect();
        let mut exactly: Vec<(f32, usize)> = (0..k).map(|j| (dot(q, &bases[j]), j)).collect();
        by_code.sort_by(|a, b| b.0.total_cmp(&a.0));
        exactly.sort_by(|a, b| b.0.total_cmp(&a.0));
        // As the loader probes (`default_probes`).
        let probe = |ranking: &[(f32, usize)], budget: u32| {
            let probes = default_probes(ranking.iter().map(|&(_, j)| centroids.sizes[j]), budget);
            ranking
                .iter()
                .take(probes)
                .map(|&(_, j)| j)
                .collect::<Vec<_>>()
        };
        for (b, &budget) in BUDGETS.iter().enumerate() {
            for (r, ranking) in [&by_code, &exactly].into_iter().enumerate() {
                let probed = probe(ranking, budget);
                covered[b][r] += truth
                    .iter()
                    .filter(|&&i| probed.contains(&owner[i]))
                    .count();
            }
        }

        // The query's table for the PQ codes: q's part in each subspace · each level's centroid.
        let table: Vec<f32> = (0..SUBSPACES * LEVELS)
            .map(|t| {
                let (m, l) = (t / LEVELS, t % LEVELS);
                dot(
                    &q[m * sub..(m + 1) * sub],
                    &codebook[m][l * sub..(l + 1) * sub],
                )
            })
            .collect();
        let (mut by_binary, mut by_pq) = (Vec::new(), Vec::new());
        for j in probe(&by_code, budget) {
            let (qc, p) = (dot(q, &bases[j]), &partitions[j]);
            for (r, &i) in members[j].iter().enumerate() {
                let code = &p.codes[r * code_bytes..(r + 1) * code_bytes];
                by_binary.push((codes.estimate(qc, p.lengths.get(r), code), i));
                let at = first_member[j] + r;
                let code = &pq[at * SUBSPACES..(at + 1) * SUBSPACES];
                by_pq.push((
                    qc + code
                        .iter()
                        .enumerate()
                        .map(|(m, &c)| table[m * LEVELS + c as usize])
                        .sum::<f32>(),
                    i,
                ));
            }
        }
        scanned += by_binary.len();
        for (c, ranking) in [&mut by_binary, &mut by_pq].into_iter().enumerate() {
            ranking.sort_by(|a, b| b.0.total_cmp(&a.0));
            for (d, &depth) in DEPTHS.iter().enumerate() {
                let mut top: Vec<(f32, usize)> = ranking
                    .iter()
                    .take(depth)
                    .map(|&(_, i)| (dot(q, row(i)), i))
                    .collect();
                top.sort_by(|a, b| b.0.total_cmp(&a.0));
                found[d][c] += top
                    .iter()
                    .take(10)
                    .filter(|(_, i)| truth.contains(i))
                    .count();
            }
        }
    }
    let count = queries.len() / dim;
    let share = |x: usize| x as f64 / (10 * count) as f64;
    println!("{n} vectors, {k} partitions, {count} queries");
    println!("\n| scan budget (codes) | exact top 10 in the probed partitions, centroids ranked by code | ranked exactly |");
    println!("|---|---|---|");
    for (b, budget) in BUDGETS.iter().enumerate() {
        println!(
            "| {budget} | {:.3} | {:.3} |",
            share(covered[b][0]),
            share(covered[b][1])
        );
    }
    println!(
        "\nA budget of {budget} codes ({} scanned a query):",
        scanned / count.max(1)
    );
    println!("| re-scored | recall@10, binary codes (48 + 1 bytes) | PQ, 48 × 4 bits (24 bytes) |");
    println!("|---|---|---|");
    for (d, depth) in DEPTHS.iter().enumerate() {
        println!(
            "| {depth} | {:.3} | {:.3} |",
            share(found[d][0]),
            share(found[d][1])
        );
    }
    Ok(())
}

/// 16 centroids for each subspace by k-means over a sample of the differences.
fn train(differences: &[f32], dim: usize, sub: usize) -> Vec<Vec<f32>> {
    let n = differences.len() / dim;
    let sample: Vec<usize> = (0..n).step_by((n / 20_000).max(1)).collect();
    (0..SUBSPACES)
        .map(|m| {
            let part = |i: usize| &differences[i * dim + m * sub..i * dim + (m + 1) * sub];
            let mut book: Vec<f32> = (0..LEVELS)
                .flat_map(|l| part(sample[l * sample.len() / LEVELS]).to_vec())
                .collect();
            for _ in 0..15 {
                let mut sums = vec![0f32; LEVELS * sub];
                let mut counts = vec![0usize; LEVELS];
                for &i in &sample {
                    let l = nearest(&book, part(i), sub);
                    counts[l] += 1;
                    sums[l * sub..(l + 1) * sub]
                        .iter_mut()
                        .zip(part(i))
                        .for_each(|(s, x)| *s += x);
                }
                for l in (0..LEVELS).filter(|&l| counts[l] > 0) {
                    for d in 0..sub {
                        book[l * sub + d] = sums[l * sub + d] / counts[l] as f32;
                    }
                }
            }
            book
        })
        .collect()
}

/// The level of `book` nearest `x`.
fn nearest(book: &[f32], x: &[f32], sub: usize) -> usize {
    let distance = |l: usize| {
        book[l * sub..(l + 1) * sub]
            .iter()
            .zip(x)
            .map(|(c, v)| (c - v) * (c - v))
            .sum::<f32>()
    };
    (0..LEVELS)
        .min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
        .unwrap_or(0)
}
