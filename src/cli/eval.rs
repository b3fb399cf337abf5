//! `cairn eval`: retrieval quality on a BEIR collection (nDCG@10, MRR@10, recall@100).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use cairn::eval;
use cairn::hit::SearchOptions;
use cairn::open::open;
use rayon::prelude::*;

use super::search::SearchRequest;
use super::{read_queries, Output, SearchArgs};

#[derive(clap::Args)]
pub(super) struct EvalArgs {
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
}

pub(super) fn run_eval(args: EvalArgs) -> Result<()> {
    let EvalArgs {
        index: path,
        queries,
        qrels,
        json,
        options: extra,
        search: args,
    } = args;
    let qrels = eval::parse_qrels(
        &std::fs::read_to_string(&qrels)
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
    let searcher = open(&path, options.mode)?;
    let queries = read_queries(&queries)?;
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
