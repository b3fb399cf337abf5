//! Which compact code a partition scan should hold: the vector side's recall@10 against the exact
//! top 10 when the probed partitions' members are ranked by (a) the layout's binary codes of
//! their differences from the centroid (48 bytes at 384 dimensions, and a length byte) or (b)
//! 4-bit product-quantization codes of the same differences (one byte for two of 48 subspaces of
//! 8 dimensions: 24 bytes; 16 centroids a subspace, trained by k-means on a sample, one codebook
//! for the whole index) and the best `R` of them re-scored exactly. Probes as the loader does
//! (centroids ranked by their codes, a budget of codes, at least 4 partitions).
//!
//!   cargo run --release --example code_recall -- INDEX.cairn QUERIES.f32 [BUDGET]

use cairn::fragment::{write::ivf, CodeQuery};
use cairn::index::format;
use cairn::index::vector::dot;

const SUBSPACES: usize = 48;
const LEVELS: usize = 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [index, queries, rest @ ..] = &args[..] else {
        return Err("usage: code_recall INDEX.cairn QUERIES.f32 [BUDGET]".into());
    };
    let budget: u32 = rest.first().map_or(Ok(1_000), |b| b.parse())?;
    let index = format::read(&std::fs::read(index)?)?;
    let vectors = index.vectors.as_ref().ok_or("the index has no vectors")?.to_flat();
    let dim = index.vectors.as_ref().map_or(0, |v| v.dimension());
    let queries: Vec<f32> = std::fs::read(queries)?
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let n = vectors.len() / dim;
    let k = (2.0 * (n as f64).sqrt()).round() as usize;
    let row = |i: usize| &vectors[i * dim..(i + 1) * dim];
    let (centroids, partitions, _) = ivf(&vectors, dim, k);
    let bases: Vec<Vec<f32>> = partitions
        .iter()
        .map(|p| p.centroid.iter().map(|&x| x as f32 * p.centroid_scale).collect())
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
    // Differences from the centroids, in partition order.
    let mut differences = Vec::with_capacity(n * dim);
    for (j, m) in members.iter().enumerate() {
        for &i in m {
            differences.extend(row(i).iter().zip(&bases[j]).map(|(x, b)| x - b));
        }
    }
    let sub = dim / SUBSPACES;
    let codebook = train(&differences, dim, sub);
    let pq: Vec<u8> = differences
        .chunks_exact(dim)
        .flat_map(|d| (0..SUBSPACES).map(|m| nearest(&codebook[m], &d[m * sub..(m + 1) * sub], sub) as u8).collect::<Vec<_>>())
        .collect();
    let code_bytes = dim.div_ceil(8);
    let depths = [25usize, 50, 100, 200];
    let mut found = [[0usize; 2]; 4];
    let mut scanned = 0usize;
    for q in queries.chunks_exact(dim) {
        let mut exact: Vec<(f32, usize)> = (0..n).map(|i| (dot(q, row(i)), i)).collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        let truth: Vec<usize> = exact[..10].iter().map(|&(_, i)| i).collect();
        let codes = CodeQuery::new(q);
        let base = dot(q, &centroids.mean);
        let mut ranked: Vec<(f32, usize)> = (0..k)
            .map(|j| (codes.estimate(base, centroids.lengths.get(j), &centroids.codes[j * code_bytes..(j + 1) * code_bytes]), j))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (mut held, mut probed) = (0u32, Vec::new());
        for &(_, j) in &ranked {
            if held >= budget && probed.len() >= 4 {
                break;
            }
            held += centroids.sizes[j];
            probed.push(j);
        }
        // The query's table for the PQ codes: q_m · centroid, per subspace and level.
        let table: Vec<f32> = (0..SUBSPACES)
            .flat_map(|m| (0..LEVELS).map(move |l| (m, l)))
            .map(|(m, l)| dot(&q[m * sub..(m + 1) * sub], &codebook[m][l * sub..(l + 1) * sub]))
            .collect();
        let mut by_binary = Vec::new();
        let mut by_pq = Vec::new();
        for &j in &probed {
            let offset: usize = members[..j].iter().map(Vec::len).sum();
            let qc = dot(q, &bases[j]);
            let p = &partitions[j];
            for (r, &i) in members[j].iter().enumerate() {
                by_binary.push((codes.estimate(qc, p.lengths.get(r), &p.codes[r * code_bytes..(r + 1) * code_bytes]), i));
                let code = &pq[(offset + r) * SUBSPACES..(offset + r + 1) * SUBSPACES];
                let s: f32 = code.iter().enumerate().map(|(m, &c)| table[m * LEVELS + c as usize]).sum();
                by_pq.push((qc + s, i));
            }
        }
        scanned += by_binary.len();
        for ranking in [&mut by_binary, &mut by_pq] {
            ranking.sort_by(|a, b| b.0.total_cmp(&a.0));
        }
        for (d, &depth) in depths.iter().enumerate() {
            for (c, ranking) in [&by_binary, &by_pq].into_iter().enumerate() {
                let mut top: Vec<(f32, usize)> = ranking.iter().take(depth).map(|&(_, i)| (dot(q, row(i)), i)).collect();
                top.sort_by(|a, b| b.0.total_cmp(&a.0));
                found[d][c] += top.iter().take(10).filter(|(_, i)| truth.contains(i)).count();
            }
        }
    }
    let count = queries.len() / dim;
    println!("{n} vectors, {k} partitions, {count} queries, a budget of {budget} codes ({} scanned a query)", scanned / count);
    println!("| re-scored | binary, 48 + 1 bytes | PQ 48 × 4 bits, 24 bytes |");
    println!("|---|---|---|");
    for (d, depth) in depths.iter().enumerate() {
        let share = |c: usize| found[d][c] as f64 / (10 * count) as f64;
        println!("| {depth} | {:.3} | {:.3} |", share(0), share(1));
    }
    Ok(())
}

/// 16 centroids for each subspace by k-means over a sample of the differences.
fn train(differences: &[f32], dim: usize, sub: usize) -> Vec<Vec<f32>> {
    let n = differences.len() / dim;
    let step = (n / 20_000).max(1);
    let sample: Vec<usize> = (0..n).step_by(step).collect();
    (0..SUBSPACES)
        .map(|m| {
            let part = |i: usize| &differences[i * dim + m * sub..i * dim + (m + 1) * sub];
            let mut book: Vec<f32> = (0..LEVELS).flat_map(|l| part(sample[l * sample.len() / LEVELS]).to_vec()).collect();
            for _ in 0..15 {
                let mut sums = vec![0f32; LEVELS * sub];
                let mut counts = vec![0usize; LEVELS];
                for &i in &sample {
                    let l = nearest(&book, part(i), sub);
                    counts[l] += 1;
                    sums[l * sub..(l + 1) * sub].iter_mut().zip(part(i)).for_each(|(s, x)| *s += x);
                }
                for l in 0..LEVELS {
                    if counts[l] > 0 {
                        for d in 0..sub {
                            book[l * sub + d] = sums[l * sub + d] / counts[l] as f32;
                        }
                    }
                }
            }
            book
        })
        .collect()
}

fn nearest(book: &[f32], x: &[f32], sub: usize) -> usize {
    let distance = |l: usize| book[l * sub..(l + 1) * sub].iter().zip(x).map(|(c, v)| (c - v) * (c - v)).sum::<f32>();
    (0..LEVELS).min_by(|&a, &b| distance(a).total_cmp(&distance(b))).unwrap_or(0)
}
