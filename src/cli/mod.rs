//! The `cairn` command line: argument parsing, dispatch to one file a command, and the output
//! helpers they share. Errors are printed as `error: …` with what to do, and exit with status 1.

mod embed;
mod eval;
mod index;
mod merge;
mod search;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use cairn::hit::{Fusion, Rerank, SearchMode, SearchOptions};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;

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
    Index(index::IndexArgs),
    /// Join the parts of a split build (`cairn index --shard I/N`) into one index, the same
    /// bytes one machine would have written.
    Merge(merge::MergeArgs),
    /// Search an index: human-readable hits, or SearchHit JSON with --json.
    Search(search::SearchCommand),
    /// Measure retrieval quality on a BEIR collection: nDCG@10, MRR@10, recall@100.
    Eval(eval::EvalArgs),
    /// Print the embeddings of texts as JSON arrays, one a line (for checking targets agree).
    Embed(embed::EmbedArgs),
}

/// The search options every searching command takes as flags.
#[derive(clap::Args)]
struct SearchArgs {
    /// Which signals to use.
    #[arg(long, value_enum, default_value_t = SearchMode::Hybrid)]
    mode: SearchMode,
    /// How hybrid search fuses the signals.
    #[arg(long, value_enum, default_value_t = Fusion::Weighted)]
    fusion: Fusion,
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

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Output {
    Hits,
    Documents,
    Context,
}

impl SearchArgs {
    fn options(&self, limit: u32) -> SearchOptions {
        SearchOptions {
            limit,
            mode: self.mode,
            fusion: self.fusion,
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
    let result = match Cli::parse().command {
        Command::Index(args) => index::index(args),
        Command::Merge(args) => merge::merge(args),
        Command::Search(args) => search::run_search(args),
        Command::Eval(args) => eval::run_eval(args),
        Command::Embed(args) => embed::run_embed(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A stage's progress: a bar on a terminal; for the npm launcher (`CAIRN_PROGRESS=lines`, which
/// draws the bar itself, summed over a split build's threads, and gives the Node API its
/// events), lines `progress <stage> <done> <total>` on stderr, at most ten a second and the last
/// always; else nothing (under WASI stderr passes through the launcher a line at a time and says
/// it is a terminal even when piped: a bar would only leave escape codes in a log).
pub(crate) struct Progress {
    bar: ProgressBar,
    lines: Option<Lines>,
}

struct Lines {
    stage: &'static str,
    total: u64,
    last: std::sync::Mutex<Option<(std::time::Instant, u64)>>,
}

impl Progress {
    pub(crate) fn new(total: u64, stage: &'static str) -> Progress {
        let lines = std::env::var_os("CAIRN_PROGRESS").is_some_and(|v| v == "lines");
        if lines || cfg!(target_os = "wasi") || !std::io::stderr().is_terminal() {
            let lines = lines.then(|| Lines {
                stage,
                total,
                last: Default::default(),
            });
            return Progress {
                bar: ProgressBar::hidden(),
                lines,
            };
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({per_sec}, eta {eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(stage);
        Progress { bar, lines: None }
    }

    pub(crate) fn inc(&self) {
        self.bar.inc(1);
        self.line(None);
    }

    pub(crate) fn set_position(&self, done: u64) {
        self.bar.set_position(done);
        self.line(Some(done));
    }

    /// Ends the stage: its last line, if it began and that was not said yet.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
        if let Some(lines) = &self.lines {
            let last = *lines.last.lock().expect("no writer panics");
            if last.is_some_and(|(_, done)| done < lines.total) {
                self.line(Some(lines.total));
            }
        }
    }

    /// A line for `done` (or one more than the last), unless one went out less than 0.1 s ago.
    fn line(&self, done: Option<u64>) {
        let Some(lines) = &self.lines else { return };
        let mut last = lines.last.lock().expect("no writer panics");
        let done = done.unwrap_or_else(|| last.map_or(0, |(_, d)| d) + 1);
        let now = std::time::Instant::now();
        let due = last.is_none_or(|(at, _)| now.duration_since(at).as_millis() >= 100);
        if due || done >= lines.total {
            eprintln!("progress {} {done} {}", lines.stage, lines.total);
            *last = Some((now, done));
        } else if let Some((_, d)) = last.as_mut() {
            *d = done;
        }
    }
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
