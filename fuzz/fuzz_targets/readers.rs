//! Arbitrary files through the readers: the first byte picks the format (and the chunk size),
//! the rest is the file. Reading must never panic; every chunk's source offset and lines must
//! lie inside the text the reader read; the documents must build into an index that answers a
//! highlighted search.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use cairn::chunk::ChunkLimit;
use cairn::build::build;
use cairn::index::IndexSettings;
use cairn::ingest::{ingest_file, IngestOptions, InputFile};
use cairn_fuzz::{check_hit, everything, write_seeds_if_asked};
use libfuzzer_sys::fuzz_target;

const FORMATS: [&str; 4] = ["md", "html", "jsonl", "txt"];

/// A folder of this process's own in memory (/dev/shm), reused for every input.
fn folder() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        // The folders of processes that have ended (a `-fork` run starts one a job) go first.
        for entry in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("cairn-fuzz-readers-")) else { continue };
            if !std::path::Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let dir = base.join(format!("cairn-fuzz-readers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    })
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let seed = |name: &str, format: u8, body: &str| (name.to_string(), [&[format][..], body.as_bytes()].concat());
    vec![
        seed("md-front-matter", 0, "---\ntitle: Front matter\ntags: [a, b]\ndate: 2024-01-02\nnested:\n  deeper:\n    - {x: 1}\n---\n# Heading {#custom}\n\nA paragraph with *emphasis* and a [link](other.md#x).\n\n## Sub\n\n- item one\n- item two\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
        seed("md-plain", 4, "# Café\n\nNaïve résumés, 東京 and 🔍 search.\r\n\r\nSecond paragraph &amp; entities &#x1F50D;.\n"),
        seed("md-bom", 0, "\u{feff}# Title\n\ntext"),
        seed("html-page", 1, "<!doctype html><html><head><title>Site &amp; home</title><meta name=\"date\" content=\"2024-05-01\"></head><body><nav>skip</nav><main><h1 id=\"top\">Welcome</h1><p>Hello &eacute; <a href=\"guide/\">guide</a></p><h2>API</h2><ul><li>one</li><li>two</li></ul><pre>code\n  block</pre><table><tr><td>a</td><td>b</td></tr></table></main><script>var x;</script></body></html>"),
        seed("html-entities", 5, "<p>&lt;tag&gt; &amp;&amp; &#128269; &#x1F3D4;&#xFE0F; &nbsp;&nbsp;caf&eacute; &unknown; &#0; &#xD800;</p><p>second</p>"),
        seed("html-nested", 1, &format!("<body>{}deep{}</body>", "<div><section>".repeat(40), "</section></div>".repeat(40))),
        seed("jsonl-records", 2, "{\"_id\":\"a\",\"title\":\"First\",\"text\":\"Some text. More text.\",\"metadata\":{\"tags\":[\"x\"]},\"date\":\"2020-01-01\"}\n{\"id\":7,\"text\":\"caf\\u00e9 \\ud83d\\udd0d\"}\nnot json\n{\"title\":\"no id\"}\n\n{\"id\":\"t\",\"title\":\"title only\"}\n"),
        seed("txt-paragraphs", 3, "First paragraph\nstill first.\n\n\nSecond paragraph.\r\n\r\nThird with 東京 and emoji 👩‍👩‍👧.\n"),
        seed("txt-invalid-utf8", 7, "valid \u{0} then "),
    ]
    .into_iter()
    .chain(std::iter::once(("txt-bad-bytes".to_string(), vec![3, b'a', 0xC3, 0x28, b' ', 0xF0, 0x9F, b'\n', b'b'])))
    .collect()
}

fuzz_target!(
    init: {
        write_seeds_if_asked("readers", seeds);
    },
    |data: &[u8]| {
        let Some((&selector, body)) = data.split_first() else { return };
        let format = FORMATS[(selector & 3) as usize];
        let words = 1 + (selector >> 2) as usize * 4; // 1 to 253 words a chunk
        let path = folder().join(format!("input.{format}"));
        std::fs::write(&path, body).expect("scratch file");
        let file = InputFile { root: folder().clone(), path };
        let options = IngestOptions { chunk_limit: ChunkLimit::words(words), base_url: "https://example.org/".into() };
        let Ok(ingested) = ingest_file(&file, &options) else { return };
        let documents = ingested.documents;

        // Offsets and lines are into the text the reader read. For UTF-8 (less a BOM) that is
        // known exactly; another encoding (a UTF-16 BOM, a legacy one chardetng guessed) decodes
        // each byte or pair of bytes to at most 3 bytes of UTF-8 and no more lines than bytes.
        let utf8 = std::str::from_utf8(body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)).ok();
        let (max_offset, lines) = match utf8 {
            Some(text) => (text.len() as u64, text.matches('\n').count() as u32 + 1),
            None if format == "jsonl" => (body.len() as u64, body.iter().filter(|&&b| b == b'\n').count() as u32 + 1),
            None => (3 * body.len() as u64, body.len() as u32 + 1),
        };
        for doc in &documents {
            for chunk in &doc.chunks {
                assert!(chunk.source_offset <= max_offset, "chunk {} starts at {} of {max_offset} bytes", chunk.chunk_index, chunk.source_offset);
                assert!(
                    1 <= chunk.line_start && chunk.line_start <= chunk.line_end && chunk.line_end <= lines,
                    "chunk {} lines {}..{} of {lines}", chunk.chunk_index, chunk.line_start, chunk.line_end
                );
            }
            assert!(doc.chunks.iter().enumerate().all(|(i, c)| c.chunk_index as usize == i), "chunk indexes are 0, 1, 2…");
            // Plain text is copied verbatim, so a chunk's text is the source's at its offset.
            if let (Some(text), "txt") = (utf8, format) {
                for chunk in doc.chunks.iter().filter(|c| !c.text.is_empty()) {
                    let at = text.get(chunk.source_offset as usize..).unwrap_or_else(|| panic!("offset {} is inside a character", chunk.source_offset));
                    let first = chunk.text.chars().next().unwrap();
                    assert!(at.starts_with(first), "chunk {} begins {first:?}, the source at {} {:?}", chunk.chunk_index, chunk.source_offset, at.chars().next());
                }
            }
        }

        // The documents make an index, and a search in it with every option reports sound offsets.
        let Ok(index) = build(documents, IndexSettings { summaries: true, ..IndexSettings::default() }, None, |_, _| {}) else { return };
        let Ok(bytes) = cairn::index::format::write(&index) else { return };
        let index = cairn::index::format::read(&bytes).expect("a written index reads back");
        let query: String = index.chunks.iter().flat_map(|c| c.text.split_whitespace().take(3)).take(6).collect::<Vec<_>>().join(" ");
        let query: String = query.chars().take(500).collect();
        let context = cairn::search::QueryContext::default();
        if let Ok(hits) = cairn::search::search(&index, &query, context, &everything()) {
            hits.iter().for_each(check_hit);
        }
    }
);
