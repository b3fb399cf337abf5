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
use cairn::build::Layout;
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
        Command::Index(args) => index::index(args),
        Command::Merge {
            parts,
            out,
            model,
            layout,
        } => merge::merge(&parts, &out, &model, layout),
        Command::Search {
            index,
            query,
            queries,
            limit,
            json,
            output,
            options,
            search,
        } => search::run_search(
            &index,
            query,
            queries,
            search::SearchRequest {
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
        } => eval::run_eval(&index, &queries, &qrels, &search, options, json),
        Command::Embed { model, texts } => embed::run_embed(&model, &texts),
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
