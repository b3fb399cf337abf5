//! Embedding throughput benchmark (native): reads and chunks the inputs exactly as
//! `cairn index` does, writes the chunks' model texts to a JSONL file (so a reference runtime,
//! `bench/embed_reference.py`, embeds the very same texts), then embeds them the way
//! `cairn index` does and prints one JSON line of figures: chunks and tokens a second, CPU
//! utilisation and peak memory. (Each text is embedded alone, so nothing is padded.)
//!
//! Usage: cargo run --example bench_embed -- MODEL_DIR TEXTS_OUT INPUT... [--limit N] [--min-tokens N]
//! (`--limit`: the first N chunks; `--min-tokens`: only chunks the model reads N tokens of or more)

use std::time::Instant;

use cairn::encoder::Arithmetic;

use cairn::chunk::{ChunkLimit, TokenLimit};
use cairn::embed::{Embedder, ModelFiles};
use cairn::index::indexed_text;
use cairn::ingest;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str, default: usize| match args.iter().position(|a| a == name) {
        Some(i) => {
            let value = args[i + 1].parse().expect("a number");
            args.drain(i..i + 2);
            value
        }
        None => default,
    };
    let (limit, min_tokens) = (flag("--limit", usize::MAX), flag("--min-tokens", 0));
    let [model, out, inputs @ ..] = &args[..] else {
        eprintln!("usage: bench_embed MODEL_DIR TEXTS_OUT INPUT... [--limit N] [--min-tokens N]");
        std::process::exit(2);
    };
    let embedder = Embedder::load(ModelFiles::read_dir(model.as_ref()).expect("a model folder"))
        .expect("a model");
    let counter = embedder.token_counter().expect("a token counter");
    let count = |t: &str| counter.count(t);
    let options = ingest::IngestOptions {
        chunk_limit: ChunkLimit {
            words: cairn::index::IndexSettings::default().chunk_words as usize,
            tokens: Some(TokenLimit {
                max: counter.window(),
                count: &count,
            }),
        },
        base_url: String::new(),
    };
    let inputs: Vec<std::path::PathBuf> = inputs.iter().map(Into::into).collect();
    let files = ingest::collect_files(&inputs, &globset::GlobSet::empty()).expect("inputs");
    let ingested = ingest::ingest(&files, &options, || {});
    let texts: Vec<String> = ingested
        .documents
        .iter()
        .flat_map(|d| d.chunks.iter().map(|c| indexed_text(&d.document, c)))
        .filter(|t| counter.count(t) + 2 >= min_tokens)
        .take(limit)
        .collect();
    let lines: String = texts
        .iter()
        .map(|t| serde_json::to_string(t).unwrap() + "\n")
        .collect();
    std::fs::write(out, lines).expect("the texts file");

    // What the model reads of each text: its tokens, the two special ones, at most 256.
    let tokens: Vec<usize> = texts
        .iter()
        .map(|t| (counter.count(t) + 2).min(cairn::embed::MAX_TOKENS))
        .collect();
    let real: usize = tokens.iter().sum();
    let mut embedder = embedder;
    let mut f32_vectors = Vec::new();
    for arithmetic in [Arithmetic::F32, Arithmetic::Int8] {
        embedder.set_arithmetic(arithmetic);
        let cpu_before = cpu_seconds();
        let started = Instant::now();
        let flat = cairn::build::embed_all(&embedder, &texts, &|_, _| {}).expect("vectors");
        let wall = started.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu_before;
        assert_eq!(flat.len(), texts.len() * embedder.dimension());
        // The 8-bit vectors against f32's, text by text (both are unit vectors).
        let cosines: Vec<f32> = flat
            .chunks_exact(embedder.dimension())
            .zip(f32_vectors.chunks_exact(embedder.dimension()))
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum())
            .collect();
        let (engine, min, mean) = match arithmetic {
            Arithmetic::F32 => ("cairn", 1.0, 1.0),
            Arithmetic::Int8 => (
                "cairn int8",
                cosines.iter().cloned().fold(f32::MAX, f32::min),
                cosines.iter().sum::<f32>() / cosines.len().max(1) as f32,
            ),
        };
        println!(
            "{}",
            serde_json::json!({
                "engine": engine,
                "chunks": texts.len(),
                "tokens": real,
                "seconds": wall,
                "chunks_per_second": texts.len() as f64 / wall,
                "tokens_per_second": real as f64 / wall,
                "cpu_utilisation": cpu / wall,
                "peak_rss_mb": peak_rss_mb(),
                "min_cosine_to_f32": min,
                "mean_cosine_to_f32": mean,
            })
        );
        if arithmetic == Arithmetic::F32 {
            f32_vectors = flat;
        }
    }
}

/// This process's user + system CPU time (Linux `/proc/self/stat`, in clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}
