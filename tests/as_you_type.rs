//! Search as you type through the CLI's JSON: `prefix` completes the word being typed, `fuzzy`
//! forgives typos in words the index does not have; both rank below an exact match, mark what
//! they matched in the highlights and say so in `explain`.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

use serde_json::{json, Value};

mod common;
use common::ok as cairn;

fn index(files: &[(&str, &str)]) -> tempfile::TempDir {
    let input = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(input.path().join(name), text).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    cairn(&[
        "index",
        input.path().to_str().unwrap(),
        "--no-embed",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    dir
}

fn search(index: &Path, query: &str, options: Value) -> Vec<Value> {
    let out = cairn(&[
        "search",
        index.to_str().unwrap(),
        query,
        "--json",
        "--mode",
        "lexical",
        "--options",
        &options.to_string(),
    ]);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn ids(hits: &[Value]) -> Vec<&str> {
    hits.iter()
        .map(|h| h["citation"]["docId"].as_str().unwrap())
        .collect()
}

fn slice(text: &str, start: u64, end: u64) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    String::from_utf16(&units[start as usize..end as usize]).unwrap()
}

fn pages() -> tempfile::TempDir {
    index(&[
        (
            "setup.md",
            "# Setup\n\nThe installation takes a minute: run the installer.\n",
        ),
        (
            "embed.md",
            "# Vectors\n\nEmbeddings are computed when the index is built.\n",
        ),
        (
            "retrieval.md",
            "# Retrieval\n\nHybrid retrieval fuses keyword and vector search.\n",
        ),
        ("embedding.md", "# Embed\n\nTo embed a page, index it.\n"),
    ])
}

#[test]
fn prefix_completes_the_word_being_typed() {
    let index = pages();
    assert!(
        search(index.path(), "installa", json!({})).is_empty(),
        "off by default"
    );
    let hits = search(
        index.path(),
        "installa",
        json!({ "prefix": true, "highlight": true, "explain": true }),
    );
    assert_eq!(ids(&hits), ["setup.md"]);
    let hit = &hits[0];
    let marked: Vec<String> = hit["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            slice(
                hit["text"].as_str().unwrap(),
                h["start"].as_u64().unwrap(),
                h["end"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(marked.contains(&"installation".to_string()), "{marked:?}");
    let expansion = &hit["explain"]["expansions"][0];
    assert_eq!(
        (expansion["query"].as_str(), expansion["kind"].as_str()),
        (Some("installa"), Some("prefix"))
    );
    assert!(expansion["weight"].as_f64().unwrap() < 1.0);
    // A word followed by a space is finished: no completion.
    assert!(search(index.path(), "installa ", json!({ "prefix": true })).is_empty());
}

#[test]
fn a_complete_word_ranks_above_its_completions() {
    let index = pages();
    // "embed" is a word of embedding.md; embed.md only has "embeddings", a completion.
    let hits = search(index.path(), "embed", json!({ "prefix": true }));
    assert_eq!(ids(&hits), ["embedding.md", "embed.md"], "{hits:#?}");
    assert!(hits[0]["score"].as_f64() > hits[1]["score"].as_f64());
}

#[test]
fn fuzzy_forgives_typos_in_words_the_index_does_not_have() {
    let index = pages();
    // A swap of two letters is two edits: allowed from 8 letters on.
    for typo in ["retreival", "hybrd", "keywrd", "minnute"] {
        assert!(
            search(index.path(), typo, json!({})).is_empty(),
            "{typo} without fuzzy"
        );
        let hits = search(
            index.path(),
            typo,
            json!({ "fuzzy": true, "explain": true }),
        );
        let expected = if typo == "minnute" {
            "setup.md"
        } else {
            "retrieval.md"
        };
        assert_eq!(ids(&hits).first(), Some(&expected), "{typo}: {hits:#?}");
        assert_eq!(hits[0]["explain"]["expansions"][0]["kind"], "fuzzy");
    }
    // Short words are never fuzzed, and `fuzzy: 0` turns it off.
    assert!(search(index.path(), "hyb", json!({ "fuzzy": true })).is_empty());
    assert!(search(index.path(), "retreival", json!({ "fuzzy": 0 })).is_empty());
    // A word the index has is searched as it is.
    let exact = search(index.path(), "retrieval", json!({}));
    assert_eq!(
        search(
            index.path(),
            "retrieval",
            json!({ "fuzzy": true, "prefix": true })
        )[0]["score"],
        exact[0]["score"]
    );
}
