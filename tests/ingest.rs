//! Real inputs through the CLI: a static site (HTML, broken markup included), PDFs the test
//! writes itself (pages, a chunk across a page break, a damaged file), and text that is not
//! UTF-8. Unreadable files are reported and skipped; the rest is indexed.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;
use std::process::{Command, Output};

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};
use serde_json::{json, Value};

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
}

fn search(index: &Path, query: &str, options: Value) -> Vec<Value> {
    let out = cairn(&["search", index.to_str().unwrap(), query, "--json", "--mode", "lexical", "--options", &options.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap().as_array().unwrap().clone()
}

#[test]
fn a_static_site_indexes_as_pagefind_users_expect() {
    let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site");
    let out = tempfile::tempdir().unwrap();
    let run = cairn(&["index", site.to_str().unwrap(), "--no-embed", "--base-url", "https://trail.example/", "--out", out.path().to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("indexed 3 documents"));

    let hits = search(out.path(), "thunderstorms forecast", json!({}));
    let c = &hits[0]["citation"];
    assert_eq!(c["docId"], "guide/index.html");
    assert_eq!(c["docType"], "html");
    assert_eq!(c["title"], "Route planning guide");
    assert_eq!(c["url"], "https://trail.example/guide/#weather");
    assert_eq!(c["headingPath"], json!(["Route planning", "Checking the weather"]));
    assert_eq!(hits[0]["text"], "Look at the forecast twice: the evening before and at dawn.\n\nWind above the ridge\n\nThunderstorms after noon");
    let source = std::fs::read_to_string(site.join("guide/index.html")).unwrap();
    let line = source.lines().nth(c["lineStart"].as_u64().unwrap() as usize - 1).unwrap();
    assert!(line.contains("Look at the forecast"), "{line}");

    assert!(search(out.path(), "sidebar copyright", json!({})).is_empty(), "ignored and navigation text is not indexed");
    let gear = search(out.path(), "headlamp", json!({}));
    assert_eq!(gear[0]["citation"]["url"], "https://trail.example/guide/#gear");
    assert_eq!(gear[0]["metadata"]["difficulty"], "moderate");
    let home = search(out.path(), "trailhead mountain", json!({}));
    assert_eq!(home[0]["citation"]["url"], "https://trail.example/#welcome");
    assert_eq!(home[0]["createdAt"], "2023-04-01T00:00:00Z");
    assert_eq!(home[0]["links"][0], json!({"targetId": "guide/index.html", "title": "Route planning guide", "text": "route planning guide", "direction": "out"}));
    let api = search(out.path(), "routes creates", json!({}));
    assert_eq!(api[0]["citation"]["docId"], "api/index.html", "broken markup is still indexed");
    assert!(api[0]["links"].as_array().unwrap().iter().any(|l| l["direction"] == "in" && l["targetId"] == "guide/index.html"));
}

/// A PDF with one page per text, in Courier.
fn write_pdf(path: &Path, pages: &[&str]) {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for text in pages {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 720.into()]),
                Operation::new("Tj", vec![Object::string_literal(*text)]),
                Operation::new("ET", vec![]),
            ],
        };
        let stream = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        kids.push(doc.add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => stream }).into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc.save(path).unwrap();
}

#[test]
fn pdf_pages_damaged_files_and_non_utf8_text() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    write_pdf(&docs.join("manual.pdf"), &["Glaciers carve valleys slowly.", "Moraines mark where glaciers stopped.", "Crevasses open in summer."]);
    std::fs::write(docs.join("broken.pdf"), b"%PDF-1.5\n1 0 obj << /Type /Catalog >> garbage").unwrap();
    std::fs::write(docs.join("latin1.txt"), b"Caf\xe9 au lait near the glacier.\n").unwrap();

    let out = dir.path().join("idx");
    let run = cairn(&["index", docs.to_str().unwrap(), "--no-embed", "--chunk-words", "6", "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("broken.pdf") && stderr.contains("PDF"), "{stderr}");
    assert!(String::from_utf8_lossy(&run.stdout).contains("indexed 2 documents"), "{}", String::from_utf8_lossy(&run.stdout));

    let hits = search(&out, "moraines", json!({}));
    let c = &hits[0]["citation"];
    assert_eq!((c["docId"].as_str(), c["docType"].as_str()), (Some("manual.pdf"), Some("pdf")));
    assert_eq!((c["pageFrom"].as_u64(), c["pageTo"].as_u64()), (Some(2), Some(2)));
    let hits = search(&out, "crevasses", json!({}));
    assert_eq!(hits[0]["citation"]["pageFrom"], 3);

    // Larger chunks pack across page breaks: the chunk says which pages it spans.
    let wide = dir.path().join("wide");
    assert!(cairn(&["index", docs.join("manual.pdf").to_str().unwrap(), "--no-embed", "--out", wide.to_str().unwrap()]).status.success());
    let hits = search(&wide, "moraines", json!({}));
    assert_eq!((hits[0]["citation"]["pageFrom"].as_u64(), hits[0]["citation"]["pageTo"].as_u64()), (Some(1), Some(3)));

    // Text that is not UTF-8 is read with the bad byte replaced; its words are found.
    let hits = search(&out, "lait", json!({}));
    assert_eq!(hits[0]["citation"]["docId"], "latin1.txt");
    assert!(hits[0]["text"].as_str().unwrap().contains("Caf\u{fffd} au lait"));
}
