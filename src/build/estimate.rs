//! Before embedding, how long it will take: a timed sample of the chunks to embed, extrapolated.

use std::time::Instant;

use rayon::prelude::*;

use super::reuse::text_hash;
use crate::build;
use crate::ingest;

/// Before embedding, how long it will take: the chunks in `range` (all of them, or a shard's)
/// that the previous index has no vector for (`previous`, hashes of its chunks' texts), and the
/// time a sample of them spread over the build takes, embedded on every core as the build
/// does, extrapolated by their length in bytes. A build with fewer than 50 times the sample
/// to embed (400 chunks on up to 2 cores) is not estimated, so the sample costs at most 2% of
/// a build; nor is one whose sample fails (the build will say why).
pub fn embedding_estimate(
    documents: &[ingest::SourceDocument],
    range: std::ops::Range<usize>,
    vectors: &build::VectorOptions,
    previous: Option<&std::collections::HashSet<u64>>,
) -> Option<String> {
    let threads = rayon::current_num_threads();
    let sample_size = (4 * threads).clamp(8, 32);
    let total = range.len();
    if total < 50 * sample_size {
        return None;
    }
    let texts: Vec<String> = documents
        .iter()
        .flat_map(|d| {
            d.chunks
                .iter()
                .map(move |c| crate::index::indexed_text(&d.document, c))
        })
        .skip(range.start)
        .take(total)
        .filter(|t| !previous.is_some_and(|p| p.contains(&text_hash(t))))
        .collect();
    if texts.len() < 50 * sample_size {
        return None;
    }
    let step = texts.len() / sample_size;
    let sample: Vec<&str> = (0..sample_size)
        .map(|i| texts[i * step + step / 2].as_str())
        .collect();
    let embedder = vectors.embedder;
    // A short text on each core first: a thread's first call sets up what later ones reuse.
    (0..threads)
        .into_par_iter()
        .try_for_each(|_| embedder.embed("warming up").map(drop))
        .ok()?;
    // Each text's own time, on every core at once (as the build shares the memory bus): their
    // sum over the cores is the build's wall time, whichever text ran on which core.
    let seconds: f64 = sample
        .par_iter()
        .map(|text| {
            let began = Instant::now();
            embedder.embed(text).map(|_| began.elapsed().as_secs_f64())
        })
        .collect::<crate::Result<Vec<f64>>>()
        .ok()?
        .iter()
        .sum();
    let sample_bytes: usize = sample.iter().map(|t| t.len()).sum();
    let all_bytes: usize = texts.iter().map(String::len).sum();
    let estimate = seconds * all_bytes as f64 / sample_bytes.max(1) as f64 / threads as f64;
    let kept = total - texts.len();
    Some(format!(
        "embedding {} chunks{}: about {} on this machine ({threads} cores); a rebuild into the same folder re-embeds only the chunks that changed",
        ingest::thousands(texts.len()),
        if kept > 0 {
            format!(" ({} kept from the previous index)", ingest::thousands(kept))
        } else {
            String::new()
        },
        duration(estimate)
    ))
}

/// A duration as an estimate says it: 40 s, 25 min, 2 h 10 min.
fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        s if s < 90 => format!("{} s", (s.max(1) + 4) / 5 * 5),
        s if s < 90 * 60 => format!("{} min", (s + 30) / 60),
        s => {
            let minutes = (s + 30) / 60;
            format!("{} h {} min", minutes / 60, minutes % 60)
        }
    }
}
