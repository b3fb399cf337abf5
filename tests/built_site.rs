//! Defaults that fit a built site, through the CLI: a built site's pages without the other files
//! its generator copies beside them, several input folders that keep their names, and the
//! layout chosen by what a first answer would cost.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

use serde_json::Value;

mod common;
use common::{cairn, ok};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A page as Sphinx writes one: navigation, the body in `role="main"`, a script.
fn page(title: &str, body: &str) -> String {
    format!(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title} — Moraine docs</title><script src="_static/searchtools.js"></script></head><body><div class="related" role="navigation"><a href="index.html">Moraine docs</a></div><div role="main"><section id="{id}"><h1>{title}</h1><p>{body}</p></section></div></body></html>"#,
        id = title.to_lowercase().replace(' ', "-")
    )
}

/// A Sphinx-like built site in `dir`: its pages, the reStructuredText source of each under
/// `_sources/` (the copies a search should not return), static files, a search page and a
/// robots.txt. Returns the names of the pages.
fn sphinx_site(dir: &Path) -> Vec<&'static str> {
    let pages = [
        (
            "index",
            "Moraine",
            "Moraine maps glaciers and the moraines they leave behind.",
        ),
        (
            "install",
            "Installing",
            "Install moraine with pip; the moraines come with it.",
        ),
        (
            "usage",
            "Usage",
            "Call moraine.survey to map the moraines of a valley.",
        ),
    ];
    for (name, title, body) in pages {
        write(&dir.join(format!("{name}.html")), &page(title, body));
        write(
            &dir.join(format!("_sources/{name}.rst.txt")),
            &format!("{title}\n{}\n\n{body}\n", "=".repeat(title.len())),
        );
    }
    write(
        &dir.join("search.html"),
        &page(
            "Search",
            "Please activate JavaScript to enable the search functionality.",
        ),
    );
    write(
        &dir.join("_static/searchtools.js"),
        "var Search = { moraines: true };",
    );
    write(
        &dir.join("_static/basic.css"),
        "div.related { moraines: none }",
    );
    write(&dir.join("robots.txt"), "User-agent: *\nmoraines allowed\n");
    vec!["index.html", "install.html", "search.html", "usage.html"]
}

/// The ids of the documents in the index in `out`, sorted.
fn document_ids(out: &Path) -> Vec<String> {
    let index =
        cairn::index::format::read(&std::fs::read(out.join("index.cairn")).unwrap()).unwrap();
    let mut ids: Vec<String> = index.documents.iter().map(|d| d.id.clone()).collect();
    ids.sort();
    ids
}

/// `cairn search OUT QUERY --json --mode lexical`: the hits.
fn search(out: &Path, query: &str) -> Vec<Value> {
    let said = ok(&[
        "search",
        s(out),
        query,
        "--json",
        "--mode",
        "lexical",
        "--limit",
        "50",
    ]);
    serde_json::from_str::<Value>(&said)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_built_site_is_indexed_by_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let pages = sphinx_site(&site);

    // By default, the pages only, and one line that says what was left out.
    let out = dir.path().join("out");
    let run = cairn(&["index", s(&site), "--no-embed", "--out", s(&out)]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr.trim(),
        format!(
            "{} is a built site: indexed its 4 HTML pages, left out 4 other files (.txt 4); pass --all-files to index them",
            site.display()
        )
    );
    assert_eq!(document_ids(&out), pages);
    let hits = search(&out, "moraines");
    assert!(hits.len() >= 3, "{hits:?}");
    for hit in &hits {
        let url = hit["citation"]["url"].as_str().unwrap();
        assert!(!url.contains("_sources") && !url.ends_with(".txt"), "{url}");
    }
    // `--output documents` sees the same documents.
    let documents: Value = serde_json::from_str(&ok(&[
        "search",
        s(&out),
        "moraines",
        "--output",
        "documents",
        "--mode",
        "lexical",
    ]))
    .unwrap();
    let results = documents["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(
        results
            .iter()
            .all(|d| d["docId"].as_str().unwrap().ends_with(".html")),
        "{results:?}"
    );

    // With --all-files, the other files too, and nothing said about them.
    let all = dir.path().join("all");
    let run = cairn(&[
        "index",
        s(&site),
        "--no-embed",
        "--all-files",
        "--out",
        s(&all),
    ]);
    assert!(run.status.success());
    assert!(
        !String::from_utf8_lossy(&run.stderr).contains("built site"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ids = document_ids(&all);
    assert_eq!(ids.len(), 8, "{ids:?}");
    for id in ["_sources/install.rst.txt", "robots.txt", "install.html"] {
        assert!(ids.iter().any(|i| i == id), "{id} in {ids:?}");
    }

    // A file named on the command line is always indexed, even one a built site leaves out.
    let named = dir.path().join("named");
    let run = cairn(&[
        "index",
        s(&site),
        s(&site.join("_sources/usage.rst.txt")),
        "--no-embed",
        "--out",
        s(&named),
    ]);
    assert!(run.status.success());
    let ids = document_ids(&named);
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert!(ids.iter().any(|i| i == "usage.rst.txt"), "{ids:?}");
    // And --exclude takes a file out before anything is counted as left out.
    let run = cairn(&[
        "index",
        s(&site),
        "--no-embed",
        "--exclude",
        "robots.txt",
        "--out",
        s(&named),
    ]);
    assert!(String::from_utf8_lossy(&run.stderr).contains("left out 3 other files (.txt 3)"));
}

#[test]
fn a_folder_without_a_site_index_is_not_a_built_site() {
    // Markdown, text and an HTML page, but no index.html at the top: every file, as before.
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    write(
        &docs.join("guide.md"),
        "# Guide\n\nMoraines are ridges of debris.\n",
    );
    write(&docs.join("notes.txt"), "Notes on moraines.\n");
    write(
        &docs.join("demo/page.html"),
        &page("Demo", "A moraine demo."),
    );
    let out = dir.path().join("out");
    let run = cairn(&["index", s(&docs), "--no-embed", "--out", s(&out)]);
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stderr), "");
    assert_eq!(
        document_ids(&out),
        ["demo/page.html", "guide.md", "notes.txt"]
    );
}

#[test]
fn several_input_folders_keep_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let (std_docs, book) = (dir.path().join("std"), dir.path().join("book"));
    write(
        &std_docs.join("index.html"),
        &page("Std", "The standard library: moraines of types."),
    );
    write(
        &std_docs.join("fs/index.html"),
        &page("Fs", "Files, moraines of bytes."),
    );
    write(
        &book.join("index.html"),
        &page("Book", "The book: moraines of chapters."),
    );
    write(
        &book.join("ch01.html"),
        &page("Getting started", "Install and meet the moraines."),
    );
    let out = dir.path().join("out");
    let said = ok(&[
        "index",
        s(&std_docs),
        s(&book),
        "--no-embed",
        "--base-url",
        "/docs/",
        "--out",
        s(&out),
    ]);
    assert!(said.starts_with("indexed 4 documents,"), "{said}");
    assert_eq!(
        document_ids(&out),
        [
            "book/ch01.html",
            "book/index.html",
            "std/fs/index.html",
            "std/index.html"
        ]
    );
    let mut urls: Vec<String> = search(&out, "moraines")
        .iter()
        .map(|h| {
            h["citation"]["url"]
                .as_str()
                .unwrap()
                .split('#')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    urls.sort();
    urls.dedup();
    assert_eq!(
        urls,
        [
            "/docs/book/",
            "/docs/book/ch01.html",
            "/docs/std/",
            "/docs/std/fs/"
        ]
    );

    // One folder keeps today's URLs: its path under the folder.
    let one = dir.path().join("one");
    ok(&["index", s(&std_docs), "--no-embed", "--out", s(&one)]);
    assert_eq!(document_ids(&one), ["fs/index.html", "index.html"]);

    // Two folders of one name: the same path from both is an error naming both files, and
    // nothing is written.
    let (a, b) = (dir.path().join("a/docs"), dir.path().join("b/docs"));
    write(&a.join("index.html"), &page("A", "First moraines."));
    write(&a.join("only-a.html"), &page("Only A", "Moraines of a."));
    write(&b.join("index.html"), &page("B", "Second moraines."));
    let clash = dir.path().join("clash");
    let run = cairn(&["index", s(&a), s(&b), "--no-embed", "--out", s(&clash)]);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!(
            "error: {}: its id and URL would be \"docs/index.html\", as {}'s are",
            b.join("index.html").display(),
            a.join("index.html").display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("index folders with different names"),
        "{stderr}"
    );
    assert!(!clash.join("index.cairn").exists());
    // Their parent folders have different names: both are indexed.
    let parents = dir.path().join("parents");
    ok(&[
        "index",
        s(&dir.path().join("a")),
        s(&dir.path().join("b")),
        "--no-embed",
        "--out",
        s(&parents),
    ]);
    assert_eq!(
        document_ids(&parents),
        [
            "a/docs/index.html",
            "a/docs/only-a.html",
            "b/docs/index.html"
        ]
    );
}

/// A small deterministic generator (xorshift), so the test needs no crate.
struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A made-up word of 3 to 10 letters.
    fn word(&mut self) -> String {
        let len = 3 + self.next() % 8;
        (0..len)
            .map(|_| (b'a' + (self.next() % 26) as u8) as char)
            .collect()
    }
}

#[test]
fn the_layout_is_chosen_by_what_a_first_answer_costs() {
    let dir = tempfile::tempdir().unwrap();
    // A site of random words, which compression cannot shrink under the budget.
    let big = dir.path().join("big");
    let mut words = Words(0x9e37_79b9_7f4a_7c15);
    let vocabulary: Vec<String> = (0..20_000).map(|_| words.word()).collect();
    for p in 0..60 {
        let body: Vec<&str> = (0..1_500)
            .map(|_| vocabulary[(words.next() % vocabulary.len() as u64) as usize].as_str())
            .collect();
        write(
            &big.join(format!("page{p:03}.md")),
            &format!("# Page {p}\n\n{}\n", body.join(" ")),
        );
    }
    let out = dir.path().join("big-out");
    let said = ok(&["index", s(&big), "--no-embed", "--out", s(&out)]);
    assert!(
        out.join("meta.cairn").is_file() && !out.join("index.cairn").exists(),
        "{said}"
    );
    assert!(said.contains("index.cairn would be "), "{said}");
    assert!(
        said.contains(", over the 300 kB a first answer should cost: wrote fragments"),
        "{said}"
    );
    // It answers.
    let hits = search(&out, &vocabulary[7]);
    assert!(!hits.is_empty());
    // --layout single still writes one file.
    let single = dir.path().join("big-single");
    let said = ok(&[
        "index",
        s(&big),
        "--no-embed",
        "--layout",
        "single",
        "--out",
        s(&single),
    ]);
    let size = std::fs::metadata(single.join("index.cairn")).unwrap().len();
    assert!(size > 300_000, "{size} bytes");
    assert!(!said.contains("first answer"), "{said}");

    // A small site: one file, and the line says why.
    let small = dir.path().join("small-out");
    let said = ok(&[
        "index",
        s(&big.join("page000.md")),
        "--no-embed",
        "--out",
        s(&small),
    ]);
    assert!(
        small.join("index.cairn").is_file() && !small.join("meta.cairn").exists(),
        "{said}"
    );
    assert!(
        said.contains("kB, within the 300 kB a first answer should cost: one file"),
        "{said}"
    );
}
