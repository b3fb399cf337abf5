//! Real inputs through the CLI: a static site (HTML, broken markup included), PDFs the test
//! writes itself (pages, a chunk across a page break, damaged files), and text that is not
//! UTF-8. Then hostile inputs through the library: nesting deep enough to overflow a stack,
//! entity-heavy pages, encodings, binary files, front matter bombs, ids that collide, records
//! with odd fields, dangling links. Unreadable files are reported and skipped; the rest is
//! indexed.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use cairn::chunk::ChunkLimit;
use cairn::ingest::{collect_files, ingest, IngestOptions, Ingested};
use globset::GlobSet;
use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};
use serde_json::{json, Value};

fn cairn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_static_site_indexes_as_pagefind_users_expect() {
    let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site");
    let out = tempfile::tempdir().unwrap();
    let run = cairn(&[
        "index",
        site.to_str().unwrap(),
        "--no-embed",
        "--base-url",
        "https://trail.example/",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("indexed 3 documents"));

    let hits = search(out.path(), "thunderstorms forecast", json!({}));
    let c = &hits[0]["citation"];
    assert_eq!(c["docId"], "guide/index.html");
    assert_eq!(c["docType"], "html");
    assert_eq!(c["title"], "Route planning guide");
    assert_eq!(c["url"], "https://trail.example/guide/#weather");
    assert_eq!(
        c["headingPath"],
        json!(["Route planning", "Checking the weather"])
    );
    assert_eq!(hits[0]["text"], "Look at the forecast twice: the evening before and at dawn.\n\nWind above the ridge\n\nThunderstorms after noon");
    let source = std::fs::read_to_string(site.join("guide/index.html")).unwrap();
    let line = source
        .lines()
        .nth(c["lineStart"].as_u64().unwrap() as usize - 1)
        .unwrap();
    assert!(line.contains("Look at the forecast"), "{line}");

    assert!(
        search(out.path(), "sidebar copyright", json!({})).is_empty(),
        "ignored and navigation text is not indexed"
    );
    let gear = search(out.path(), "headlamp", json!({}));
    assert_eq!(
        gear[0]["citation"]["url"],
        "https://trail.example/guide/#gear"
    );
    assert_eq!(gear[0]["metadata"]["difficulty"], "moderate");
    let home = search(out.path(), "trailhead mountain", json!({}));
    assert_eq!(home[0]["citation"]["url"], "https://trail.example/#welcome");
    assert_eq!(home[0]["createdAt"], "2023-04-01T00:00:00Z");
    assert_eq!(
        home[0]["links"][0],
        json!({"targetId": "guide/index.html", "targetType": "html", "title": "Route planning guide", "text": "route planning guide", "direction": "out"})
    );
    let api = search(out.path(), "routes creates", json!({}));
    assert_eq!(
        api[0]["citation"]["docId"], "api/index.html",
        "broken markup is still indexed"
    );
    assert!(api[0]["links"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["direction"] == "in" && l["targetId"] == "guide/index.html"));
}

/// A PDF with one page per text, in Courier.
fn write_pdf(path: &Path, pages: &[&str]) {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" },
    );
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
        kids.push(
            doc.add_object(
                dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => stream },
            )
            .into(),
        );
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
    write_pdf(
        &docs.join("manual.pdf"),
        &[
            "Glaciers carve valleys slowly.",
            "Moraines mark where glaciers stopped.",
            "Crevasses open in summer.",
        ],
    );
    std::fs::write(
        docs.join("broken.pdf"),
        b"%PDF-1.5\n1 0 obj << /Type /Catalog >> garbage",
    )
    .unwrap();
    std::fs::write(
        docs.join("latin1.txt"),
        b"Caf\xe9 au lait near the glacier.\n",
    )
    .unwrap();

    let out = dir.path().join("idx");
    let run = cairn(&[
        "index",
        docs.to_str().unwrap(),
        "--no-embed",
        "--chunk-words",
        "6",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("broken.pdf") && stderr.contains("PDF"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("indexed 2 documents"),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );

    let hits = search(&out, "moraines", json!({}));
    let c = &hits[0]["citation"];
    assert_eq!(
        (c["docId"].as_str(), c["docType"].as_str()),
        (Some("manual.pdf"), Some("pdf"))
    );
    assert_eq!(
        (c["pageFrom"].as_u64(), c["pageTo"].as_u64()),
        (Some(2), Some(2))
    );
    let hits = search(&out, "crevasses", json!({}));
    assert_eq!(hits[0]["citation"]["pageFrom"], 3);

    // Larger chunks pack across page breaks: the chunk says which pages it spans.
    let wide = dir.path().join("wide");
    assert!(cairn(&[
        "index",
        docs.join("manual.pdf").to_str().unwrap(),
        "--no-embed",
        "--out",
        wide.to_str().unwrap()
    ])
    .status
    .success());
    let hits = search(&wide, "moraines", json!({}));
    assert_eq!(
        (
            hits[0]["citation"]["pageFrom"].as_u64(),
            hits[0]["citation"]["pageTo"].as_u64()
        ),
        (Some(1), Some(3))
    );

    // Text that is not UTF-8 is decoded from the encoding chardetng recognizes.
    let hits = search(&out, "lait", json!({}));
    assert_eq!(hits[0]["citation"]["docId"], "latin1.txt");
    assert!(
        hits[0]["text"]
            .as_str()
            .unwrap()
            .contains("Caf\u{e9} au lait"),
        "{}",
        hits[0]["text"]
    );
}

/// A one-page PDF that pdf-extract cannot read safely: without a MediaBox (it panics), or
/// drawing a form that draws itself (it would recurse until the stack overflows).
fn write_hostile_pdf(path: &Path, self_drawing_form: bool) {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier" },
    );
    let mut resources = dictionary! { "Font" => dictionary! { "F1" => font } };
    let mut content = b"BT /F1 12 Tf 72 720 Td (Loops) Tj ET".to_vec();
    let mut pages = dictionary! { "Type" => "Pages", "Count" => 1 };
    if self_drawing_form {
        let form = doc.new_object_id();
        let dict = dictionary! {
            "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 10.into(), 10.into()],
            "Resources" => dictionary! { "XObject" => dictionary! { "X0" => form } },
        };
        doc.objects
            .insert(form, Object::Stream(Stream::new(dict, b"/X0 Do".to_vec())));
        resources.set("XObject", dictionary! { "X0" => form });
        content.extend_from_slice(b" /X0 Do");
        pages.set("MediaBox", vec![0.into(), 0.into(), 612.into(), 792.into()]);
    }
    let stream = doc.add_object(Stream::new(dictionary! {}, content));
    let page = doc
        .add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => stream });
    pages.set("Kids", vec![page.into()]);
    pages.set("Resources", resources);
    doc.objects.insert(pages_id, Object::Dictionary(pages));
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc.save(path).unwrap();
}

#[test]
fn pdfs_that_panic_or_loop_are_skipped_quietly() {
    let dir = tempfile::tempdir().unwrap();
    write_hostile_pdf(&dir.path().join("no-media-box.pdf"), false);
    write_hostile_pdf(&dir.path().join("loop.pdf"), true);
    std::fs::write(dir.path().join("fine.md"), "# Fine\n\nStill indexed.\n").unwrap();
    let out = dir.path().join("idx");
    let run = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "index",
            dir.path().to_str().unwrap(),
            "--no-embed",
            "--out",
            out.to_str().unwrap(),
        ])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("indexed 1 documents"),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    let line = |name: &str| {
        stderr
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}: {stderr}"))
            .to_string()
    };
    assert!(
        line("no-media-box.pdf").contains("the PDF is damaged"),
        "{stderr}"
    );
    assert!(
        line("loop.pdf").contains("the PDF is damaged (its forms draw themselves)"),
        "{stderr}"
    );
}

fn options(words: usize) -> IngestOptions<'static> {
    IngestOptions {
        chunk_limit: ChunkLimit::words(words),
        base_url: String::new(),
    }
}

/// Ingests what `collect_files` finds under `inputs`, as the CLI does (on rayon's threads).
fn ingest_paths(inputs: &[PathBuf], words: usize) -> Ingested {
    let files = collect_files(inputs, &GlobSet::empty()).unwrap();
    let mut ingested = ingest(&files, &options(words), || {});
    ingested.skipped.extend(files.skipped);
    ingested
}

fn ingest_dir(dir: &Path) -> Ingested {
    ingest_paths(&[dir.to_path_buf()], 200)
}

fn messages(errors: &[cairn::Error]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

/// The one message that mentions `what`.
fn message_about(errors: &[cairn::Error], what: &str) -> String {
    let found: Vec<String> = messages(errors)
        .into_iter()
        .filter(|m| m.contains(what))
        .collect();
    assert_eq!(found.len(), 1, "{what}: {:?}", messages(errors));
    found[0].clone()
}

fn document<'a>(ingested: &'a Ingested, id: &str) -> &'a cairn::ingest::SourceDocument {
    ingested
        .documents
        .iter()
        .find(|d| d.document.id == id)
        .unwrap_or_else(|| {
            panic!(
                "no {id}: {:?} {:?}",
                ingested
                    .documents
                    .iter()
                    .map(|d| &d.document.id)
                    .collect::<Vec<_>>(),
                messages(&ingested.skipped)
            )
        })
}

fn all_text(doc: &cairn::ingest::SourceDocument) -> String {
    doc.chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn deeply_nested_inputs_are_read_on_rayon_threads() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    // Pages deeper than 1024 levels are refused (html5ever's time grows with the square of the
    // depth); everything else is read, whatever its depth, on rayon's small stacks.
    let pages = [
        (
            "divs",
            format!(
                "<html><body>{}<p>Deep cairn</p>{}</body></html>",
                "<div>".repeat(n),
                "</div>".repeat(n)
            ),
        ),
        (
            "unclosed",
            format!(
                "<html><body>{}<p>Deep cairn</p></body></html>",
                "<div><span>".repeat(n / 2)
            ),
        ),
        (
            "formatting",
            format!("<p>{}Deep cairn", "<b><i>".repeat(n / 2)),
        ),
        (
            "links",
            format!(
                "<body>{}Deep cairn",
                "<a href=\"x.html\"><object>".repeat(n / 10)
            ),
        ),
        (
            "headings",
            format!(
                "<body><p>Deep cairn</p>{}<p>after</p>",
                "<h1><div>".repeat(n / 10)
            ),
        ),
        (
            "tables",
            format!(
                "<body><p>Deep cairn</p>{}",
                "<table><tr><td>".repeat(n / 10)
            ),
        ),
        (
            "marked",
            format!(
                "<body>{}<p>Deep cairn</p>",
                "<div data-cairn-body data-cairn-meta=\"k\">".repeat(n)
            ),
        ),
    ];
    let readable = [
        (
            "html",
            "allowed.html",
            format!(
                "<body>{}<p>Deep cairn</p>{}",
                "<div><a href=\"x\">".repeat(500),
                "</a></div>".repeat(500)
            ),
        ),
        (
            "markdown",
            "quotes.md",
            format!("{} Deep cairn\n", ">".repeat(n)),
        ),
        (
            "markdown",
            "lists.md",
            format!("{}Deep cairn\n", "- ".repeat(n / 2)),
        ),
        (
            "markdown",
            "brackets.md",
            format!("Deep cairn {}x{}\n", "[".repeat(n), "](y)".repeat(n)),
        ),
        (
            "markdown",
            "emphasis.md",
            format!("Deep cairn {}x{}\n", "*_".repeat(n / 2), "_*".repeat(n / 2)),
        ),
        (
            "markdown",
            "indents.md",
            (0..2000)
                .map(|i| format!("{}- item\n", "  ".repeat(i)))
                .collect::<String>()
                + "\nDeep cairn\n",
        ),
    ];
    for (name, page) in &pages {
        let path = dir.path().join(format!("{name}.html"));
        std::fs::write(&path, page).unwrap();
        let started = Instant::now();
        let ingested = ingest_paths(std::slice::from_ref(&path), 200);
        println!("{name}.html: {:?}", started.elapsed());
        assert_eq!(
            messages(&ingested.skipped),
            vec![format!("{}: its elements nest deeper than 1024 levels (a browser nests no deeper than 512)", path.display())]
        );
    }
    // Misnested formatting tags, reopened in each paragraph, multiply into elements.
    let tags: String = (0..500).map(|i| format!("<b id={i}>")).collect();
    let path = dir.path().join("reopened.html");
    std::fs::write(
        &path,
        format!("<p>{tags}x</p>{}", "<p>y</p>".repeat(20_000)),
    )
    .unwrap();
    let started = Instant::now();
    let ingested = ingest_paths(std::slice::from_ref(&path), 200);
    println!("reopened.html: {:?}", started.elapsed());
    assert_eq!(messages(&ingested.skipped).len(), 1);
    assert!(
        messages(&ingested.skipped)[0].contains("bytes make more than"),
        "{:?}",
        messages(&ingested.skipped)
    );
    for (_, name, source) in &readable {
        std::fs::write(dir.path().join(name), source).unwrap();
        let started = Instant::now();
        let ingested = ingest_paths(&[dir.path().join(name)], 200);
        println!("{name}: {:?}", started.elapsed());
        assert!(
            ingested.skipped.is_empty(),
            "{:?}",
            messages(&ingested.skipped)
        );
        let doc = &ingested.documents[0];
        assert!(
            all_text(doc).contains("Deep cairn"),
            "{name}: {}",
            all_text(doc).chars().take(200).collect::<String>()
        );
    }
}

#[test]
fn blocks_that_start_with_entities_have_exact_lines_in_a_megabyte() {
    let dir = tempfile::tempdir().unwrap();
    let mut page = String::from("<html><body>\n");
    let mut n = 0;
    while page.len() < 1 << 20 {
        let entity = ["&ldquo;", "&amp;", "&#122;", "&#x7A;", "&nbsp;"][n % 5];
        page.push_str(&format!("<p>{entity}Block {n} stands here</p>\n"));
        n += 1;
    }
    page.push_str("</body></html>\n");
    std::fs::write(dir.path().join("entities.html"), &page).unwrap();
    let started = Instant::now();
    // Five words a chunk: one chunk a block.
    let ingested = ingest_paths(&[dir.path().to_path_buf()], 5);
    println!(
        "{} entity blocks ({} bytes) in {:?}",
        n,
        page.len(),
        started.elapsed()
    );
    let doc = document(&ingested, "entities.html");
    assert_eq!(doc.chunks.len(), n);
    for (i, chunk) in doc.chunks.iter().enumerate() {
        assert!(
            chunk.text.contains(&format!("Block {i} ")),
            "{i}: {}",
            chunk.text
        );
        assert_eq!(
            (chunk.line_start, chunk.line_end),
            (i as u32 + 2, i as u32 + 2),
            "{i}: {}",
            chunk.text
        );
        let at = &page[chunk.source_offset as usize..];
        assert!(
            at.starts_with('&') || at.starts_with("Block"),
            "{i}: {}",
            &at[..20]
        );
    }
}

fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
    let mut bytes = if big_endian {
        vec![0xFE, 0xFF]
    } else {
        vec![0xFF, 0xFE]
    };
    for unit in text.encode_utf16() {
        bytes.extend(if big_endian {
            unit.to_be_bytes()
        } else {
            unit.to_le_bytes()
        });
    }
    bytes
}

/// Bytes no text encoding makes, the same every run.
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn encodings_are_detected_and_binary_files_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
    write("latin1.html", b"<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9</title></head><body><p>Caf\xe9 cr\xe8me</p></body></html>");
    write("declared.html", b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\"><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>");
    write(
        "utf16le.md",
        &utf16("# Th\u{e9}\n\nLittle-endian Markdown.\n", false),
    );
    write(
        "utf16be.html",
        &utf16("<title>Caf\u{e9}</title><p>Big-endian HTML.</p>", true),
    );
    write("bom.md", b"\xEF\xBB\xBF# Bom\n\nA UTF-8 byte order mark.\n");
    write(
        "undeclared.md",
        b"# Na\xefve\n\nA caf\xe9 in windows-1252, declared nowhere, na\xefve and \xe9l\xe9gant.\n",
    );
    write("noise.md", &noise(4096));
    write("noise.html", &noise(4096));
    write("noise.txt", &noise(4096));
    write("zeros.txt", &[0; 100]);
    write(
        "bom.jsonl",
        b"\xEF\xBB\xBF{\"_id\": \"j1\", \"text\": \"after a byte order mark\"}\n",
    );
    write(
        "utf16.jsonl",
        &utf16("{\"_id\": \"j2\", \"text\": \"wide\"}\n", false),
    );
    write("mixed.jsonl", b"{\"_id\": \"j3\", \"text\": \"fine\"}\n{\"_id\": \"j4\", \"text\": \"caf\xe9\"}\n{\"_id\": \"j5\", \"text\": \"fine too\"}\n");
    let ingested = ingest_dir(dir.path());

    let latin1 = document(&ingested, "latin1.html");
    assert_eq!(latin1.document.title, "Caf\u{e9}");
    assert_eq!(all_text(latin1), "Caf\u{e9} cr\u{e8}me");
    assert_eq!(
        all_text(document(&ingested, "declared.html")),
        "\u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}"
    );
    let le = document(&ingested, "utf16le.md");
    assert_eq!(
        (le.document.title.as_str(), all_text(le).as_str()),
        ("Th\u{e9}", "Little-endian Markdown.")
    );
    let be = document(&ingested, "utf16be.html");
    assert_eq!(
        (be.document.title.as_str(), all_text(be).as_str()),
        ("Caf\u{e9}", "Big-endian HTML.")
    );
    assert_eq!(document(&ingested, "bom.md").document.title, "Bom");
    let undeclared = document(&ingested, "undeclared.md");
    assert_eq!(undeclared.document.title, "Na\u{ef}ve");
    assert!(
        all_text(undeclared).contains("caf\u{e9} in windows-1252"),
        "{}",
        all_text(undeclared)
    );

    for name in ["noise.md", "noise.html", "noise.txt", "zeros.txt"] {
        assert!(
            message_about(&ingested.skipped, name)
                .ends_with(": looks like a binary file, not text"),
            "{name}"
        );
    }
    assert_eq!(
        all_text(document(&ingested, "j1")),
        "after a byte order mark"
    );
    assert!(message_about(&ingested.skipped, "utf16.jsonl")
        .contains("JSONL must be UTF-8, and this file is UTF-16LE"));
    assert!(
        message_about(&ingested.skipped, "mixed.jsonl").contains("mixed.jsonl:2: not UTF-8 text")
    );
    assert_eq!(all_text(document(&ingested, "j5")), "fine too");
    assert_eq!(
        ingested.documents.len(),
        9,
        "{:?}",
        ingested
            .documents
            .iter()
            .map(|d| &d.document.id)
            .collect::<Vec<_>>()
    );
}

#[test]
fn hostile_front_matter_is_reported_and_the_document_kept() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "---\ntitle: Deep\ntags: {}\n---\n\nBody of the deep one.\n",
        "[".repeat(20_000)
    );
    std::fs::write(dir.path().join("deep.md"), deep).unwrap();
    let mut bomb = format!(
        "---\npad: [{}]\nlol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
        vec!["1"; 2000].join(",")
    );
    for i in 1..12 {
        bomb.push_str(&format!(
            "lol{i}: &l{i} [{}]\n",
            vec![format!("*l{}", i - 1); 9].join(", ")
        ));
    }
    std::fs::write(
        dir.path().join("bomb.md"),
        bomb + "---\n\nBody of the bomb.\n",
    )
    .unwrap();
    let started = Instant::now();
    let ingested = ingest_dir(dir.path());
    println!("hostile front matter in {:?}", started.elapsed());
    assert!(
        ingested.skipped.is_empty(),
        "{:?}",
        messages(&ingested.skipped)
    );
    assert_eq!(
        all_text(document(&ingested, "deep.md")),
        "Body of the deep one."
    );
    assert_eq!(
        all_text(document(&ingested, "bomb.md")),
        "Body of the bomb."
    );
    let deep = message_about(&ingested.warnings, "deep.md");
    assert!(
        deep.contains("nests deeper than 64 levels; the front matter is ignored"),
        "{deep}"
    );
    let bomb = message_about(&ingested.warnings, "bomb.md");
    assert!(
        bomb.contains("expands to more than 100000 values"),
        "{bomb}"
    );
}

#[test]
fn ids_are_taken_as_written_and_duplicates_name_both_places() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("records.jsonl");
    std::fs::write(
        &records,
        concat!(
            "{\"_id\": 42, \"text\": \"the number\"}\n",
            "{\"_id\": \"42\", \"text\": \"the string\"}\n",
            "{\"_id\": 12345678901234567890, \"text\": \"big one\"}\n",
            "{\"_id\": 12345678901234567891, \"text\": \"big two\"}\n",
            "{\"_id\": 123456789012345678901234567890, \"text\": \"bigger\"}\n",
            "{\"_id\": 123456789012345678901234567891, \"text\": \"bigger still\"}\n",
            "{\"_id\": 4.20, \"text\": \"as written\"}\n",
            "\n",
            "{\"_id\": \"dup\", \"text\": \"first\"}\n",
            "{\"_id\": \"dup\", \"text\": \"second\"}\n",
        ),
    )
    .unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for folder in [&a, &b] {
        std::fs::create_dir(folder).unwrap();
        std::fs::write(folder.join("same.md"), "# Same\n\nTwice.\n").unwrap();
    }
    let ingested = ingest_paths(&[records.clone(), a.clone(), b.clone()], 200);
    let ids: Vec<&str> = ingested
        .documents
        .iter()
        .map(|d| d.document.id.as_str())
        .collect();
    assert_eq!(
        ids,
        vec![
            "42",
            "12345678901234567890",
            "12345678901234567891",
            "123456789012345678901234567890",
            "123456789012345678901234567891",
            "4.20",
            "dup",
            "same.md"
        ]
    );
    assert_eq!(all_text(document(&ingested, "42")), "the number");
    assert_eq!(all_text(document(&ingested, "dup")), "first");
    let path = records.display();
    assert_eq!(
        messages(&ingested.skipped),
        vec![
            format!("{path}:2: the id \"42\" is already taken by {path}:1; this one is skipped"),
            format!("{path}:10: the id \"dup\" is already taken by {path}:9; this one is skipped"),
            format!(
                "{}: the id \"same.md\" is already taken by {}; this one is skipped (to index two folders that hold the same paths, index their common parent folder)",
                b.join("same.md").display(),
                a.join("same.md").display()
            ),
        ]
    );
}

#[cfg(unix)]
#[test]
fn file_names_that_are_not_utf8_keep_every_byte_in_their_ids() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (&b"caf\xe9.md"[..], "Latin-1 name."),
        (b"caf\xe8.md", "Another one."),
        (b"caf\xc3\xa9.md", "UTF-8 name."),
    ] {
        std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(name)), text).unwrap();
    }
    let ingested = ingest_dir(dir.path());
    assert!(
        ingested.skipped.is_empty(),
        "{:?}",
        messages(&ingested.skipped)
    );
    let mut ids: Vec<(&str, &str)> = ingested
        .documents
        .iter()
        .map(|d| (d.document.id.as_str(), d.document.title.as_str()))
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            ("caf%E8.md", "caf%E8"),
            ("caf%E9.md", "caf%E9"),
            ("caf\u{e9}.md", "caf\u{e9}")
        ]
    );
}

#[test]
fn odd_jsonl_fields_are_read_or_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fields.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"_id\": \"a\", \"id\": \"b\", \"title\": 2024, \"text\": \"numeric title\", \"date\": 1705276800}\n",
            "{\"id\": \"c\", \"title\": {\"x\": 1}, \"text\": \"object title\", \"createdAt\": 1705276800000, \"url\": 7}\n",
            "{\"id\": \"d\", \"text\": \"bad date\", \"date\": \"last tuesday\", \"updated\": \"2024-02-01\"}\n",
            "{\"id\": \"e\", \"text\": 3.14, \"createdAt\": \"2024-01-01\", \"date\": \"never read\"}\n",
            "{\"id\": true, \"text\": \"no usable id\"}\n",
        ),
    )
    .unwrap();
    let ingested = ingest_dir(dir.path());
    let ids: Vec<&str> = ingested
        .documents
        .iter()
        .map(|d| d.document.id.as_str())
        .collect();
    assert_eq!(ids, vec!["a", "c", "d", "e"]);
    let a = document(&ingested, "a");
    assert_eq!(a.document.title, "2024");
    assert_eq!(
        a.document.created.as_ref().map(|t| t.iso.as_str()),
        Some("2024-01-15T00:00:00Z")
    );
    let c = document(&ingested, "c");
    assert_eq!(
        (
            c.document.title.as_str(),
            c.document.created.is_none(),
            c.document.url.is_none()
        ),
        ("", true, true)
    );
    let d = document(&ingested, "d");
    assert_eq!(
        (
            d.document.created.is_none(),
            d.document.updated.as_ref().map(|t| t.iso.as_str())
        ),
        (true, Some("2024-02-01T00:00:00Z"))
    );
    assert_eq!(all_text(document(&ingested, "e")), "3.14");
    let p = path.display();
    assert_eq!(
        messages(&ingested.warnings),
        vec![
            format!("{p}:1: both \"_id\" and \"id\" are given; \"_id\" is the id"),
            format!("{p}:2: \"title\" is {{\"x\": 1}}, not a string or a number; ignored"),
            format!("{p}:2: \"url\" is 7, not a string; ignored"),
            format!("{p}:2: \"createdAt\" is 1705276800000, not a date (YYYY-MM-DD, RFC 3339, or Unix seconds within the years 1 to 9999); ignored"),
            format!("{p}:3: \"date\" is \"last tuesday\", not a date (YYYY-MM-DD, RFC 3339, or Unix seconds within the years 1 to 9999); ignored"),
        ]
    );
    assert_eq!(
        messages(&ingested.skipped),
        vec![format!(
            "{p}:5: the record has no \"_id\" or \"id\" (a non-empty string, or a number)"
        )]
    );
}

#[cfg(unix)]
#[test]
fn dangling_links_and_loops_under_a_folder_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.md"), "# Real\n\nHere.\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.md"), dir.path().join("dangling.md")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.png"), dir.path().join("picture.png"))
        .unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/up")).unwrap();
    let files = collect_files(&[dir.path().to_path_buf()], &GlobSet::empty()).unwrap();
    assert_eq!(files.len(), 1);
    let mut skipped = messages(&files.skipped);
    skipped.sort();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(
        skipped[0],
        format!(
            "{}: a symbolic link to {}, which does not exist",
            dir.path().join("dangling.md").display(),
            dir.path().join("gone.md").display()
        )
    );
    assert!(
        skipped[1].starts_with(&format!(
            "{}: a symbolic link back to ",
            dir.path().join("sub/up").display()
        )),
        "{}",
        skipped[1]
    );
}
