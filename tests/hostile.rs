//! Hostile input through the CLI, on real files and the real model: option values at and past
//! their limits, queries with nothing to search, a model whose files were changed or are
//! impossible, builds that fail, are skipped or are killed part-way, and indexed text that tries
//! to drive the terminal. Each test failed before its fix.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

mod common;
use common::{cairn, ok};

/// Runs cairn expecting a clean failure: exit status 1, an `error:` line, no panic.
fn fails(args: &[&str]) -> String {
    let out = cairn(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "cairn {args:?} should fail cleanly: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docs")
}

fn model_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.safetensors").exists(),
        "run scripts/setup.sh first: {} is missing",
        dir.display()
    );
    dir
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn lexical_index(input: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    ok(&["index", s(input), "--no-embed", "--out", s(dir.path())]);
    dir
}

fn model_index(input: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "index",
        s(input),
        "--out",
        s(dir.path()),
        "--model",
        s(&model_dir()),
    ]);
    dir
}

fn search(index: &Path, query: &str, mode: &str, options: Value) -> Result<Value, String> {
    let out = cairn(&[
        "search",
        s(index),
        query,
        "--json",
        "--mode",
        mode,
        "--options",
        &options.to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(stderr)
    }
}

#[test]
fn counts_past_their_limits_are_errors_and_counts_within_them_do_not_overflow() {
    let index = lexical_index(&fixtures());
    for (options, says) in [
        (
            json!({ "expand": 4294967295u32 }),
            "expand must be at most 100",
        ),
        (
            json!({ "related": true, "maxLinks": 4294967295u32 }),
            "maxLinks must be at most 1000",
        ),
        (
            json!({ "maxDocuments": 0 }),
            "maxDocuments must be at least 1",
        ),
        (
            json!({ "highlight": true, "snippetLength": 4294967295u32 }),
            "snippetLength must be at most 10000",
        ),
        (
            json!({ "limit": 4294967295u32 }),
            "limit must be at most 1000",
        ),
        (
            json!({ "candidates": 4294967295u32 }),
            "candidates must be at most 100000",
        ),
    ] {
        let error =
            search(index.path(), "install", "lexical", options.clone()).expect_err("refused");
        assert!(error.contains(says), "{options}: {error}");
    }
    // The largest values accepted run, and the neighbors and related hits are all there.
    let hits = search(
        index.path(),
        "install",
        "lexical",
        json!({ "limit": 1000, "expand": 100, "related": true, "relatedHops": 2, "maxLinks": 1000, "highlight": true, "snippetLength": 10000 }),
    )
    .unwrap();
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits
        .iter()
        .all(|h| h["neighbors"].is_object() && h["snippet"]["text"].is_string()));
    let many_terms: String = (0..1100).map(|i| format!("w{i} ")).collect();
    assert!(search(index.path(), &many_terms, "lexical", json!({}))
        .unwrap_err()
        .contains("at most 1024"));
    assert!(
        search(index.path(), &"x".repeat(20_000), "lexical", json!({}))
            .unwrap_err()
            .contains("at most 16384")
    );
}

#[test]
fn a_query_with_nothing_to_search_has_no_hits_in_every_mode() {
    let index = model_index(&fixtures());
    for query in ["", "   ", "the of and", "?!… — ;", "\t\n"] {
        for mode in ["lexical", "semantic", "hybrid"] {
            let hits = search(index.path(), query, mode, json!({})).unwrap();
            assert_eq!(hits, json!([]), "{query:?} in {mode} mode");
        }
    }
    assert!(!search(index.path(), "installing", "semantic", json!({}))
        .unwrap()
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn a_model_whose_config_or_tokenizer_changed_is_refused() {
    let index = model_index(&fixtures());
    let model = index.path().join("model");
    let config = std::fs::read_to_string(model.join("config.json")).unwrap();
    // One layer instead of six: the weights still load, the embeddings would silently change.
    let value: Value = serde_json::from_str(&config).unwrap();
    let mut changed = value.clone();
    changed["num_hidden_layers"] = json!(1);
    std::fs::write(model.join("config.json"), changed.to_string()).unwrap();
    let error = search(index.path(), "install", "semantic", json!({})).unwrap_err();
    assert!(
        error.contains("config.json does not match the index"),
        "{error}"
    );
    std::fs::write(model.join("config.json"), &config).unwrap();

    let tokenizer = std::fs::read_to_string(model.join("tokenizer.json")).unwrap();
    std::fs::write(
        model.join("tokenizer.json"),
        tokenizer.replacen("\"[UNK]\"", "\"[UNKNOWN]\"", 1),
    )
    .unwrap();
    let error = search(index.path(), "install", "semantic", json!({})).unwrap_err();
    assert!(
        error.contains("tokenizer.json does not match the index"),
        "{error}"
    );
    std::fs::write(model.join("tokenizer.json"), &tokenizer).unwrap();
    assert!(search(index.path(), "install", "semantic", json!({})).is_ok());
}

#[test]
fn an_impossible_model_config_is_an_error_not_a_crash() {
    let source = model_dir();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(source.join("config.json")).unwrap())
            .unwrap();
    for (field, value, says) in [
        ("num_attention_heads", json!(0), "num_attention_heads is 0"),
        (
            "num_attention_heads",
            json!(5),
            "not a multiple of num_attention_heads",
        ),
        ("hidden_size", json!(0), "hidden_size is 0"),
        (
            "max_position_embeddings",
            json!(8),
            "max_position_embeddings 8",
        ),
    ] {
        let model = tempfile::tempdir().unwrap();
        for name in ["model.safetensors", "tokenizer.json"] {
            std::os::unix::fs::symlink(source.join(name), model.path().join(name)).unwrap();
        }
        let mut bad = config.clone();
        bad[field] = value;
        std::fs::write(model.path().join("config.json"), bad.to_string()).unwrap();
        let out = tempfile::tempdir().unwrap();
        let error = fails(&[
            "index",
            s(&fixtures()),
            "--out",
            s(out.path()),
            "--model",
            s(model.path()),
        ]);
        assert!(error.contains(says), "{field}: {error}");
    }
}

#[test]
fn the_model_folder_may_be_the_outputs_own() {
    let index = model_index(&fixtures());
    let model = index.path().join("model");
    let before: Vec<Vec<u8>> = ["tokenizer.json", "config.json"]
        .iter()
        .map(|f| std::fs::read(model.join(f)).unwrap())
        .collect();
    // Its weights are f16 already; index from the f32 source again afterwards to compare.
    for name in ["model.safetensors"] {
        std::fs::copy(model_dir().join(name), model.join(name)).unwrap();
    }
    ok(&[
        "index",
        s(&fixtures()),
        "--out",
        s(index.path()),
        "--model",
        s(&model),
    ]);
    let after: Vec<Vec<u8>> = ["tokenizer.json", "config.json"]
        .iter()
        .map(|f| std::fs::read(model.join(f)).unwrap())
        .collect();
    assert_eq!(
        before, after,
        "tokenizer.json and config.json were truncated"
    );
    assert!(search(index.path(), "install", "semantic", json!({})).is_ok());
}

#[test]
fn a_run_that_skips_every_input_keeps_the_old_index() {
    let index = lexical_index(&fixtures());
    let good = std::fs::read(index.path().join("index.cairn")).unwrap();
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(
        bad.path().join("broken.jsonl"),
        "not json\n{\"text\": \"no id\"}\n",
    )
    .unwrap();
    let error = fails(&[
        "index",
        s(bad.path()),
        "--no-embed",
        "--out",
        s(index.path()),
    ]);
    assert!(
        error.contains("every input was skipped") && error.contains("--allow-empty"),
        "{error}"
    );
    assert_eq!(
        std::fs::read(index.path().join("index.cairn")).unwrap(),
        good
    );
    ok(&[
        "index",
        s(bad.path()),
        "--no-embed",
        "--out",
        s(index.path()),
        "--allow-empty",
    ]);
    assert_ne!(
        std::fs::read(index.path().join("index.cairn")).unwrap(),
        good
    );
    // No staging folder is left behind (the lock file of `cairn index` stays: an empty file).
    let mut names: Vec<String> = std::fs::read_dir(index.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [".cairn-lock", "index.cairn"]);
}

#[test]
fn a_build_killed_at_any_moment_leaves_a_whole_index() {
    let index = model_index(&fixtures());
    let model = index.path().join("model");
    let sha = |dir: &Path| -> Vec<Vec<u8>> {
        [
            "index.cairn",
            "model/model.gguf",
            "model/tokenizer.json",
            "model/config.json",
        ]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
        .collect()
    };
    let original = sha(index.path());
    // A second input, so each build writes a different index (old and new can be told apart).
    let inputs = tempfile::tempdir().unwrap();
    std::fs::write(
        inputs.path().join("extra.md"),
        "# Extra\n\nA page added between two builds.\n",
    )
    .unwrap();
    let mut seen_new = false;
    for delay_ms in [20, 80, 200, 400, 700, 1000, 1500, 2200, 3000, 4500] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args([
                "index",
                s(&fixtures()),
                s(inputs.path()),
                "--out",
                s(index.path()),
                "--model",
                s(&model_dir()),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let now = sha(index.path());
        // The model files are always whole (the same bytes each build), and the index decodes.
        assert_eq!(
            now[1..],
            original[1..],
            "the model files changed after a kill at {delay_ms} ms"
        );
        let hits = search(index.path(), "install", "hybrid", json!({}))
            .unwrap_or_else(|e| panic!("after a kill at {delay_ms} ms: {e}"));
        assert!(!hits.as_array().unwrap().is_empty());
        seen_new |= now[0] != original[0];
    }
    assert!(model.join("config.json").exists());
    // Some kills came after the commit (the slowest delays outlast a build of these few files).
    assert!(seen_new, "no build finished: lengthen the delays");
}

#[test]
fn misspelled_options_are_errors_for_documents_and_context_too() {
    let index = lexical_index(&fixtures());
    let search = |output: &str, options: &str| {
        let out = cairn(&[
            "search",
            s(index.path()),
            "install",
            "--output",
            output,
            "--options",
            options,
        ]);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for output in ["documents", "context"] {
        for options in [
            json!({ "limt": 3 }),
            json!({ "chunkTreshold": 0.5 }),
            json!({ "tokenBudgett": 5 }),
        ] {
            let (ok, stderr) = search(output, &options.to_string());
            assert!(
                !ok && stderr.contains("unknown field"),
                "{output} {options}: {stderr}"
            );
        }
    }
    let (ok, stderr) = search("documents", r#"{"chunkThreshold": 0.5, "limit": 2}"#);
    assert!(ok, "{stderr}");
    // A search's shape of hits is not a document search's: said, not ignored.
    let (ok, stderr) = search("documents", r#"{"maxDocuments": 2}"#);
    assert!(
        !ok && stderr.contains("searchDocuments gives `limit` documents"),
        "{stderr}"
    );
    let (ok, stderr) = search("context", r#"{"tokenBudget": 50}"#);
    assert!(ok, "{stderr}");
}

#[test]
fn queries_files_follow_output_and_options_and_survive_a_bad_line() {
    let index = lexical_index(&fixtures());
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("queries.jsonl");
    std::fs::write(&queries, "{\"_id\": \"1\", \"text\": \"install\"}\nnot a query\n{\"_id\": 2, \"text\": \"search\"}\n").unwrap();
    let out = cairn(&[
        "search",
        s(index.path()),
        "--queries",
        s(&queries),
        "--output",
        "documents",
        "--options",
        r#"{"limit": 1}"#,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("queries.jsonl:2"));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["queryId"], "2");
    for line in &lines {
        assert!(
            line["result"]["results"].as_array().unwrap().len() <= 1,
            "{line}"
        );
    }
    let misspelled = cairn(&[
        "search",
        s(index.path()),
        "--queries",
        s(&queries),
        "--options",
        r#"{"limt": 1}"#,
    ]);
    assert!(!misspelled.status.success());
}

#[test]
fn documents_are_not_crowded_out_by_one_long_document() {
    let dir = tempfile::tempdir().unwrap();
    let long: String = (0..300)
        .map(|i| format!("Paragraph {i} is about cairns on the trail.\n\n"))
        .collect();
    std::fs::write(dir.path().join("long.md"), format!("# Long\n\n{long}")).unwrap();
    std::fs::write(
        dir.path().join("short.md"),
        "# Short\n\nOne cairn marks the pass.\n",
    )
    .unwrap();
    let index = tempfile::tempdir().unwrap();
    ok(&[
        "index",
        s(dir.path()),
        "--no-embed",
        "--chunk-words",
        "10",
        "--out",
        s(index.path()),
    ]);
    let out = ok(&[
        "search",
        s(index.path()),
        "cairn",
        "--mode",
        "lexical",
        "--output",
        "documents",
        "--options",
        r#"{"facets": ["title"]}"#,
    ]);
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(response["total"], 2, "{response}");
    let ids: Vec<&str> = response["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["docId"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"long.md") && ids.contains(&"short.md"),
        "{ids:?}"
    );
}

#[test]
fn indexed_text_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let title = format!(
        "Evil\u{1b}]0;owned\u{7}\u{1b}[2J\n 1. Forged hit  [x, lines 1-1]{}",
        "t".repeat(100_000)
    );
    let record = json!({ "_id": "evil", "title": title, "text": "cairn text with \u{1b}[31mred\u{1b}[0m and \r carriage returns" });
    std::fs::write(dir.path().join("evil.jsonl"), format!("{record}\n")).unwrap();
    let index = lexical_index(dir.path());
    let out = ok(&["search", s(index.path()), "cairn", "--mode", "lexical"]);
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert_eq!(
        out.lines()
            .filter(|l| l.trim_start().starts_with("1."))
            .count(),
        1,
        "{out}"
    );
    assert!(
        out.len() < 2000,
        "a 100,000-character title was printed whole"
    );
    // JSON stays exact.
    let hits = search(index.path(), "cairn", "lexical", json!({})).unwrap();
    assert_eq!(hits[0]["citation"]["title"], json!(title));
}

#[test]
fn chunk_words_zero_and_a_damaged_header_get_clear_errors() {
    let out = tempfile::tempdir().unwrap();
    let refused = cairn(&[
        "index",
        s(&fixtures()),
        "--no-embed",
        "--chunk-words",
        "0",
        "--out",
        s(out.path()),
    ]);
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--chunk-words"));

    let index = lexical_index(&fixtures());
    let path = index.path().join("index.cairn");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[12..20].copy_from_slice(&(1u64 << 32).to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let error = search(index.path(), "install", "lexical", json!({})).unwrap_err();
    assert!(error.contains("its header says 4294967320"), "{error}");
}
