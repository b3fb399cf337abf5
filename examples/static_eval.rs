//! The static tier's distillation settings measured (an experiment, not a test): distills the
//! static rows of an eval index with the given settings and prints nDCG@10 of lexical search,
//! and of semantic and hybrid search with the model and with the static tier.
//! Usage: static_eval <index dir> <eval dir> [ridge] [iterations] [headings 0|1]
use std::collections::HashMap;

use cairn::build::distill::{distill, DistillOptions};
use cairn::hit::{Encoder, SearchMode, SearchOptions};
use cairn::{eval, Searcher};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let eval_dir = std::path::Path::new(&args[2]);
    let defaults = DistillOptions::default();
    let options = DistillOptions {
        ridge: args.get(3).map_or(defaults.ridge, |a| a.parse().unwrap()),
        iterations: args
            .get(4)
            .map_or(defaults.iterations, |a| a.parse().unwrap()),
        headings: args.get(5).map_or(defaults.headings, |a| a == "1"),
        ..defaults
    };
    let model = std::path::Path::new("models/all-MiniLM-L6-v2");
    let mut searcher = Searcher::from_bytes(&std::fs::read(dir.join("index.cairn"))?)?;
    searcher.load_model(cairn::embed::ModelFiles::read_dir(model)?)?;
    let embedder = cairn::embed::Embedder::load(cairn::embed::ModelFiles::read_dir(model)?)?;
    let index = searcher.index();
    let started = std::time::Instant::now();
    let distilled = distill(
        index,
        &index.vectors.as_ref().unwrap().to_flat(),
        &embedder,
        &options,
    )?;
    let (rows, packs) = distilled.write(index);
    let packs: Vec<Vec<u8>> = packs.into_iter().map(|(_, b)| b).collect();
    eprintln!(
        "distilled {} rows in {:.1} s",
        rows.len(),
        started.elapsed().as_secs_f64()
    );
    searcher.set_statics(cairn::store::rows::from_packs(&rows, &packs)?);

    let qrels = eval::parse_qrels(&std::fs::read_to_string(eval_dir.join("qrels/test.tsv"))?)?;
    let queries: Vec<(String, String)> = std::fs::read_to_string(eval_dir.join("queries.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let id = match &v["_id"] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (id, v["text"].as_str().unwrap().to_string())
        })
        .collect();
    let run = |mode: SearchMode, encoder: Encoder| {
        let options = SearchOptions {
            mode,
            limit: 1000,
            candidates: Some(1000),
            encoder: Some(encoder),
            ..SearchOptions::default()
        };
        let mut rankings = HashMap::new();
        for (id, text) in &queries {
            let mut seen = std::collections::HashSet::new();
            let docs: Vec<String> = searcher
                .search(text, &options)
                .unwrap()
                .into_iter()
                .map(|h| h.citation.doc_id)
                .filter(|d| seen.insert(d.clone()))
                .take(100)
                .collect();
            rankings.insert(id.clone(), docs);
        }
        eval::evaluate(&rankings, &qrels).0.ndcg_at_10
    };
    let lexical = run(SearchMode::Lexical, Encoder::Model);
    let full_sem = run(SearchMode::Semantic, Encoder::Model);
    let static_sem = run(SearchMode::Semantic, Encoder::Static);
    let full_hyb = run(SearchMode::Hybrid, Encoder::Model);
    let static_hyb = run(SearchMode::Hybrid, Encoder::Static);
    println!(
        "{} lexical {lexical:.4} | semantic model {full_sem:.4} static {static_sem:.4} ({:.0}%) | hybrid model {full_hyb:.4} static {static_hyb:.4}",
        dir.display(),
        100.0 * static_sem / full_sem
    );
    Ok(())
}
