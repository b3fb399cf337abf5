//! Hostile input to the fragmented layout's writer and reader, natively: a build into a folder
//! that holds the site's own files (in `p/` and `model/p/` too) deletes none of them; a damaged
//! pack is repaired by building again; a second build into the same folder is refused while the
//! first runs; a meta whose numbers are out of range, that claims more than it holds, or that is
//! a gzip bomb is refused, as is a fragment bomb and a record read from another record's place.
//! Each failed before its fix.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use cairn::fragment::load::native::Folder;
use cairn::fragment::load::Fragmented;
use cairn::fragment::write::{self, encode_meta, Options};
use cairn::fragment::{META_FILE, PACK_DIR};
use cairn::index::format;
use common::{cairn, lexical_single, ok};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn model_dir() -> PathBuf {
    root().join("models/all-MiniLM-L6-v2")
}

/// Every file under `dir` (relative path → bytes).
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                all.insert(
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    all
}

/// Fails with exit status 1 and no panic; its standard error.
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

fn hits(index: &Path, query: &str) -> usize {
    let out = ok(&["search", s(index), query, "--json", "--mode", "lexical"]);
    serde_json::from_str::<serde_json::Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn a_build_never_deletes_a_file_it_did_not_write() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    // The site's own files where cairn writes: a blog's posts in p/ (one named like a pack), a
    // model folder's notes, the site's pages.
    let mine: Vec<(&str, &[u8])> = vec![
        ("p/first-post.html", b"<h1>My first post</h1>"),
        ("p/2024/second.md", b"# Second"),
        (
            "p/0123456789abcdef0123.cairnpack",
            b"not cairn's: no index of cairn's names it",
        ),
        ("model/p/notes.txt", b"model notes"),
        ("model/README.md", b"# The site's model notes"),
        ("index.html", b"<title>home</title>"),
        ("meta.json", b"{}"),
    ];
    for (path, bytes) in &mine {
        let path = out.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let check = |after: &str| {
        for (path, bytes) in &mine {
            let got = std::fs::read(out.join(path))
                .unwrap_or_else(|e| panic!("{path} is gone after {after}: {e}"));
            assert_eq!(&got[..], *bytes, "{path} changed after {after}");
        }
    };
    let model = model_dir();
    let docs = root().join("tests/fixtures/docs");
    // Each layout with the model, back and forth, lexical only, and a merge of two shards.
    for (layout, embed) in [
        ("single", true),
        ("fragments", true),
        ("single", true),
        ("fragments", false),
        ("single", false),
    ] {
        let mut args = vec!["index", s(&docs), "--out", s(out), "--layout", layout];
        if embed {
            args.extend(["--model", s(&model)]);
        } else {
            args.push("--no-embed");
        }
        ok(&args);
        check(&format!("a {layout} build"));
        assert!(hits(out, "install") > 0, "the {layout} index answers");
    }
    // The previous layouts' own packs are gone: only the ones the live index names (none, for
    // a lexical single file) and the site's remain in p/.
    let packs: Vec<String> = files(&out.join(PACK_DIR))
        .keys()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        packs,
        [
            "0123456789abcdef0123.cairnpack",
            "2024/second.md",
            "first-post.html"
        ]
    );
    assert!(
        !out.join(META_FILE).exists(),
        "the fragments' meta went with them"
    );
    let parts = tempfile::tempdir().unwrap();
    for i in 1..=2 {
        let part = parts.path().join(i.to_string());
        ok(&[
            "index",
            s(&docs),
            "--out",
            s(&part),
            "--model",
            s(&model),
            "--shard",
            &format!("{i}/2"),
        ]);
    }
    for layout in ["fragments", "single"] {
        let (one, two) = (parts.path().join("1"), parts.path().join("2"));
        ok(&[
            "merge",
            s(&one),
            s(&two),
            "--out",
            s(out),
            "--model",
            s(&model),
            "--layout",
            layout,
        ]);
        check(&format!("a {layout} merge"));
        assert!(hits(out, "install") > 0);
    }
}

/// Flips one byte in the middle of the file at `path` (the same length).
fn flip(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn building_again_repairs_damaged_packs_and_a_shifted_record_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    let model = model_dir();
    let build = || {
        ok(&[
            "index",
            "tests/fixtures/docs",
            "--out",
            s(out),
            "--model",
            s(&model),
            "--layout",
            "fragments",
        ])
    };
    build();
    let whole = files(out);
    let pack = |dir: &Path, kind: &str| {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join(PACK_DIR))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == kind))
            .collect();
        names.sort();
        names[0].clone()
    };
    // A fragment pack with a byte flipped (same length), the static rows likewise, and a word
    // row pack of the model cut to 1,000 bytes.
    flip(&pack(out, "cairnpack"));
    flip(&pack(out, "cairnrows"));
    let rows = pack(&out.join("model"), "cairnrows");
    std::fs::write(&rows, &std::fs::read(&rows).unwrap()[..1000]).unwrap();
    build();
    assert_eq!(
        files(out),
        whole,
        "building again put every pack back as it was"
    );

    // A record read from another record's place (a shifted range) is refused, not scored.
    let mut folder = Folder::open(out).unwrap();
    let meta = folder.index.meta().clone();
    let records = meta.records_fragment(0);
    let (pack_name, offset, _) = folder.index.address(records).unwrap();
    let size = folder.index.record_length();
    let bytes = std::fs::read(out.join(PACK_DIR).join(pack_name)).unwrap();
    // The bytes after record 0: the next record of its partition, or the next partition's first.
    let (first, next) = (
        &bytes[offset as usize..][..size],
        &bytes[offset as usize + size..][..size],
    );
    let error = folder
        .index
        .add_record(records, 0, next)
        .unwrap_err()
        .to_string();
    assert!(error.contains("another record's bytes"), "{error}");
    folder.index.add_record(records, 0, first).unwrap();
}

#[test]
fn a_second_build_into_the_same_folder_is_refused_while_the_first_runs() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    ok(&[
        "index",
        "tests/fixtures/docs",
        "--no-embed",
        "--out",
        s(out),
    ]);
    let before = files(out);
    // This test holds the lock as a running build would.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(out.join(".cairn-lock"))
        .unwrap();
    lock.lock().unwrap();
    std::fs::create_dir(out.join(".cairn-staging-1")).unwrap();
    let error = fails(&[
        "index",
        "tests/fixtures/docs",
        "--no-embed",
        "--out",
        s(out),
        "--layout",
        "fragments",
    ]);
    assert!(
        error.contains("another cairn build is writing into"),
        "{error}"
    );
    assert!(
        out.join(".cairn-staging-1").exists(),
        "the running build's staging folder is left alone"
    );
    let mut after = files(out);
    after.remove(Path::new(".cairn-staging-1"));
    assert_eq!(after, before);
    lock.unlock().unwrap();
    ok(&[
        "index",
        "tests/fixtures/docs",
        "--no-embed",
        "--out",
        s(out),
        "--layout",
        "fragments",
    ]);
    assert!(
        !out.join(".cairn-staging-1").exists(),
        "a killed build's staging folder is removed"
    );
    assert!(hits(out, "install") > 0);
}

/// A layout of the lexical fixture docs, cut small, in memory.
fn sample() -> (cairn::index::Index, write::Layout) {
    let dir = tempfile::tempdir().unwrap();
    let single = lexical_single(dir.path(), "single");
    let index = format::read(&std::fs::read(single.join("index.cairn")).unwrap()).unwrap();
    let layout = write::layout(
        &index,
        &Options {
            text_bytes: 300,
            ..Options::default()
        },
    )
    .unwrap();
    (index, layout)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    write::gzip(bytes)
}

#[test]
fn numbers_out_of_range_in_a_meta_or_an_index_file_are_refused() {
    let (index, layout) = sample();
    let meta = Fragmented::open(&layout.meta).unwrap().meta().clone();
    type Change = fn(&mut cairn::fragment::Meta);
    let changes: [(&str, Change); 10] = [
        ("k1 NaN", |m| m.settings.bm25.k1 = f32::NAN),
        ("k1 infinite", |m| m.settings.bm25.k1 = f32::INFINITY),
        ("k1 negative", |m| m.settings.bm25.k1 = -1.0),
        ("b NaN", |m| m.settings.bm25.b = f32::NAN),
        ("b negative", |m| m.settings.bm25.b = -0.5),
        ("b over 1", |m| m.settings.bm25.b = 2.0),
        ("average chunk length NaN", |m| {
            m.average_chunk_length = f32::NAN
        }),
        ("average chunk length 0", |m| m.average_chunk_length = 0.0),
        ("average document length negative", |m| {
            m.average_document_length = -3.0
        }),
        ("average document length infinite", |m| {
            m.average_document_length = f32::INFINITY
        }),
    ];
    for (what, change) in changes {
        let mut bad = meta.clone();
        change(&mut bad);
        let error = Fragmented::open(&gzip(&encode_meta(&bad).unwrap()))
            .err()
            .unwrap_or_else(|| panic!("{what} was accepted"))
            .to_string();
        assert!(error.contains("out of range"), "{what}: {error}");
    }
    // The index file's settings too.
    for (k1, b) in [(f32::NAN, 0.75), (-1.0, 0.75), (1.2, f32::INFINITY)] {
        let mut bad = format::read(&format::write(&index).unwrap()).unwrap();
        bad.settings.bm25 = cairn::index::lexical::Bm25Params { k1, b };
        let error = format::read(&format::write(&bad).unwrap())
            .err()
            .expect("refused")
            .to_string();
        assert!(error.contains("out of range"), "k1 {k1}, b {b}: {error}");
    }
}

#[test]
fn a_meta_cannot_claim_more_than_it_holds_nor_inflate_past_its_bound() {
    let (_, layout) = sample();
    let meta = Fragmented::open(&layout.meta).unwrap().meta().clone();
    // 2^24 one-chunk documents in a few tens of kilobytes of gzip: refused by its inflation
    // bound before anything is decoded.
    let mut many = meta.clone();
    many.document_chunks = vec![1; 1 << 24];
    many.document_lengths = vec![1; 1 << 24];
    let bomb = gzip(&encode_meta(&many).unwrap());
    assert!(bomb.len() < 200_000, "{} bytes", bomb.len());
    let error = Fragmented::open(&bomb).err().expect("refused").to_string();
    assert!(
        error.contains("the meta file") && error.contains("over the"),
        "{error}"
    );
    // One document claiming 2^26 chunks in a meta of a few kilobytes: refused for what it holds.
    let mut huge = meta.clone();
    huge.document_chunks[0] = 1 << 26;
    let error = Fragmented::open(&gzip(&encode_meta(&huge).unwrap()))
        .err()
        .expect("refused")
        .to_string();
    assert!(error.contains("chunks, more than"), "{error}");
    // A gzip bomb as a meta file on disk: the CLI refuses it by name.
    let dir = tempfile::tempdir().unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..256 {
        encoder.write_all(&zeros).unwrap();
    }
    std::fs::write(dir.path().join(META_FILE), encoder.finish().unwrap()).unwrap();
    let error = fails(&["search", s(dir.path()), "anything"]);
    assert!(
        error.contains("the meta file is damaged") && error.contains("it may have"),
        "{error}"
    );
    // A gzip whose trailer understates its size stops inflating at the size it states.
    let mut lying = gzip(&vec![7u8; 100_000]);
    let n = lying.len();
    lying[n - 4..].copy_from_slice(&1000u32.to_le_bytes());
    let error = cairn::store::envelope::gunzip(&lying, 1 << 20, "fragment 3")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("fragment 3 is damaged") && error.contains("1000 bytes it states"),
        "{error}"
    );
}

#[test]
fn a_fragment_bomb_is_refused_by_the_size_the_meta_states() {
    let (_, layout) = sample();
    let reader = Fragmented::open(&layout.meta).unwrap();
    let limit = reader.meta().max_inflated as usize;
    assert!(
        limit > 0 && limit < 1 << 20,
        "the largest fragment of the sample is {limit} bytes"
    );
    // A slot of a megabyte that inflates to a gigabyte, with its true size in its trailer.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        encoder.write_all(&zeros).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let error = cairn::store::envelope::gunzip(&bomb, limit, "fragment 0")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("fragment 0 is damaged") && error.contains("over the"),
        "{error}"
    );
    // Through the reader: a slot of the wrong length is refused before it is inflated.
    let mut reader = reader;
    let error = reader.add_slot(0, &bomb).unwrap_err().to_string();
    assert!(error.contains("fragment 0 came as"), "{error}");
}
