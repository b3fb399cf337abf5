//! The CLI's commands. Errors are printed as `error: …` with what to do, and exit with status 1.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cairn::chunk::{ChunkLimit, TokenLimit};
use cairn::embed::{self, Embedder, ModelFiles};
use cairn::hit::{
    ContextOptions, DocumentSearchOptions, Fusion, Options, Rerank, SearchHit, SearchMode,
    SearchOptions,
};
use cairn::index::{build, format, shard as build_shard, vector, IndexSettings};
use cairn::fragment::{self, load::native::Folder};
use cairn::search::QueryContext;
use cairn::{eval, ingest, Searcher};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Deserialize;

/// The index file inside an index folder.
use cairn::index::INDEX_FILE;
/// What a shard of a split build writes in its folder (with `model/`), for `cairn merge`.
const PART_FILE: &str = "part.cairn";
/// The model folder inside an index folder: what a browser downloads to embed queries.
const MODEL_DIR: &str = "model";

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Hybrid search that runs in the browser: build an index, search it, measure it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build an index from Markdown, plain text and JSONL files or folders.
    Index(IndexArgs),
    /// Join the parts of a split build (`cairn index --shard I/N`) into one index, the same
    /// bytes one machine would have written.
    Merge {
        /// The folders the shards wrote, one a shard, in any order.
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        /// The index folder to write.
        #[arg(long)]
        out: PathBuf,
        /// The sentence model's folder: the one the shards embedded with (checked; it embeds
        /// the summaries' sentences).
        #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
        model: PathBuf,
        /// One file, or fragments a browser fetches only as a query needs them, as
        /// `cairn index --layout` (the same files one build would have written).
        #[arg(long, value_enum, default_value_t = Layout::Auto)]
        layout: Layout,
    },
    /// Search an index: human-readable hits, or SearchHit JSON with --json.
    Search {
        /// The index folder (or an index.cairn file).
        index: PathBuf,
        /// The query.
        query: Option<String>,
        /// Run every query of a BEIR queries.jsonl instead, printing one JSON line per query.
        #[arg(long, conflicts_with = "query")]
        queries: Option<PathBuf>,
        /// How many hits (documents for --output documents; candidates for --output context).
        /// Default: 10, and 20 for --output context.
        #[arg(long)]
        limit: Option<u32>,
        #[arg(long)]
        json: bool,
        /// What to return: chunk hits, documents (searchDocuments) or a prompt context
        /// (buildContext); the last two print JSON.
        #[arg(long, value_enum, default_value_t = Output::Hits)]
        output: Output,
        /// More options as JSON, exactly as JavaScript passes them, e.g.
        /// '{"explain": true, "expand": 1, "filter": {"tags": "wasm"}, "tokenBudget": 500}'.
        #[arg(long)]
        options: Option<String>,
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Measure retrieval quality on a BEIR collection: nDCG@10, MRR@10, recall@100.
    Eval {
        /// The index folder (or an index.cairn file).
        index: PathBuf,
        /// BEIR queries.jsonl.
        #[arg(long)]
        queries: PathBuf,
        /// BEIR qrels .tsv.
        #[arg(long)]
        qrels: PathBuf,
        #[arg(long)]
        json: bool,
        /// More search options as JSON, e.g. '{"prefix": true, "fuzzy": true}'.
        #[arg(long)]
        options: Option<String>,
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Print the embeddings of texts as JSON arrays, one a line (for checking targets agree).
    Embed {
        /// A model folder, or an index folder (its model/ is used).
        #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
        model: PathBuf,
        #[arg(required = true)]
        texts: Vec<String>,
    },
}

#[derive(clap::Args)]
struct SearchArgs {
    /// Which signals to use.
    #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
    mode: ModeArg,
    /// How hybrid search fuses the signals.
    #[arg(long, value_enum, default_value_t = FusionArg::Weighted)]
    fusion: FusionArg,
    /// The k of reciprocal rank fusion.
    #[arg(long, default_value_t = 60.0)]
    rrf_k: f32,
    /// Weight of the semantic signal in weighted fusion (0 to 1).
    #[arg(long, default_value_t = 0.5)]
    semantic_weight: f32,
    /// Rerank the best fused candidates with the cross-encoder in this folder
    /// (BertForSequenceClassification: config.json, tokenizer.json, model.safetensors).
    #[arg(long, value_name = "DIR")]
    rerank: Option<PathBuf>,
    /// How many candidates --rerank scores.
    #[arg(long, default_value_t = 50, requires = "rerank")]
    rerank_top_n: u32,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Lexical,
    Semantic,
    Hybrid,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Output {
    Hits,
    Documents,
    Context,
}

/// What `cairn index` writes.
#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Layout {
    /// One file when index.cairn (compressed) is at most 300 kB; else fragments, whose first
    /// query costs a few hundred kB whatever the site's size.
    Auto,
    /// `index.cairn`: one download, the only kind Node apps and `cairn search --output
    /// documents|context` read.
    Single,
    /// `meta.cairn` and packs of fragments under `p/`, fetched as a query needs them.
    Fragments,
}

/// What a first answer should cost at most, in bytes: past it, `--layout auto` writes fragments.
/// A single `index.cairn` is downloaded whole before the first answer (the model comes
/// separately, in the background), while a fragmented index's first query fetches a few
/// hundred kB (277 kB for the Rust docs, page included; Pagefind's about 520 kB).
const FIRST_ANSWER_BUDGET: usize = 300_000;

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum WebWeights {
    /// The linear layers in q8_0, the word table as int8 rows fetched by token (about 12 MB
    /// before gzip, a query's rows a few kilobytes).
    Q8,
    F16,
    F32,
}

#[derive(Clone, Copy, ValueEnum)]
enum FusionArg {
    Rrf,
    Weighted,
}

impl SearchArgs {
    fn options(&self, limit: u32) -> SearchOptions {
        SearchOptions {
            limit,
            mode: match self.mode {
                ModeArg::Lexical => SearchMode::Lexical,
                ModeArg::Semantic => SearchMode::Semantic,
                ModeArg::Hybrid => SearchMode::Hybrid,
            },
            fusion: match self.fusion {
                FusionArg::Rrf => Fusion::Rrf,
                FusionArg::Weighted => Fusion::Weighted,
            },
            rrf_k: self.rrf_k,
            semantic_weight: self.semantic_weight,
            // The command line shows where terms matched.
            highlight: true,
            rerank: self.rerank.as_ref().map(|dir| Rerank {
                model: dir.display().to_string(),
                top_n: self.rerank_top_n,
            }),
            ..SearchOptions::default()
        }
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Index(args) => index(args),
        Command::Merge { parts, out, model, layout } => merge(&parts, &out, &model, layout),
        Command::Search {
            index,
            query,
            queries,
            limit,
            json,
            output,
            options,
            search,
        } => run_search(
            &index,
            query,
            queries,
            SearchRequest {
                base: search.options(limit.unwrap_or(10)),
                limit_given: limit.is_some(),
                extra: options,
                output,
            },
            json,
        ),
        Command::Eval {
            index,
            queries,
            qrels,
            json,
            options,
            search,
        } => run_eval(&index, &queries, &qrels, &search, options, json),
        Command::Embed { model, texts } => run_embed(&model, &texts),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[derive(clap::Args)]
struct IndexArgs {
    /// Files or folders to index.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The index folder to write (index.cairn, and model/ for the browser).
    #[arg(long)]
    out: PathBuf,
    /// The sentence model's folder (model.safetensors, tokenizer.json, config.json).
    #[arg(long, default_value = "models/all-MiniLM-L6-v2")]
    model: PathBuf,
    /// Build a lexical-only index: no embeddings, no model.
    #[arg(long)]
    no_embed: bool,
    /// Leave out the static tier (the query encoder a browser uses until the model is in):
    /// saves its distillation (about a minute for 10,000 terms) and its rows on disk.
    #[arg(long)]
    no_static: bool,
    /// Choose each document's summary (a few of its sentences) for `includeSummary`: by
    /// meaning with a model, else by its title's words. Costs build time and index bytes.
    #[arg(long)]
    summaries: bool,
    /// The largest chunk, in words. With a model, a chunk also fits the model's window (256
    /// tokens, the title and headings it reads with the chunk included).
    #[arg(long, default_value_t = IndexSettings::default().chunk_words, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    chunk_words: u32,
    /// Prefix of each file's URL (its path under the input folder follows; with several input
    /// folders, the folder's name first: std/index.html, book/index.html).
    #[arg(long, default_value = "")]
    base_url: String,
    /// In a built site (a folder with an index.html at its top), index every file cairn reads,
    /// not only the HTML pages (Sphinx's _sources/*.txt copies, robots.txt, PDFs, ...).
    #[arg(long)]
    all_files: bool,
    /// Leave out files matching this glob (repeatable), e.g. '**/drafts/**'.
    #[arg(long)]
    exclude: Vec<String>,
    /// Build an HNSW graph when there are at least this many chunks; fewer are scanned exactly.
    #[arg(long, default_value_t = 20_000)]
    graph_from: usize,
    /// Embed only this share of the chunks, I of N (from 1), and write a part
    /// (`part.cairn`) for `cairn merge` instead of an index: one build spread over machines.
    #[arg(long, value_parser = build_shard::Shard::parse, conflicts_with_all = ["no_embed"])]
    shard: Option<build_shard::Shard>,
    /// Write the index even when every input was skipped (otherwise that run fails and the
    /// previous index stays).
    #[arg(long)]
    allow_empty: bool,
    /// Precision of the model weights written for the browser.
    #[arg(long, value_enum, default_value_t = WebWeights::Q8)]
    web_weights: WebWeights,
    /// Precision of the chunk vectors of a scanned index (i8: a quarter of the bytes); an
    /// index with a graph keeps f32.
    #[arg(long, value_enum, default_value_t = vector::Precision::Int8)]
    vectors: vector::Precision,
    /// One file, or fragments a browser fetches only as a query needs them; auto writes
    /// fragments when index.cairn (compressed) would be over 300 kB, what a browser downloads
    /// before its first answer.
    #[arg(long, value_enum, default_value_t = Layout::Auto)]
    layout: Layout,
}

fn index(args: IndexArgs) -> Result<()> {
    let started = Instant::now();
    let mut globs = globset::GlobSetBuilder::new();
    for pattern in &args.exclude {
        globs.add(
            globset::Glob::new(pattern)
                .with_context(|| format!("--exclude {pattern:?} is not a valid glob"))?,
        );
    }
    let exclude = globs.build()?;
    let files = ingest::collect(
        &args.inputs,
        &exclude,
        &ingest::CollectOptions {
            all_files: args.all_files,
        },
    )?;
    for skipped in &files.skipped {
        eprintln!("skipped {}", terminal_safe(&skipped.to_string(), 1000));
    }
    // A built site's other files (Sphinx's _sources/*.txt) are left out: say so, once a site.
    for site in files.sites.iter().filter(|s| !s.left_out.is_empty()) {
        eprintln!("{}", terminal_safe(&site.to_string(), 1000));
    }
    if files.is_empty() {
        bail!("no files to index in {:?}: cairn reads .md, .markdown, .html, .htm, .pdf, .txt and .jsonl", args.inputs);
    }
    // Load the model first: a missing model should fail before minutes of work.
    let model = if args.no_embed {
        None
    } else {
        Some(load_source_model(&args.model)?)
    };

    let settings = IndexSettings {
        chunk_words: args.chunk_words,
        summaries: args.summaries,
        ..IndexSettings::default()
    };
    let counter = model
        .as_ref()
        .map(|(embedder, _)| embedder.token_counter())
        .transpose()?;
    let count_tokens = |text: &str| counter.as_ref().map_or(0, |c| c.count(text));
    let chunk_limit = ChunkLimit {
        words: args.chunk_words as usize,
        tokens: counter.as_ref().map(|c| TokenLimit {
            max: c.window(),
            count: &count_tokens,
        }),
    };
    let options = ingest::IngestOptions {
        chunk_limit,
        base_url: args.base_url.clone(),
    };
    let bar = progress_bar(files.len() as u64, "reading");
    let ingested = ingest::ingest(&files, &options, || bar.inc(1));
    bar.finish_and_clear();
    for skipped in &ingested.skipped {
        eprintln!("skipped {}", terminal_safe(&skipped.to_string(), 1000));
    }
    for warning in &ingested.warnings {
        eprintln!("warning {}", terminal_safe(&warning.to_string(), 1000));
    }
    if ingested.documents.is_empty() && !args.allow_empty {
        bail!(
            "every input was skipped ({} problems above), so there is nothing to index; the previous index, if any, is kept (pass --allow-empty to write an empty index)",
            files.skipped.len() + ingested.skipped.len()
        );
    }
    let chunk_total: usize = ingested.documents.iter().map(|d| d.chunks.len()).sum();

    // Everything is written into a staging folder beside the index and renamed into place at the
    // end, so a failed or killed build leaves the previous index whole.
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let staging = Staging::new(&args.out)?;
    // The index being replaced, if it was embedded by the same model: unchanged chunks keep
    // their vectors and unchanged documents their summaries.
    let mut previous = None;
    let mut previous_texts = None;
    let vectors = match &model {
        None => None,
        Some((embedder, source)) => {
            let (web_sha, web_file) =
                write_web_model(source, &staging.path.join(MODEL_DIR), args.web_weights)?;
            let identity = vector::ModelIdentity {
                name: embed::MODEL_NAME.to_string(),
                dimension: embedder.dimension() as u32,
                source_weights_sha256: embedder.weights_sha256().to_string(),
                web_weights_sha256: web_sha,
                web_weights_file: web_file.to_string(),
                config_sha256: embed::sha256_hex(&source.config),
                tokenizer_sha256: embed::sha256_hex(&source.tokenizer),
            };
            // A shard embeds its whole share; only a full build reads the previous index.
            let old = args.shard.is_none().then(|| previous_index(&args.out)).flatten();
            previous = old.as_ref().and_then(|old| build::Previous::of(old, &identity));
            // What it has vectors for, so the estimate counts only the chunks to embed.
            previous_texts = old.filter(|_| previous.is_some()).map(|old| {
                old.chunks
                    .iter()
                    .map(|c| text_hash(&cairn::index::indexed_text(old.document_of(c), c)))
                    .collect()
            });
            Some(build::VectorOptions {
                embedder,
                identity,
                previous: previous.as_ref(),
                graph_from: args.graph_from,
                graph: vector::GraphSettings::default(),
                precision: args.vectors,
            })
        }
    };
    if let Some(vectors) = &vectors {
        let range = args.shard.map_or(0..chunk_total, |s| s.range(chunk_total));
        if let Some(line) = embedding_estimate(&ingested.documents, range, vectors, previous_texts.as_ref()) {
            eprintln!("{line}");
        }
    }
    if let Some(shard) = args.shard {
        let options = vectors.expect("--shard needs the model (clap refuses --no-embed)");
        return write_part(shard, ingested.documents, settings, options, &args, staging, started);
    }
    let bar = progress_bar(chunk_total as u64, "embedding");
    let mut index = build::build(ingested.documents, settings, vectors, |done, _| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    // The static tier's rows; their packs go under p/ in either layout, before the index that
    // names them.
    let (rows_packs, distilled_in) = match (&model, args.no_static) {
        (Some((embedder, _)), false) => distill_static(&mut index, embedder)?,
        _ => (Vec::new(), None),
    };
    let rows_bytes: usize = rows_packs.iter().map(|(_, b)| b.len()).sum();
    let (path, bytes) = write_index(&index, rows_packs, args.layout, staging, model.is_some())?;
    println!(
        "indexed {} documents, {} chunks, {} bytes ({}) in {:.1} s{}{}",
        index.documents.len(),
        index.chunks.len(),
        bytes,
        path,
        started.elapsed().as_secs_f64(),
        distilled_in.map_or(String::new(), |(rows, s)| format!(
            "; static tier {rows} rows ({} bytes) in {s:.1} s",
            rows_bytes
        )),
        [
            ("skipped", files.skipped.len() + ingested.skipped.len()),
            ("warnings", ingested.warnings.len()),
            (
                "chunk vectors kept from the previous index",
                previous.as_ref().map_or(0, build::Previous::reused)
            ),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("; {what} {n}"))
        .collect::<String>()
    );
    Ok(())
}

/// Writes `index` into the staging folder's output in `layout`, with the static tier's
/// `rows_packs`, and commits it (the model too when `with_model`): `index.cairn`, or `meta.cairn`
/// and its packs. Returns what it wrote, for the summary line, and its bytes.
fn write_index(
    index: &cairn::index::Index,
    mut rows_packs: Vec<(String, Vec<u8>)>,
    layout: Layout,
    staging: Staging,
    with_model: bool,
) -> Result<(String, usize)> {
    let out = staging.out.clone();
    // The single file, compressed, is what a browser downloads before its first answer: auto
    // writes it when that is within the budget.
    let single = match layout {
        Layout::Fragments => None,
        Layout::Auto | Layout::Single => Some(format::write(index)?),
    };
    let size = single.as_ref().map_or(0, Vec::len);
    let fragments = match layout {
        Layout::Auto => size > FIRST_ANSWER_BUDGET,
        Layout::Single => false,
        Layout::Fragments => true,
    };
    let why = (layout == Layout::Auto).then(|| {
        if fragments {
            format!(
                "{INDEX_FILE} would be {}, over the {} a first answer should cost: wrote fragments",
                kilobytes(size),
                kilobytes(FIRST_ANSWER_BUDGET)
            )
        } else {
            format!(
                "{}, within the {} a first answer should cost: one file",
                kilobytes(size),
                kilobytes(FIRST_ANSWER_BUDGET)
            )
        }
    });
    if fragments {
        drop(single);
        // Packs are named by their content, so new ones never overwrite the live index's; the
        // meta file that names them is renamed into place like index.cairn.
        let mut layout = fragment::write::layout(index, &fragment::write::Options::default())?;
        layout.packs.append(&mut rows_packs);
        fragment::write::save_packs(&layout.packs, &out)?;
        write_synced(&staging.path.join(fragment::META_FILE), &layout.meta)?;
        let owned = staging.commit(with_model, fragment::META_FILE)?;
        fragment::write::remove_owned(&out, &owned.packs, layout.packs.iter().map(|(n, _)| n.as_str()))?;
        if owned.index_file {
            let _ = std::fs::remove_file(out.join(INDEX_FILE));
        }
        let total = layout.meta.len() + layout.packs.iter().map(|(_, b)| b.len()).sum::<usize>();
        let path = format!(
            "{} ({} fragments in {} packs{})",
            out.join(fragment::META_FILE).display(),
            layout.fragments,
            layout.packs.len(),
            why.map_or(String::new(), |why| format!("; {why}"))
        );
        Ok((path, total))
    } else {
        let bytes = single.expect("a single file is written in memory first");
        fragment::write::save_packs(&rows_packs, &out)?;
        write_synced(&staging.path.join(INDEX_FILE), &bytes)?;
        let owned = staging.commit(with_model, INDEX_FILE)?;
        if owned.meta {
            let _ = std::fs::remove_file(out.join(fragment::META_FILE));
        }
        fragment::write::remove_owned(&out, &owned.packs, rows_packs.iter().map(|(n, _)| n.as_str()))?;
        let path = out.join(INDEX_FILE).display().to_string();
        Ok((why.map_or(path.clone(), |why| format!("{path}: {why}")), bytes.len()))
    }
}

/// Bytes as the summary line writes them, in decimal units as hosts and browsers count:
/// 300 kB, 4.7 MB.
fn kilobytes(bytes: usize) -> String {
    match bytes {
        b if b < 1_000 => format!("{b} bytes"),
        b if b < 100_000 => format!("{:.1} kB", b as f64 / 1e3),
        b if b < 1_000_000 => format!("{:.0} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// A text's 64-bit hash: the estimate's way to tell a chunk the previous index has a vector
/// for without keeping its text twice.
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Before embedding, how long it will take: the chunks in `range` (all of them, or a shard's)
/// that the previous index has no vector for (`previous`, hashes of its chunks' texts), and the
/// time a sample of them spread over the build takes, embedded on every core as the build
/// does, extrapolated by their length in bytes. A build with fewer than 50 times the sample
/// to embed (400 chunks on up to 2 cores) is not estimated, so the sample costs at most 2% of
/// a build; nor is one whose sample fails (the build will say why).
fn embedding_estimate(
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
        .flat_map(|d| d.chunks.iter().map(move |c| cairn::index::indexed_text(&d.document, c)))
        .skip(range.start)
        .take(total)
        .filter(|t| !previous.is_some_and(|p| p.contains(&text_hash(t))))
        .collect();
    if texts.len() < 50 * sample_size {
        return None;
    }
    let step = texts.len() / sample_size;
    let sample: Vec<&str> = (0..sample_size).map(|i| texts[i * step + step / 2].as_str()).collect();
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
        .collect::<cairn::Result<Vec<f64>>>()
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

/// Distills the static tier of an index with vectors (`statics::distill`) and names its rows in
/// the index: the rows' packs, and (rows, seconds) for the summary line.
fn distill_static(
    index: &mut cairn::index::Index,
    embedder: &Embedder,
) -> Result<(Vec<(String, Vec<u8>)>, Option<(usize, f64)>)> {
    let Some(vectors) = &index.vectors else {
        return Ok((Vec::new(), None));
    };
    let began = Instant::now();
    let distilled =
        cairn::statics::distill::distill(index, &vectors.to_flat(), embedder, &Default::default())?;
    let (rows, packs) = distilled.write(index);
    let done = (rows.len(), began.elapsed().as_secs_f64());
    index.statics = Some(rows);
    Ok((packs, Some(done)))
}

/// The index in `out` a rebuild may take vectors and summaries from: its `index.cairn`, or its
/// fragments read back whole. None when there is none, or it does not read.
fn previous_index(out: &Path) -> Option<cairn::index::Index> {
    match std::fs::read(out.join(INDEX_FILE)) {
        Ok(bytes) => format::read(&bytes).ok(),
        Err(_) => Folder::open(out).and_then(|mut f| f.read_index()).ok(),
    }
}

/// `cairn index --shard`: embeds the shard's chunks and writes its part (and the model).
fn write_part(
    shard: build_shard::Shard,
    sources: Vec<ingest::SourceDocument>,
    settings: IndexSettings,
    options: build::VectorOptions,
    args: &IndexArgs,
    staging: Staging,
    started: Instant,
) -> Result<()> {
    let (index, texts) = build::assemble(sources, settings);
    let range = shard.range(texts.len());
    let bar = progress_bar(range.len() as u64, "embedding");
    let vectors = build::embed_all(options.embedder, &texts[range.clone()], &|done, _| {
        bar.set_position(done as u64)
    })?;
    bar.finish_and_clear();
    let part = build_shard::Part {
        shard,
        identity: options.identity,
        graph_from: args.graph_from as u64,
        precision: args.vectors,
        index: format::write(&index)?,
        vectors,
    };
    write_synced(&staging.path.join(PART_FILE), &part.write()?)?;
    // A part replaces no index: what the folder held stays.
    staging.commit(true, PART_FILE)?;
    println!(
        "shard {shard}: embedded chunks {} to {} of {} into {} in {:.1} s; join the parts with `cairn merge`",
        range.start + 1,
        range.end,
        texts.len(),
        args.out.join(PART_FILE).display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cairn merge`: joins the parts of a split build into the index one build would have written.
fn merge(parts: &[PathBuf], out: &Path, model: &Path, layout: Layout) -> Result<()> {
    let started = Instant::now();
    let read = |dir: &PathBuf| -> Result<build_shard::Part> {
        let path = dir.join(PART_FILE);
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "cannot read {}: merge takes the folders `cairn index --shard I/N --out DIR` wrote",
                path.display()
            )
        })?;
        build_shard::Part::read(&bytes).with_context(|| path.display().to_string())
    };
    let joined = build_shard::join(parts.iter().map(read).collect::<Result<_>>()?)?;
    let (embedder, _) = load_source_model(model)?;
    if embedder.weights_sha256() != joined.identity.source_weights_sha256 {
        bail!(
            "the shards were embedded by another model than {}; pass the shards' model with --model",
            model.display()
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let staging = Staging::new(out)?;
    // The browser's model, as the shards wrote it (theirs agree: the identities do).
    copy_web_model(&parts[0].join(MODEL_DIR), &staging.path.join(MODEL_DIR), &joined.identity)?;
    let options = build::VectorOptions {
        embedder: &embedder,
        identity: joined.identity,
        previous: None,
        graph_from: joined.graph_from,
        graph: vector::GraphSettings::default(),
        precision: joined.precision,
    };
    let mut index = build::with_vectors(joined.index, joined.vectors, &options)?;
    let (rows_packs, _) = distill_static(&mut index, &embedder)?;
    let (path, bytes) = write_index(&index, rows_packs, layout, staging, true)?;
    println!(
        "merged {} parts: {} documents, {} chunks, {bytes} bytes ({path}) in {:.1} s",
        parts.len(),
        index.documents.len(),
        index.chunks.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Loads the f32 model the index embeddings are made with, and keeps its files' bytes (read
/// once, so the model folder may be the output's own `model/`).
fn load_source_model(dir: &Path) -> Result<(Embedder, ModelFiles)> {
    let files = ModelFiles::read_dir(dir)?;
    let embedder = Embedder::load(files.clone())?;
    Ok((embedder, files))
}

/// Writes the model a browser downloads (weights, tokenizer, config, and the 8-bit model's word
/// rows under `p/`) into `out`; returns the weights' SHA-256 and file name.
fn write_web_model(
    source: &ModelFiles,
    out: &Path,
    precision: WebWeights,
) -> Result<(String, &'static str)> {
    std::fs::create_dir_all(out)?;
    let (name, written) = match precision {
        WebWeights::Q8 => {
            let model = embed::quantize_model(source)?;
            fragment::write::save_packs(&model.packs, out)?;
            (ModelFiles::QUANTIZED, model.weights)
        }
        WebWeights::F16 => {
            let weights = out.join(ModelFiles::WEIGHTS);
            embed::write_f16_weights(&source.weights, &weights)?;
            (ModelFiles::WEIGHTS, std::fs::read(&weights)?)
        }
        WebWeights::F32 => (ModelFiles::WEIGHTS, source.weights.clone()),
    };
    write_synced(&out.join(name), &written)?;
    write_synced(&out.join(ModelFiles::TOKENIZER), &source.tokenizer)?;
    write_synced(&out.join(ModelFiles::CONFIG), &source.config)?;
    Ok((embed::sha256_hex(&written), name))
}

/// Copies the browser's model of an index (as its identity names it) from `from` into `to`.
fn copy_web_model(from: &Path, to: &Path, identity: &vector::ModelIdentity) -> Result<()> {
    let weights = std::fs::read(from.join(&identity.web_weights_file))
        .with_context(|| format!("cannot read the model the shard wrote in {}", from.display()))?;
    if embed::sha256_hex(&weights) != identity.web_weights_sha256 {
        bail!("{} is not the model its part was written with; build that shard again", from.display());
    }
    std::fs::create_dir_all(to)?;
    if embed::is_quantized(&weights) {
        let packs = embed::word_packs(&weights)?
            .into_iter()
            .map(|name| {
                let path = from.join(fragment::PACK_DIR).join(&name);
                Ok((name, std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?))
            })
            .collect::<Result<Vec<_>>>()?;
        fragment::write::save_packs(&packs, to)?;
    }
    write_synced(&to.join(&identity.web_weights_file), &weights)?;
    for name in [ModelFiles::TOKENIZER, ModelFiles::CONFIG] {
        write_synced(&to.join(name), &std::fs::read(from.join(name))?)?;
    }
    Ok(())
}

/// Writes a file and flushes it to disk, readable by a web server.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file =
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    Ok(())
}

/// A folder inside the output folder where a build writes everything before `commit` renames
/// it into place. Dropped without a commit (an error), it is removed; a killed build's folder is
/// removed by the next build. A build holds `OUT/.cairn-lock` from start to end, so a second
/// build into the same folder at once is refused with a clear error instead of racing the first.
struct Staging {
    out: PathBuf,
    path: PathBuf,
    /// What the index in `out` owned before this build (`fragment::write::owned`), and the word
    /// rows its model named: all a build may remove.
    owned: fragment::write::Owned,
    model_packs: Vec<String>,
    _lock: std::fs::File,
}

const STAGING_PREFIX: &str = ".cairn-staging-";
const LOCK_FILE: &str = ".cairn-lock";

impl Staging {
    fn new(out: &Path) -> Result<Self> {
        let lock_path = out.join(LOCK_FILE);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot create {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "another cairn build is writing into {} now; wait for it to finish (the index there stays whole), then run this one again",
                out.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()))
            }
        }
        // Under the lock, any staging folder is a killed build's: none is in use.
        for entry in std::fs::read_dir(out)?.flatten() {
            if entry.file_name().to_string_lossy().starts_with(STAGING_PREFIX) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let path = out.join(format!("{STAGING_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let owned = fragment::write::owned(out);
        let model_packs = owned
            .web_weights
            .as_ref()
            .and_then(|file| std::fs::read(out.join(MODEL_DIR).join(file)).ok())
            .filter(|weights| embed::is_quantized(weights))
            .and_then(|weights| embed::word_packs(&weights).ok())
            .unwrap_or_default();
        Ok(Staging {
            out: out.to_path_buf(),
            path,
            owned,
            model_packs,
            _lock: lock,
        })
    }

    /// Renames the staged files into place, each an atomic replace: the model's files first
    /// (when they changed), then `file` (`index.cairn`, or a shard's `part.cairn`). At every
    /// moment the folder holds a whole index, old or new; between the two steps an old index
    /// whose model changed is refused by its model check, never read wrongly. Then removes what
    /// the old model owned and the new one does not; returns what the old index owned, for the
    /// caller to remove what the new one no longer names.
    fn commit(mut self, with_model: bool, file: &str) -> Result<fragment::write::Owned> {
        let (staged, live) = (self.path.join(MODEL_DIR), self.out.join(MODEL_DIR));
        let mut model = None;
        if with_model {
            std::fs::create_dir_all(&live)?;
            // The 8-bit model's word rows first: named by content, so a live one is never
            // replaced unless damaged, and all are in before the weights that name them.
            let packs = pack_names(&staged);
            let rows: Vec<(String, Vec<u8>)> = packs
                .iter()
                .map(|name| Ok((name.clone(), std::fs::read(staged.join(fragment::PACK_DIR).join(name))?)))
                .collect::<Result<_>>()?;
            fragment::write::save_packs(&rows, &live)
                .with_context(|| format!("cannot move the model into {}", live.display()))?;
            let files: Vec<&str> = [
                ModelFiles::WEIGHTS,
                ModelFiles::QUANTIZED,
                ModelFiles::TOKENIZER,
                ModelFiles::CONFIG,
            ]
            .into_iter()
            .filter(|name| staged.join(name).exists())
            .collect();
            for name in &files {
                let new = std::fs::read(staged.join(name))?;
                if std::fs::read(live.join(name)).ok().as_deref() != Some(&new[..]) {
                    std::fs::rename(staged.join(name), live.join(name)).with_context(|| {
                        format!("cannot move the model into {}", live.display())
                    })?;
                }
            }
            model = Some((files, packs));
        }
        std::fs::rename(self.path.join(file), self.out.join(file))
            .with_context(|| format!("cannot move {file} into {}", self.out.display()))?;
        if let Ok(dir) = std::fs::File::open(&self.out) {
            let _ = dir.sync_all();
        }
        // What the old model had and the new one does not use: the weights file the old index
        // named, if the new model is another file; its word rows the new one does not name.
        if let Some((files, packs)) = model {
            if let Some(old) = &self.owned.web_weights {
                if !files.contains(&old.as_str()) && [ModelFiles::WEIGHTS, ModelFiles::QUANTIZED].contains(&old.as_str()) {
                    let _ = std::fs::remove_file(live.join(old));
                }
            }
            let owned = self.model_packs.iter().cloned().collect();
            fragment::write::remove_owned(&live, &owned, packs.iter().map(String::as_str))?;
        }
        Ok(std::mem::take(&mut self.owned))
    }
}

/// The names of the files in `dir/p/` (none when it has no such folder).
fn pack_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join(fragment::PACK_DIR))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn progress_bar(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// An index as the command line searches it: one file, or a folder of fragments read as each
/// query needs them (with the model that embeds queries, when the mode needs it).
enum Opened {
    Single(Searcher),
    Fragments {
        folder: std::sync::Mutex<Folder>,
        embedder: Option<Embedder>,
        /// The cross-encoder `rerank` names, once loaded.
        reranker: Option<cairn::rerank::Reranker>,
    },
}

impl Opened {
    fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        match self {
            Opened::Single(searcher) => Ok(searcher.search(query, options)?),
            Opened::Fragments { folder, embedder, reranker } => {
                let vector = match embedder {
                    Some(e) if options.mode != SearchMode::Lexical => Some(e.embed(query)?),
                    _ => None,
                };
                let context = QueryContext {
                    vector: vector.as_deref(),
                    vector_from_caller: false,
                    encoder: cairn::hit::Encoder::Model,
                    embedder: embedder.as_ref(),
                    now_ms: options.now.unwrap_or_else(cairn::searcher::now_ms),
                    reranker: reranker.as_ref().map(|r| r as &dyn cairn::search::CrossEncoder),
                    expanded: None,
                };
                let mut folder = folder.lock().expect("a search panicked");
                Ok(folder.search(query, context, options)?)
            }
        }
    }

    fn searcher(&self) -> Result<&Searcher> {
        match self {
            Opened::Single(searcher) => Ok(searcher),
            Opened::Fragments { .. } => bail!(
                "this is a fragmented index, which answers chunk searches only; build it with --layout single for --output documents or context"
            ),
        }
    }
}

/// Opens an index folder (or file) and, when it has embeddings and the mode needs them, its model.
fn open(path: &Path, mode: SearchMode) -> Result<Opened> {
    if path.join(fragment::META_FILE).is_file() && !path.join(INDEX_FILE).is_file() {
        let folder = Folder::open(path).with_context(|| format!("{}", path.display()))?;
        let embedder = match &folder.index.meta().vectors {
            Some(v) if mode != SearchMode::Lexical => Some(cairn::searcher::load_checked_model(
                &v.model,
                ModelFiles::read_dir(&path.join(MODEL_DIR))?,
            )?),
            _ => None,
        };
        return Ok(Opened::Fragments {
            folder: std::sync::Mutex::new(folder),
            embedder,
            reranker: None,
        });
    }
    let (file, dir) = if path.is_dir() {
        (path.join(INDEX_FILE), path.to_path_buf())
    } else {
        (
            path.to_path_buf(),
            path.parent().map(Path::to_path_buf).unwrap_or_default(),
        )
    };
    let bytes = std::fs::read(&file)
        .with_context(|| format!("cannot read the index {}", file.display()))?;
    let mut searcher =
        Searcher::from_bytes(&bytes).with_context(|| format!("{}", file.display()))?;
    if let Some(rows) = &searcher.index().statics {
        if mode != SearchMode::Lexical {
            searcher.set_statics(cairn::statics::read_all(rows, &dir)?);
        }
    }
    if searcher.has_vectors() && mode != SearchMode::Lexical {
        searcher.load_model(ModelFiles::read_dir(&dir.join(MODEL_DIR))?)?;
    }
    Ok(Opened::Single(searcher))
}

#[derive(Deserialize)]
struct Query {
    #[serde(alias = "id")]
    _id: serde_json::Value,
    text: String,
}

/// The queries of a BEIR queries.jsonl; a line that is not a query is reported and skipped.
fn read_queries(path: &Path) -> Result<Vec<(String, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut queries = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str::<Query>(line) {
            Ok(q) => queries.push((
                match q._id {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                },
                q.text,
            )),
            Err(e) => eprintln!(
                "skipped {}:{}: expected {{\"_id\", \"text\"}}: {e}",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(queries)
}

/// A search as the command line asked for it.
struct SearchRequest {
    /// The options from the flags.
    base: SearchOptions,
    /// Whether `--limit` was given (else the options type's own default limit applies).
    limit_given: bool,
    /// `--options` JSON, laid over them.
    extra: Option<String>,
    output: Output,
}

impl SearchRequest {
    /// The flags' options with the `--options` JSON laid over them, as type `T`.
    fn parse<T: Options>(&self) -> Result<T> {
        let mut merged = serde_json::to_value(&self.base)?;
        if !self.limit_given {
            merged.as_object_mut().expect("options are an object").remove("limit");
        }
        if let Some(extra) = &self.extra {
            let extra: serde_json::Value =
                serde_json::from_str(extra).context("--options is not JSON")?;
            let serde_json::Value::Object(extra) = extra else {
                bail!("--options must be a JSON object")
            };
            merged
                .as_object_mut()
                .expect("options are an object")
                .extend(extra);
        }
        T::from_json(merged).context("invalid --options")
    }
}

fn run_search(
    path: &Path,
    query: Option<String>,
    queries: Option<PathBuf>,
    request: SearchRequest,
    json: bool,
) -> Result<()> {
    let search = match request.output {
        Output::Hits => request.parse::<SearchOptions>()?,
        Output::Documents => request.parse::<DocumentSearchOptions>()?.search,
        Output::Context => request.parse::<ContextOptions>()?.search,
    };
    let mut opened = open(path, search.mode)?;
    if let Some(rerank) = &search.rerank {
        let cannot = || format!("cannot load the cross-encoder {}", rerank.model);
        let files = ModelFiles::read_dir(Path::new(&rerank.model)).with_context(cannot)?;
        match &mut opened {
            Opened::Single(searcher) => searcher.load_reranker(&rerank.model, files).with_context(cannot)?,
            Opened::Fragments { reranker, .. } => {
                *reranker = Some(cairn::rerank::Reranker::load(files).with_context(cannot)?)
            }
        }
    }
    let searcher = &opened;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let answer = |query: &str| -> Result<serde_json::Value> {
        Ok(match request.output {
            Output::Hits => {
                serde_json::to_value(searcher.search(query, &request.parse::<SearchOptions>()?)?)?
            }
            Output::Documents => serde_json::to_value(
                searcher
                    .searcher()?
                    .search_documents(query, &request.parse::<DocumentSearchOptions>()?)?,
            )?,
            Output::Context => serde_json::to_value(
                searcher
                    .searcher()?
                    .build_context(query, &request.parse::<ContextOptions>()?)?,
            )?,
        })
    };
    if let Some(queries) = queries {
        let queries = read_queries(&queries)?;
        let results: Vec<Result<serde_json::Value>> =
            queries.par_iter().map(|(_, text)| answer(text)).collect();
        for ((id, _), result) in queries.iter().zip(results) {
            match result {
                Ok(value) => {
                    let key = if request.output == Output::Hits {
                        "hits"
                    } else {
                        "result"
                    };
                    serde_json::to_writer(
                        &mut out,
                        &serde_json::json!({ "queryId": id, key: value }),
                    )?;
                    writeln!(out)?;
                }
                Err(e) => eprintln!(
                    "query {}: {}",
                    terminal_safe(id, 200),
                    terminal_safe(&format!("{e:#}"), 1000)
                ),
            }
        }
        return Ok(());
    }
    let Some(query) = query else {
        bail!("give a QUERY, or --queries FILE")
    };
    if json || request.output != Output::Hits {
        serde_json::to_writer_pretty(&mut out, &answer(&query)?)?;
        writeln!(out)?;
    } else {
        print_hits(&mut out, &searcher.search(&query, &request.parse()?)?)?;
    }
    Ok(())
}

/// Indexed text as a terminal may show it: control characters (escape sequences, newlines that
/// would forge lines, bidirectional overrides) become spaces or `\u{..}`, and it is cut to `max`
/// characters. `--json` output stays exact; this is only for human-readable lines.
fn terminal_safe(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control()
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c) =>
            {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

fn print_hits(out: &mut impl Write, hits: &[SearchHit]) -> Result<()> {
    if hits.is_empty() {
        writeln!(out, "no hits")?;
    }
    for hit in hits {
        let c = &hit.citation;
        let mut place = c.title.clone();
        for heading in c.heading_path.iter().filter(|h| **h != c.title) {
            place.push_str(" › ");
            place.push_str(heading);
        }
        let place = terminal_safe(&place, 200);
        let location = terminal_safe(c.url.as_deref().unwrap_or(&c.doc_id), 200);
        writeln!(
            out,
            "{:>2}. {place}  [{location}, lines {}-{}]",
            hit.rank, c.line_start, c.line_end
        )?;
        let mut signals = format!("{:.4} {:?}", hit.score, hit.score_kind).to_lowercase();
        if let Some(s) = &hit.signals.lexical {
            signals.push_str(&format!(
                "; lexical #{} {:.3} (document {:.3})",
                s.rank, s.score, s.document_score
            ));
        }
        if let Some(s) = &hit.signals.semantic {
            signals.push_str(&format!("; semantic #{} {:.3}", s.rank, s.score));
        }
        writeln!(out, "    {signals}")?;
        writeln!(out, "    {}", terminal_safe(&excerpt(hit, 240), 300))?;
    }
    Ok(())
}

/// The hit's text cut to about `max` characters around its first highlight, terms in «».
fn excerpt(hit: &SearchHit, max: usize) -> String {
    let units: Vec<u16> = hit.text.encode_utf16().collect();
    let first = hit.highlights.first().map_or(0, |h| h.start as usize);
    let start = first.saturating_sub(max / 3);
    let end = (start + max * 2).min(units.len());
    let mut out = String::new();
    let mut at = start;
    for h in hit
        .highlights
        .iter()
        .filter(|h| h.start as usize >= start && (h.end as usize) <= end)
    {
        out.push_str(&String::from_utf16_lossy(&units[at..h.start as usize]));
        out.push('«');
        out.push_str(&String::from_utf16_lossy(
            &units[h.start as usize..h.end as usize],
        ));
        out.push('»');
        at = h.end as usize;
    }
    out.push_str(&String::from_utf16_lossy(&units[at.min(end)..end]));
    let chars: Vec<char> = out
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let mut text: String = chars.iter().take(max).collect();
    if start > 0 {
        text.insert(0, '…');
    }
    if chars.len() > max || end < units.len() {
        text.push('…');
    }
    text
}

fn run_eval(
    path: &Path,
    queries: &Path,
    qrels: &Path,
    args: &SearchArgs,
    extra: Option<String>,
    json: bool,
) -> Result<()> {
    let qrels = eval::parse_qrels(
        &std::fs::read_to_string(qrels)
            .with_context(|| format!("cannot read {}", qrels.display()))?,
    )?;
    let base = SearchOptions {
        candidates: Some(1000),
        highlight: false,
        ..args.options(1000)
    };
    let options: SearchOptions = SearchRequest {
        base,
        limit_given: true,
        extra,
        output: Output::Hits,
    }
    .parse()?;
    let searcher = open(path, options.mode)?;
    let queries = read_queries(queries)?;
    let started = Instant::now();
    let rankings: Vec<Result<(String, Vec<String>)>> = queries
        .par_iter()
        .filter(|(id, _)| qrels.contains_key(id))
        .map(|(id, text)| {
            let hits = searcher.search(text, &options)?;
            let mut seen = std::collections::HashSet::new();
            let docs: Vec<String> = hits
                .into_iter()
                .map(|h| h.citation.doc_id)
                .filter(|d| seen.insert(d.clone()))
                .take(100)
                .collect();
            Ok((id.clone(), docs))
        })
        .collect();
    let rankings: HashMap<String, Vec<String>> = rankings.into_iter().collect::<Result<_>>()?;
    let (metrics, judged) = eval::evaluate(&rankings, &qrels);
    let mode = format!("{:?}", options.mode).to_lowercase();
    if json {
        let report = serde_json::json!({
            "index": path.display().to_string(),
            "mode": mode,
            "queries": judged,
            "ndcgAt10": metrics.ndcg_at_10,
            "mrrAt10": metrics.mrr_at_10,
            "recallAt100": metrics.recall_at_100,
            "seconds": started.elapsed().as_secs_f64(),
        });
        println!("{report}");
    } else {
        println!("| index | mode | queries | nDCG@10 | MRR@10 | recall@100 |");
        println!("|---|---|---|---|---|---|");
        println!(
            "| {} | {mode} | {judged} | {:.3} | {:.3} | {:.3} |",
            path.display(),
            metrics.ndcg_at_10,
            metrics.mrr_at_10,
            metrics.recall_at_100
        );
    }
    Ok(())
}

fn run_embed(model: &Path, texts: &[String]) -> Result<()> {
    let dir = if model.join(MODEL_DIR).is_dir() {
        model.join(MODEL_DIR)
    } else {
        model.to_path_buf()
    };
    let embedder = Embedder::load(ModelFiles::read_dir(&dir)?)?;
    for text in texts {
        println!("{}", serde_json::to_string(&embedder.embed(text)?)?);
    }
    Ok(())
}
