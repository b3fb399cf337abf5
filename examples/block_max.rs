//! How much of the common terms' postings a query would still need if they were cut into
//! blocks with a maximum score each (block-max pruning, in chunk order) or sorted by score
//! (impact order), for its exact top k: what decides whether term shards can shrink without
//! BM25 moving (`docs/benchmarks.md`, "Pruning common terms").
//!
//!   cargo run --release --example block_max -- INDEX.cairn QUERIES.txt [K] [BIG]
//!
//! For each query it takes the exact top K (the lexical pool a hybrid search fuses is 100) and
//! counts, over the terms with more than BIG postings (1,000: a term shard's size):
//! - block-max: the postings of every block that an oracle (one who knows the K-th score) could
//!   not skip, blocks of 64, 128, 256 or 512 postings cut at document boundaries, a chunk's bound being the other
//!   terms' exact score plus each common term's block maximum;
//! - impact order: the postings whose own score reaches the K-th score / the number of terms,
//!   the least any score-ordered prefix must hold before the top K's members are certain (their
//!   scores are not: a chunk missing from a prefix may hold the term further down).
use cairn::hit::SearchOptions;
use cairn::index::lexical::QueryWord;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let index = cairn::index::format::read(&std::fs::read(&args[1]).expect("read the index"))
        .expect("an index");
    let queries: Vec<String> = std::fs::read_to_string(&args[2])
        .expect("read the queries")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let k: usize = args.get(3).map_or(100, |a| a.parse().expect("K")).max(1);
    let big: usize = args.get(4).map_or(1000, |a| a.parse().expect("BIG"));
    let lexical = &index.lexical;
    let n = index.chunks.len();
    let docs: Vec<u32> = index.chunks.iter().map(|c| c.doc).collect();
    let mut first_of_doc = vec![u32::MAX; index.documents.len()];
    for (c, &d) in docs.iter().enumerate().rev() {
        first_of_doc[d as usize] = c as u32;
    }
    let sizes = [64usize, 128, 256, 512];
    let (mut all, mut impact, mut kept) = (0usize, 0usize, vec![0usize; sizes.len()]);
    println!("| query | common-term postings | block-max 64 | block-max 256 | impact order |");
    println!("|---|---|---|---|---|");
    for query in &queries {
        let analyzed = cairn::search::Query::new(&index.analyzer(), query).unwrap();
        let words =
            cairn::search::expand::expand(lexical, &analyzed, &SearchOptions::default()).words;
        let exact = lexical.search_words(&words, k, None);
        let theta = if exact.len() >= k {
            exact[k - 1].score
        } else {
            0.0
        };
        let terms: usize = words.iter().map(|w| w.alternatives.len()).sum();
        // Each term's own score of every chunk it touches (its postings, and its document part).
        let scored: Vec<Vec<(u32, f32)>> = words
            .iter()
            .flat_map(|w| w.alternatives.iter())
            .map(|&alt| {
                let mut hits = lexical.search_words(
                    &[QueryWord {
                        alternatives: vec![alt],
                    }],
                    usize::MAX,
                    None,
                );
                hits.sort_by_key(|h| h.chunk);
                hits.into_iter().map(|h| (h.chunk, h.score)).collect()
            })
            .collect();
        let common_terms: Vec<u32> = words
            .iter()
            .flat_map(|w| w.alternatives.iter())
            .zip(&scored)
            .filter(|(_, p)| p.len() > big)
            .map(|(&(t, _), _)| t)
            .collect();
        let common: Vec<_> = scored.into_iter().filter(|p| p.len() > big).collect();
        // The rare terms' exact score, lifted to each document's best (its part may reach chunks
        // of the document that lack the term).
        let rare_words: Vec<QueryWord> = words
            .iter()
            .map(|w| QueryWord {
                alternatives: w
                    .alternatives
                    .iter()
                    .copied()
                    .filter(|(t, _)| !common_terms.contains(t))
                    .collect(),
            })
            .collect();
        let mut rare_bound = vec![0f32; index.documents.len()];
        for h in lexical.search_words(&rare_words, usize::MAX, None) {
            let d = docs[h.chunk as usize] as usize;
            rare_bound[d] = rare_bound[d].max(h.score);
        }
        let postings: usize = common.iter().map(Vec::len).sum();
        all += postings;
        let needed_impact: usize = common
            .iter()
            .map(|p| {
                p.iter()
                    .filter(|(_, s)| *s >= theta / terms.max(1) as f32)
                    .count()
            })
            .sum();
        impact += needed_impact;
        let mut row = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            // Each common term's blocks: first chunk (a document's first), maximum, postings.
            let blocks: Vec<Vec<(u32, f32, usize)>> = common
                .iter()
                .map(|p| {
                    let mut blocks = vec![(0u32, 0f32, 0usize)];
                    let mut previous = u32::MAX;
                    for &(chunk, score) in p {
                        let d = docs[chunk as usize];
                        if d != previous && blocks.last().unwrap().2 >= size {
                            blocks.push((first_of_doc[d as usize], 0.0, 0));
                        }
                        previous = d;
                        let last = blocks.last_mut().unwrap();
                        last.1 = last.1.max(score);
                        last.2 += 1;
                    }
                    blocks
                })
                .collect();
            let mut bounds: Vec<u32> = blocks.iter().flatten().map(|b| b.0).collect();
            bounds.push(n as u32);
            bounds.sort_unstable();
            bounds.dedup();
            let mut need: Vec<Vec<bool>> = blocks.iter().map(|b| vec![false; b.len()]).collect();
            for w in bounds.windows(2) {
                let rare_max = (w[0]..w[1])
                    .map(|c| rare_bound[docs[c as usize] as usize])
                    .fold(0f32, f32::max);
                let at: Vec<usize> = blocks
                    .iter()
                    .map(|b| b.partition_point(|x| x.0 <= w[0]) - 1)
                    .collect();
                let bound = rare_max + blocks.iter().zip(&at).map(|(b, &j)| b[j].1).sum::<f32>();
                if bound >= theta {
                    for (t, &j) in at.iter().enumerate() {
                        need[t][j] = true;
                    }
                }
            }
            let fetched: usize = blocks
                .iter()
                .zip(&need)
                .flat_map(|(b, n)| b.iter().zip(n))
                .filter(|(_, &n)| n)
                .map(|(b, _)| b.2)
                .sum();
            kept[i] += fetched;
            row.push(fetched);
        }
        println!(
            "| {query} | {postings} | {} | {} | {needed_impact} |",
            row[0], row[2]
        );
    }
    let pct = |x: usize| 100.0 * x as f64 / all.max(1) as f64;
    println!();
    println!("top {k}, terms with more than {big} postings: {all} postings in all");
    for (size, fetched) in sizes.iter().zip(&kept) {
        println!(
            "block-max, blocks of {size}: {fetched} ({:.1}%) cannot be skipped",
            pct(*fetched)
        );
    }
    println!("impact order: {impact} ({:.1}%) before the top {k}'s members are certain, their scores not yet", pct(impact));
}
