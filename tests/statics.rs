//! The static tier (the query encoder without a transformer): `cairn index` distills the same
//! bytes from the same input, a search can use it instead of the model and says so in each
//! hit's semantic signal, a search needs exactly the rows of its query's terms, and a damaged
//! row is an error for that row while the index keeps answering.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::Path;

use cairn::hit::{Encoder, SearchMode, SearchOptions};
use cairn::Searcher;
use common::ok;

fn build(out: &Path) {
    ok(&[
        "index",
        "tests/fixtures/docs",
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// The static rows' packs of an index folder: (name, bytes), by name.
fn packs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut packs: Vec<_> = std::fs::read_dir(dir.join("p"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    packs.sort();
    packs
}

fn hits(dir: &Path, query: &str, encoder: &str) -> Vec<serde_json::Value> {
    hits_with(dir, query, encoder, false)
}

fn hits_with(dir: &Path, query: &str, encoder: &str, fuzzy: bool) -> Vec<serde_json::Value> {
    let options = format!(r#"{{"encoder": "{encoder}", "fuzzy": {fuzzy}}}"#);
    let out = ok(&[
        "search",
        dir.to_str().unwrap(),
        query,
        "--json",
        "--mode",
        "semantic",
        "--options",
        &options,
    ]);
    let hits: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    hits
}

#[test]
fn the_static_tier_is_the_same_bytes_for_the_same_input_and_answers_by_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    build(&a);
    build(&b);
    let rows = packs(&a);
    assert!(!rows.is_empty() && rows.iter().all(|(n, _)| n.ends_with(".cairnrows")));
    assert_eq!(rows, packs(&b), "the same input distilled other rows");
    assert_eq!(
        std::fs::read(a.join("index.cairn")).unwrap(),
        std::fs::read(b.join("index.cairn")).unwrap()
    );

    for query in [
        "how do I install it",
        "coffee in Paris",
        "highlight offsets in the browser",
    ] {
        let quick = hits(&a, query, "static");
        let full = hits(&a, query, "model");
        assert!(!quick.is_empty(), "{query}: the static tier found nothing");
        for (hits, encoder) in [(&quick, "static"), (&full, "model")] {
            assert!(
                hits.iter()
                    .all(|h| h["signals"]["semantic"]["encoder"] == encoder),
                "{query}: not every hit says it was found with the {encoder} encoder"
            );
        }
        // The static tier is fitted to the model: its best hit is among the model's best three.
        let top3: Vec<&serde_json::Value> = full.iter().take(3).map(|h| &h["id"]).collect();
        assert!(
            top3.contains(&&quick[0]["id"]),
            "{query}: the static tier's best hit {} is not among the model's best three {top3:?}",
            quick[0]["id"]
        );
    }
}

#[test]
fn with_fuzzy_the_model_reads_the_query_with_its_typos_corrected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    build(&out);
    let meant = hits(&out, "coffee in Paris", "model");
    assert!(!meant.is_empty());
    assert_eq!(hits_with(&out, "cofee in Pariss", "model", true), meant);
    assert_eq!(hits_with(&out, "cofee in Paris", "model", true), meant);
    // Without `fuzzy` it reads the typos' word pieces; the static tier reads the query as typed
    // (the typos have no rows), as a fragmented index's does: the same hits and scores (the
    // highlights differ: they mark what `fuzzy` matched).
    assert_ne!(hits(&out, "cofee in Pariss", "model"), meant);
    let scores = |hits: Vec<serde_json::Value>| -> Vec<(String, f64)> {
        hits.iter()
            .map(|h| (h["id"].to_string(), h["score"].as_f64().unwrap()))
            .collect()
    };
    assert_eq!(
        scores(hits_with(&out, "cofee in Paris", "static", true)),
        scores(hits(&out, "cofee in Paris", "static"))
    );
}

#[test]
fn a_search_needs_the_rows_of_its_terms_and_a_damaged_row_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    build(&out);
    let bytes = std::fs::read(out.join("index.cairn")).unwrap();
    // As a browser opens it: the static tier with no rows yet, and no model.
    let mut searcher = Searcher::from_bytes(&bytes).unwrap();
    let index = searcher.index();
    let table = searcher.statics().expect("the index has a static tier");
    let semantic = SearchOptions {
        mode: SearchMode::Semantic,
        ..SearchOptions::default()
    };
    let query = "coffee shops in Paris";
    let terms = index.analyzer().terms(query);
    // A row a term (its bucket's few), asked for by the term's text alone.
    let with_rows = terms
        .iter()
        .filter_map(|t| index.lexical.term_id(t))
        .filter(|&t| table.rows.present[t as usize / 8] >> (t % 8) & 1 == 1)
        .collect::<std::collections::BTreeSet<u32>>()
        .len();
    let needed = searcher.static_rows_needed(query, &semantic);
    assert!(!needed.is_empty());
    assert!(
        needed.len() <= with_rows,
        "a search asks for more buckets ({}) than its terms have rows ({with_rows})",
        needed.len()
    );
    assert_eq!(
        table.wanted(terms.iter().map(String::as_str)).len(),
        needed.len(),
        "the terms' texts find other buckets than their ids do"
    );
    // Lexical searches and searches with the model need none.
    let lexical = SearchOptions {
        mode: SearchMode::Lexical,
        ..SearchOptions::default()
    };
    assert!(searcher.static_rows_needed(query, &lexical).is_empty());

    // Until its rows are in, hybrid answers lexically; a damaged row is refused.
    let hybrid = SearchOptions::default();
    let before = searcher.search(query, &hybrid).unwrap();
    assert!(before.iter().all(|h| h.signals.semantic.is_none()));
    let requests = searcher.static_rows_needed(query, &semantic);
    let pack_bytes = |r: &cairn::store::rows::RowRequest| {
        let pack = std::fs::read(out.join("p").join(&r.pack)).unwrap();
        pack[r.offset as usize..r.offset as usize + r.length as usize].to_vec()
    };
    let mut damaged = pack_bytes(&requests[0]);
    damaged[3] ^= 0x40;
    let error = searcher
        .add_static_row(requests[0].row, &damaged)
        .unwrap_err()
        .to_string();
    assert!(error.contains("damaged"), "{error}");
    assert!(searcher.add_static_row(u32::MAX, &damaged).is_err());
    assert_eq!(searcher.search(query, &hybrid).unwrap(), before);

    // With its rows, the search answers by meaning, with the static tier.
    for r in &requests {
        searcher.add_static_row(r.row, &pack_bytes(r)).unwrap();
    }
    assert!(searcher.static_rows_needed(query, &semantic).is_empty());
    let found = searcher.search(query, &semantic).unwrap();
    assert!(!found.is_empty());
    assert!(found
        .iter()
        .all(|h| h.signals.semantic.as_ref().unwrap().encoder == Encoder::Static));
    let fused = searcher.search(query, &hybrid).unwrap();
    assert!(fused.iter().any(|h| h.signals.semantic.is_some()));
    // Asking for the model when it is not loaded gives no semantic hits, not the static tier.
    let model = SearchOptions {
        encoder: Some(Encoder::Model),
        ..SearchOptions::default()
    };
    assert!(searcher
        .search(query, &model)
        .unwrap()
        .iter()
        .all(|h| h.signals.semantic.is_none()));
}
