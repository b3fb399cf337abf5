//! The CLI end to end, on real files: index the fixture documents, search them, read the JSON,
//! check citations against the source files, and check that damaged indexes fail cleanly.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{cairn, ok};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docs")
}

/// A lexical-only index of the fixtures in a fresh temporary folder.
fn lexical_index() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let summary = ok(&[
        "index",
        fixtures().to_str().unwrap(),
        "--no-embed",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(summary.starts_with("indexed 6 documents,"), "{summary}");
    dir
}

fn search_json(index: &Path, query: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["search", index.to_str().unwrap(), query, "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str::<Value>(&ok(&args))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn utf16_slice(text: &str, start: u64, end: u64) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    String::from_utf16(&units[start as usize..end as usize]).unwrap()
}

#[test]
fn search_returns_cited_hits() {
    let index = lexical_index();
    let hits = search_json(
        index.path(),
        "installing the wasm target",
        &["--mode", "lexical"],
    );
    let top = &hits[0];
    assert_eq!(top["rank"], 1);
    assert_eq!(top["scoreKind"], "bm25");
    let citation = &top["citation"];
    assert_eq!(citation["docId"], "guide/install.md");
    assert_eq!(citation["docType"], "md");
    assert_eq!(citation["title"], "Installing Cairn");
    assert_eq!(citation["url"], "guide/install.md#requirements");
    assert_eq!(
        citation["headingPath"],
        serde_json::json!(["Installing Cairn", "Requirements"])
    );
    assert_eq!(
        top["id"],
        format!("guide/install.md#{}", citation["chunkIndex"])
    );
    assert!(top["signals"]["lexical"]["rank"] == 1 && top["signals"].get("semantic").is_none());

    // The citation points at the text in the source file: its offset and its lines.
    let source = std::fs::read_to_string(fixtures().join("guide/install.md")).unwrap();
    let text = top["text"].as_str().unwrap();
    let offset = citation["sourceOffset"].as_u64().unwrap() as usize;
    assert!(
        source[offset..].starts_with(&text[..20]),
        "offset {offset} does not start {text:?}"
    );
    let lines: Vec<&str> = source.lines().collect();
    let (first, last) = (
        citation["lineStart"].as_u64().unwrap() as usize,
        citation["lineEnd"].as_u64().unwrap() as usize,
    );
    assert!(
        lines[first - 1].starts_with("You need the Rust toolchain"),
        "{}",
        lines[first - 1]
    );
    assert!(
        lines[last - 1].contains("rustup target add"),
        "{}",
        lines[last - 1]
    );

    // Highlights slice to the words that matched.
    let words: Vec<String> = top["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            utf16_slice(
                text,
                h["start"].as_u64().unwrap(),
                h["end"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        words.iter().all(|w| w == "Installing" || w == "target"),
        "{words:?}"
    );
    assert_eq!(
        words.iter().filter(|w| *w == "target").count(),
        3,
        "{words:?}"
    );
    assert!(words.contains(&"Installing".to_string()), "{words:?}");
}

#[test]
fn highlights_are_utf16_on_accents_cjk_and_emoji() {
    let index = lexical_index();
    let hits = search_json(
        index.path(),
        "cafe 東京 search developers",
        &["--mode", "lexical"],
    );
    let mut seen = Vec::new();
    for hit in hits
        .iter()
        .filter(|h| h["citation"]["docId"] == "international.md")
    {
        let text = hit["text"].as_str().unwrap();
        for h in hit["highlights"].as_array().unwrap() {
            seen.push(utf16_slice(
                text,
                h["start"].as_u64().unwrap(),
                h["end"].as_u64().unwrap(),
            ));
        }
    }
    for word in [
        "café",
        "東京",
        "search",
        "developers",
        "café-hop".split('-').next().unwrap(),
    ] {
        assert!(
            seen.iter().any(|w| w == word),
            "{word} not highlighted in {seen:?}"
        );
    }
    assert!(
        seen.iter().all(|w| w.chars().all(|c| c.is_alphanumeric())),
        "{seen:?}"
    );
}

#[test]
fn jsonl_records_plain_text_and_batch_queries() {
    let index = lexical_index();
    let hits = search_json(index.path(), "term frequency", &["--mode", "lexical"]);
    assert_eq!(hits[0]["citation"]["docId"], "2");
    assert_eq!(hits[0]["citation"]["docType"], "jsonl");
    assert_eq!(hits[0]["citation"]["lineStart"], 2);
    let hits = search_json(index.path(), "memorial", &["--mode", "lexical"]);
    assert_eq!(hits[0]["citation"]["docId"], "notes.txt");
    // The three short paragraphs fit one chunk: lines 1 to 6, paragraphs joined by a blank line.
    assert_eq!(
        (
            hits[0]["citation"]["lineStart"].as_u64(),
            hits[0]["citation"]["lineEnd"].as_u64()
        ),
        (Some(1), Some(6))
    );
    assert_eq!(hits[0]["text"].as_str().unwrap().matches("\n\n").count(), 2);

    let queries = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        queries.path(),
        "{\"_id\": \"a\", \"text\": \"rank fusion\"}\n{\"_id\": 7, \"text\": \"stone\"}\n",
    )
    .unwrap();
    let out = ok(&[
        "search",
        index.path().to_str().unwrap(),
        "--queries",
        queries.path().to_str().unwrap(),
        "--limit",
        "2",
        "--json",
        "--mode",
        "lexical",
    ]);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["queryId"], "a");
    assert_eq!(lines[0]["hits"][0]["citation"]["docId"], "rec-1");
    assert_eq!(lines[1]["queryId"], "7");
    assert!(lines[1]["hits"].as_array().unwrap().len() <= 2);
}

#[test]
fn builds_are_deterministic_and_bad_records_are_skipped() {
    let a = lexical_index();
    let b = lexical_index();
    assert_eq!(
        std::fs::read(a.path().join("index.cairn")).unwrap(),
        std::fs::read(b.path().join("index.cairn")).unwrap()
    );

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.jsonl");
    std::fs::write(
        &input,
        "{\"_id\": \"ok\", \"text\": \"fine\"}\nnot json\n{\"text\": \"no id\"}\n",
    )
    .unwrap();
    let out = cairn(&[
        "index",
        input.to_str().unwrap(),
        "--no-embed",
        "--out",
        dir.path().join("idx").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.jsonl:2: not a JSON record"),
        "{stderr}"
    );
    assert!(
        stderr.contains("bad.jsonl:3: the record has no \"_id\""),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("indexed 1 documents"));
}

#[test]
fn exclude_globs_leave_files_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = cairn(&[
        "index",
        fixtures().to_str().unwrap(),
        "--no-embed",
        "--exclude",
        "guide/**",
        "--exclude",
        "*.jsonl",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("indexed 2 documents"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(search_json(dir.path(), "installing target", &["--mode", "lexical"]).is_empty());
}

#[test]
fn damaged_indexes_fail_with_clear_errors() {
    let index = lexical_index();
    let bytes = std::fs::read(index.path().join("index.cairn")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x5a;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", bytes[..bytes.len() - 10].to_vec(), "truncated"),
        ("flipped", flipped, "damaged"),
        (
            "not-an-index",
            b"# just markdown\n".to_vec(),
            "not a cairn index",
        ),
        ("empty", Vec::new(), "not a cairn index"),
    ];
    for (name, content, expected) in cases {
        let path = dir.path().join(format!("{name}.cairn"));
        std::fs::write(&path, content).unwrap();
        let out = cairn(&["search", path.to_str().unwrap(), "anything"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    let out = cairn(&["search", dir.path().join("missing").to_str().unwrap(), "x"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the index"));
}

#[test]
fn eval_reports_metrics_on_a_beir_collection() {
    let adi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/adi");
    assert!(
        adi.exists(),
        "the eval collections are expected at {}",
        adi.display()
    );
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "index",
        adi.join("corpus.jsonl").to_str().unwrap(),
        "--no-embed",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let out = ok(&[
        "eval",
        dir.path().to_str().unwrap(),
        "--queries",
        adi.join("queries.jsonl").to_str().unwrap(),
        "--qrels",
        adi.join("qrels/test.tsv").to_str().unwrap(),
        "--mode",
        "lexical",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["queries"], 35);
    let ndcg = report["ndcgAt10"].as_f64().unwrap();
    assert!(ndcg > 0.40 && ndcg <= 1.0, "nDCG@10 {ndcg}");
    assert!(report["recallAt100"].as_f64().unwrap() > 0.9);
}

#[test]
fn language_stems_and_stops_as_its_own_in_both_layouts() {
    let docs = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "haus.md",
            "# Das Haus\n\nEin Haus am Fluss, mit einem Garten für die Kinder.",
        ),
        (
            "bruecke.md",
            "# Die Brücke\n\nDie alte Brücke führt über den Fluss in die Stadt.",
        ),
    ] {
        std::fs::write(docs.path().join(name), text).unwrap();
    }
    let build = |language: &str, layout: &str| {
        let dir = tempfile::tempdir().unwrap();
        let (docs, out) = (docs.path().to_str().unwrap(), dir.path().to_str().unwrap());
        ok(&[
            "index",
            docs,
            "--no-embed",
            "--language",
            language,
            "--layout",
            layout,
            "--out",
            out,
        ]);
        dir
    };
    let ids = |dir: &Path, query: &str| -> Vec<String> {
        search_json(dir, query, &["--mode", "lexical"])
            .iter()
            .map(|h| h["citation"]["docId"].as_str().unwrap().to_string())
            .collect()
    };
    for layout in ["single", "fragments"] {
        let german = build("de-DE", layout);
        // "Häuser" stems as "Haus"; "für" and "die" are German stop words, so they match nothing.
        assert_eq!(ids(german.path(), "Häuser"), ["haus.md"], "{layout}");
        assert!(ids(german.path(), "für die").is_empty(), "{layout}");
        assert_eq!(ids(german.path(), "Brücken"), ["bruecke.md"], "{layout}");
        // As English, the plural is another word.
        let english = build("en", layout);
        assert!(ids(english.path(), "Häuser").is_empty(), "{layout}");
    }
    // Not told, the language is the one each document says: here `<html lang="de-CH">`, a
    // front matter `lang` and a JSONL `lang`, and one page in French: one index a language,
    // listed in languages.json.
    let said = tempfile::tempdir().unwrap();
    let page = |lang: &str, title: &str, text: &str| {
        format!("<!doctype html><html lang=\"{lang}\"><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>")
    };
    std::fs::write(
        said.path().join("haus.html"),
        page("de-CH", "Das Haus", "Ein Haus am Fluss."),
    )
    .unwrap();
    std::fs::write(
        said.path().join("bruecke.md"),
        "---\nlang: de\n---\n# Die Brücke\n\nDie Brücke über den Fluss.",
    )
    .unwrap();
    std::fs::write(
        said.path().join("notes.jsonl"),
        "{\"id\": \"n1\", \"title\": \"Gärten\", \"text\": \"Gärten am Haus\", \"lang\": \"de\"}\n",
    )
    .unwrap();
    std::fs::write(
        said.path().join("maison.html"),
        page("fr", "La maison", "Une maison au bord du fleuve."),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let index = |language: &str| {
        let out = cairn(&[
            "index",
            said.path().to_str().unwrap(),
            "--no-embed",
            "--all-files",
            "--language",
            language,
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        let told = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{told}");
        told
    };
    // Told one language, one index, with the French page reported.
    let told = index("de");
    assert!(told.contains("1 in fr"), "{told}");
    assert_eq!(ids(dir.path(), "Häusern"), ["haus.html", "n1"]);
    // Not told, over it: one index a language, and the index the folder held goes.
    let told = index("auto");
    assert!(told.contains("2 languages"), "{told}");
    assert!(!dir.path().join("index.cairn").exists());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("languages.json")).unwrap()).unwrap();
    assert_eq!(manifest["default"], "de");
    assert_eq!(manifest["languages"][0]["path"], "de/");
    assert_eq!(manifest["languages"][0]["documents"], 3);
    assert_eq!(manifest["languages"][1]["language"], "fr");
    assert_eq!(ids(&dir.path().join("de"), "Häusern"), ["haus.html", "n1"]);
    assert!(ids(&dir.path().join("de"), "maisons").is_empty());
    assert_eq!(ids(&dir.path().join("fr"), "maisons"), ["maison.html"]);
    let out = cairn(&["search", dir.path().to_str().unwrap(), "Haus"]);
    let refused = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && refused.contains("one index a language"),
        "{refused}"
    );
    // Told one language again: the manifest goes, the top holds the index.
    let told = index("de");
    assert!(told.contains("removed"), "{told}");
    assert!(!dir.path().join("languages.json").exists());
    assert_eq!(ids(dir.path(), "Häusern"), ["haus.html", "n1"]);

    let dir = tempfile::tempdir().unwrap();
    let out = cairn(&[
        "index",
        docs.path().to_str().unwrap(),
        "--no-embed",
        "--language",
        "Deutsch",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("--language") && said.contains("not a language tag"),
        "{said}"
    );
}
