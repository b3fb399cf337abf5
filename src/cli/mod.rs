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

fn progress_bar(len: u64, what: &str) -> ProgressBar {
    // Under WASI (npx cairn-search) stderr passes through the launcher a line at a time and
    // says it is a terminal even when piped: a bar would only leave escape codes in a log.
    if cfg!(target_os = "wasi") || !std::io::stderr().is_terminal() {
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
