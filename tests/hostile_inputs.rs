//! Hostile input, round two: file names that would make links leave the site, filter bounds
//! that are not dates, JSONL nesting deep enough to overflow a stack, symbolic link loops and
//! FIFOs under an input folder, and files or records too large to hold. Each test failed
//! before its fix.
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cairn::chunk::ChunkLimit;
use cairn::ingest::{collect_files, ingest, IngestOptions, Ingested};
use cairn::{Error, SearchOptions, Searcher};
use globset::GlobSet;
use serde_json::{json, Value};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `cairn`, failing the test if it has not finished within a minute (a FIFO opened for
/// reading would wait for a writer forever).
fn cairn(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("cairn {args:?} hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs `cairn`, asserting it succeeds.
fn ok(args: &[&str]) -> Output {
    let out = cairn(args);
    assert!(
        out.status.success(),
        "cairn {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Ingests what `collect_files` finds under `inputs`, as the CLI does (on rayon's threads).
fn ingest_paths(inputs: &[PathBuf], base_url: &str) -> Ingested {
    let files = collect_files(inputs, &GlobSet::empty()).unwrap();
    let options = IngestOptions {
        chunk_limit: ChunkLimit::words(200),
        base_url: base_url.into(),
    };
    let mut ingested = ingest(&files, &options, || {});
    ingested.skipped.extend(files.skipped);
    ingested
}

fn messages(errors: &[Error]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn ids(ingested: &Ingested) -> Vec<&str> {
    ingested
        .documents
        .iter()
        .map(|d| d.document.id.as_str())
        .collect()
}

/// Decodes `%XX` escapes.
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Resolves a relative URL against `http://site.example/docs/` as RFC 3986 and the WHATWG URL
/// standard do, for the one kind of reference a document's URL may be: a relative path (no
/// scheme, no leading `/` or `\`, which browsers read as `/`), with no query or fragment. Any
/// other kind fails the test.
fn resolved(url: &str) -> String {
    let first_segment = url.split('/').next().unwrap();
    assert!(
        !url.starts_with('/') && !url.starts_with('\\'),
        "{url:?} would leave the folder, or the site"
    );
    assert!(
        !first_segment.contains(':'),
        "{url:?} would be read as a scheme"
    );
    assert!(
        url.bytes()
            .all(|b| b.is_ascii_graphic() && !b"?#\\\"<>`{}|^[]".contains(&b)),
        "{url:?} holds a character a URL path does not"
    );
    for segment in url.split('/') {
        // WHATWG reads `%2e` in a path as a dot.
        let dots = segment.to_ascii_lowercase().replace("%2e", ".");
        assert!(dots != "." && dots != "..", "{url:?} would step up");
    }
    format!("http://site.example/docs/{url}")
}

#[cfg(unix)]
#[test]
fn file_names_are_percent_encoded_into_urls() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let names: [(&[u8], &str); 9] = [
        (b"\\\\evil.example.md", "%5C%5Cevil.example.md"),
        (b"?q=1.md", "%3Fq=1.md"),
        (b"a#b?c.md", "a%23b%3Fc.md"),
        (b"100% sure.md", "100%25%20sure.md"),
        (b"%2e%2e.md", "%252e%252e.md"),
        ("café.md".as_bytes(), "caf%C3%A9.md"),
        (b"caf\xe9 latin-1.md", "caf%E9%20latin-1.md"),
        (b"javascript:alert(1).md", "javascript%3Aalert(1).md"),
        (b"bell\x07.md", "bell%07.md"),
    ];
    for (name, _) in names {
        let path = dir.path().join(std::ffi::OsStr::from_bytes(name));
        std::fs::write(path, "Lantern text.\n").unwrap();
    }
    std::fs::create_dir_all(dir.path().join("sub dir/#x")).unwrap();
    std::fs::write(
        dir.path().join("sub dir/#x/index.html"),
        "<p>Lantern page.</p>",
    )
    .unwrap();

    let ingested = ingest_paths(&[dir.path().to_path_buf()], "");
    assert!(
        ingested.skipped.is_empty(),
        "{:?}",
        messages(&ingested.skipped)
    );
    let url_of = |name: &[u8]| {
        let path = dir.path().join(std::ffi::OsStr::from_bytes(name));
        let doc = ingested
            .documents
            .iter()
            .find(|d| d.origin == path.display().to_string())
            .unwrap_or_else(|| panic!("{path:?} was not indexed"));
        doc.document.url.clone().unwrap()
    };
    for (name, expected) in names {
        let url = url_of(name);
        assert_eq!(url, expected, "{:?}", String::from_utf8_lossy(name));
        let absolute = resolved(&url);
        let path = absolute.strip_prefix("http://site.example/docs/").unwrap();
        assert_eq!(percent_decoded(path), name, "{absolute} names the file");
    }
    let page = url_of(b"sub dir/#x/index.html");
    assert_eq!(page, "sub%20dir/%23x/");
    assert_eq!(resolved(&page), "http://site.example/docs/sub%20dir/%23x/");

    // Through the CLI, with --base-url: each hit's citation stays on the site.
    let out = tempfile::tempdir().unwrap();
    ok(&[
        "index",
        s(dir.path()),
        "--no-embed",
        "--base-url",
        "http://site.example/docs/",
        "--out",
        s(out.path()),
    ]);
    let search = ok(&[
        "search",
        s(out.path()),
        "lantern",
        "--json",
        "--mode",
        "lexical",
        "--options",
        r#"{"limit": 20}"#,
    ]);
    let hits: Vec<Value> = serde_json::from_slice(&search.stdout).unwrap();
    assert_eq!(hits.len(), names.len() + 1);
    for hit in &hits {
        let url = hit["citation"]["url"].as_str().unwrap();
        let path = url
            .strip_prefix("http://site.example/docs/")
            .unwrap_or_else(|| panic!("{url} leaves the site"));
        resolved(path);
    }
}

/// An index of three dated pages, in one file.
fn dated_index() -> (tempfile::TempDir, Searcher) {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for (name, updated) in [
        ("old.md", "2020-03-01"),
        ("new.md", "2024-06-01"),
        ("late.md", "2024-06-01T22:30:00Z"),
    ] {
        std::fs::write(
            docs.join(name),
            format!("---\ntitle: {name}\nupdated: {updated}\n---\n\nA lantern page.\n"),
        )
        .unwrap();
    }
    let out = dir.path().join("index");
    ok(&[
        "index",
        s(&docs),
        "--no-embed",
        "--layout",
        "single",
        "--out",
        s(&out),
    ]);
    let searcher = Searcher::from_bytes(&std::fs::read(out.join("index.cairn")).unwrap()).unwrap();
    (dir, searcher)
}

fn filtered(searcher: &Searcher, filter: Value) -> cairn::Result<Vec<String>> {
    let options = SearchOptions {
        filter: Some(filter),
        mode: cairn::hit::SearchMode::Lexical,
        limit: 10,
        ..SearchOptions::default()
    };
    let mut ids: Vec<String> = searcher
        .search("lantern", &options)?
        .into_iter()
        .map(|hit| hit.citation.doc_id)
        .collect();
    ids.sort();
    Ok(ids)
}

#[test]
fn a_date_bound_that_is_not_a_date_is_an_error() {
    let (_dir, searcher) = dated_index();
    for (filter, field, bound) in [
        (json!({"updatedAt": {"gte": "garbage"}}), "updatedAt", "gte"),
        (
            json!({"updatedAt": {"gte": "2026-13-45"}}),
            "updatedAt",
            "gte",
        ),
        (json!({"createdAt": {"lt": 12}}), "createdAt", "lt"),
        (
            json!({"createdAt": {"gt": "2024-02-30"}}),
            "createdAt",
            "gt",
        ),
        (
            json!({"updatedAt": {"gte": "2020", "lte": null}}),
            "updatedAt",
            "lte",
        ),
    ] {
        match filtered(&searcher, filter.clone()) {
            Err(Error::InvalidInput(message)) => {
                assert!(
                    message.contains(&format!("{field}: the bound {bound} is "))
                        && message.contains("\"2024-01-15\""),
                    "{filter}: {message}"
                );
            }
            other => panic!("{filter} should be an error: {other:?}"),
        }
    }
    // A bound of another field must be a number or text.
    assert!(matches!(
        filtered(&searcher, json!({"year": {"gte": [2020]}})),
        Err(Error::InvalidInput(_))
    ));
    // Valid bounds, as a year, a day or an instant with an offset, are compared as instants.
    assert_eq!(
        filtered(&searcher, json!({"updatedAt": {"gte": "2024"}})).unwrap(),
        ["late.md", "new.md"]
    );
    assert_eq!(
        filtered(&searcher, json!({"updatedAt": {"lte": "2024-06-01"}})).unwrap(),
        ["new.md", "old.md"]
    );
    assert_eq!(
        filtered(
            &searcher,
            json!({"updatedAt": {"gt": "2024-06-01T23:00:00+02:00", "lt": "2025-01"}})
        )
        .unwrap(),
        ["late.md"]
    );
}

#[test]
fn jsonl_records_nested_too_deep_are_skipped_whatever_field_nests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records.jsonl");
    let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let lines = [
        // Fine: nesting a little, and brackets inside strings do not count.
        json!({"_id": "fine", "text": "A lantern [[[[ {{{{", "metadata": {"a": {"b": [1, 2]}}})
            .to_string(),
        // 200 levels of metadata, and 100,000 of text.
        format!(
            r#"{{"_id": "deep-metadata", "text": "x", "metadata": {}}}"#,
            nested(199)
        ),
        format!(r#"{{"_id": "deep-text", "text": {}}}"#, nested(100_000)),
        // The limit exactly (the record is level 1), and one past it.
        format!(
            r#"{{"_id": "at-limit", "text": "x", "metadata": {}}}"#,
            nested(63)
        ),
        format!(
            r#"{{"_id": "past-limit", "text": "x", "metadata": {}}}"#,
            nested(64)
        ),
        // Unbalanced brackets that an escaped quote would hide from a careless count.
        format!(
            r#"{{"_id": "escaped", "text": "say \"{}\""}}"#,
            "[".repeat(1000)
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let ingested = ingest_paths(std::slice::from_ref(&path), "");
    assert_eq!(ids(&ingested), ["fine", "at-limit", "escaped"]);
    let p = path.display();
    let deep = |line: u32| {
        format!("{p}:{line}: the record nests deeper than 64 levels; skipped (flatten its fields)")
    };
    assert_eq!(messages(&ingested.skipped), [deep(2), deep(3), deep(5)]);
    assert!(
        ingested.warnings.is_empty(),
        "{:?}",
        messages(&ingested.warnings)
    );
}

#[cfg(unix)]
#[test]
fn link_loops_and_fifos_are_reported_and_never_opened() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("real.md"), "# Real\n\nA lantern.\n").unwrap();
    symlink(d.join("b.md"), d.join("a.md")).unwrap();
    symlink("a.md", d.join("b.md")).unwrap();
    symlink("./self.md", d.join("self.md")).unwrap();
    symlink(d.join("gone.md"), d.join("dangling.md")).unwrap();
    symlink("/dev/zero", d.join("zero.txt")).unwrap();
    let status = Command::new("mkfifo")
        .arg(d.join("pipe.md"))
        .status()
        .unwrap();
    assert!(status.success());
    // A FIFO without a supported extension would not have been read anyway: not reported.
    assert!(Command::new("mkfifo")
        .arg(d.join("pipe"))
        .status()
        .unwrap()
        .success());

    let out = tempfile::tempdir().unwrap();
    let run = ok(&["index", s(d), "--no-embed", "--out", s(out.path())]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let mut lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("skipped "))
        .collect();
    lines.sort();
    let p = |name: &str| d.join(name).display().to_string();
    assert_eq!(
        lines,
        [
            format!("skipped {}: a symbolic link loop; not followed", p("a.md")),
            format!("skipped {}: a symbolic link loop; not followed", p("b.md")),
            format!(
                "skipped {}: a symbolic link to {}, which does not exist",
                p("dangling.md"),
                p("gone.md")
            ),
            format!(
                "skipped {}: not a regular file (a FIFO, a named pipe: reading it would wait for a writer)",
                p("pipe.md")
            ),
            format!("skipped {}: a symbolic link loop; not followed", p("self.md")),
            format!(
                "skipped {}: not a regular file (a character device)",
                p("zero.txt")
            ),
        ],
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&run.stdout).starts_with("indexed 1 documents"),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );

    // Named on the command line, a FIFO is reported the same way.
    let run = ok(&[
        "index",
        &p("real.md"),
        &p("pipe.md"),
        "--no-embed",
        "--out",
        s(out.path()),
    ]);
    assert!(
        String::from_utf8_lossy(&run.stderr).contains(&format!(
            "skipped {}: not a regular file (a FIFO",
            p("pipe.md")
        )),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // And the library refuses to open one it is handed.
    let file = cairn::ingest::InputFile {
        root: d.to_path_buf(),
        path: d.join("pipe.md"),
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let options = IngestOptions {
            chunk_limit: ChunkLimit::words(200),
            base_url: String::new(),
        };
        let result = cairn::ingest::ingest_file(&file, &options).map(|_| ());
        sender.send(result.map_err(|e| e.to_string())).unwrap();
    });
    let result = receiver
        .recv_timeout(Duration::from_secs(30))
        .expect("ingest_file opened the FIFO and waits for a writer");
    assert!(
        result.unwrap_err().contains("not a regular file (a FIFO"),
        "a FIFO is refused"
    );
}

#[test]
fn files_and_records_past_the_size_limit_are_skipped_unread() {
    const MIB: u64 = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("small.md"), "# Small\n\nA lantern.\n").unwrap();
    // Sparse files: nothing big is written.
    for (name, size) in [
        ("huge.md", 300 * MIB),
        ("huge.pdf", 300 * MIB),
        ("big.html", 64 * MIB + 1),
    ] {
        std::fs::File::create(d.join(name))
            .unwrap()
            .set_len(size)
            .unwrap();
    }
    // PDFs may be larger than text: a 65 MiB one is read (and refused as damaged, being zeros).
    std::fs::File::create(d.join("large.pdf"))
        .unwrap()
        .set_len(65 * MIB)
        .unwrap();
    // A JSONL file whose second line is 80 MiB: the first 8 KiB look like text, the rest is a hole.
    let records = d.join("records.jsonl");
    let mut file = std::fs::File::create(&records).unwrap();
    write!(
        file,
        "{}\n{{\"_id\": \"huge\", \"text\": \"{}",
        json!({"_id": "before", "text": "A lantern before."}),
        "a".repeat(9000)
    )
    .unwrap();
    let start = file.metadata().unwrap().len();
    file.set_len(start + 80 * MIB).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&records)
        .unwrap();
    writeln!(
        file,
        "\"}}\n{}",
        json!({"_id": "after", "text": "A lantern after."})
    )
    .unwrap();
    drop(file);

    let out = tempfile::tempdir().unwrap();
    let run = ok(&["index", s(d), "--no-embed", "--out", s(out.path())]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let p = |name: &str| d.join(name).display().to_string();
    for expected in [
        format!(
            "skipped {}: it is 300.0 MiB, over the limit of 64 MiB for one file; split it into smaller files",
            p("huge.md")
        ),
        format!(
            "skipped {}: it is 300.0 MiB, over the limit of 256 MiB for one PDF; split it into smaller files",
            p("huge.pdf")
        ),
        format!(
            "skipped {}: it is 64.0 MiB, over the limit of 64 MiB for one file; split it into smaller files",
            p("big.html")
        ),
        format!(
            "skipped {}:2: the record is 80.0 MiB, over the limit of 64 MiB for one record; skipped (split its text over several records)",
            p("records.jsonl")
        ),
    ] {
        assert!(stderr.lines().any(|l| l == expected), "{expected}\nin\n{stderr}");
    }
    assert!(
        !stderr.contains(&format!("{}: it is", p("large.pdf"))),
        "{stderr}"
    );

    let ingested = ingest_paths(&[d.to_path_buf()], "");
    let mut ids = ids(&ingested);
    ids.sort();
    assert_eq!(ids, ["after", "before", "small.md"]);
}
