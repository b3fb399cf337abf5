//! HTML pages, as a static site generator writes them (parsed by html5ever into scraper's tree,
//! which repairs broken markup the way browsers do). The content is the outermost
//! `[data-cairn-body]` elements when the page marks any, else `<main>`, else the first
//! `<article>`, else `<body>`; `[data-cairn-ignore]` elements, and `<nav>`, `<script>`,
//! `<style>`, `<template>`, `<noscript>` and `<svg>`, are left out. Headings cut sections, their
//! `id` is the anchor. Metadata comes from `<meta>` tags and `data-cairn-meta="key"` (the
//! element's text) or `data-cairn-meta="key:value"`. While the page is parsed, each text node
//! notes where its first character stands in the source (the tokenizer has just consumed the
//! token that made it), so a block's offset and line are exact. Trees are walked in one pass
//! with an explicit stack (ego-tree's traversal), never by recursion. A page whose elements nest
//! deeper than 1024 levels is refused: html5ever's work for each element grows with the depth
//! (100,000 levels take minutes), and a browser shows no more than 512. So is a page whose
//! misnested formatting tags, reopened by the parser for each paragraph, multiply into more
//! elements than it has bytes to write them with.

mod captures;
mod metadata;
mod parse;
mod walk;

use ego_tree::iter::Edge;
use ego_tree::NodeRef;
use encoding_rs::Encoding;
use scraper::{Html, Node, Selector};
use serde_json::Value;

use super::{
    chunk_file, dates, file_stem, file_url, origin, IngestOptions, InputFile, SourceDocument,
};
use crate::hit::DocType;
use crate::index::Document;
use captures::collapse;
use metadata::metadata;
use parse::parse;
use walk::Walker;

pub fn read(
    file: &InputFile,
    source: &str,
    options: &IngestOptions,
) -> Result<SourceDocument, String> {
    let (html, starts) = parse(source)?;
    let select = |css: &str| Selector::parse(css).expect("a valid selector");
    let metadata = metadata(&html);
    let roots: Vec<NodeRef<Node>> = {
        let marked = outermost_marked(&html);
        if !marked.is_empty() {
            marked
        } else {
            let content = ["main", "article", "body"]
                .iter()
                .find_map(|css| html.select(&select(css)).next());
            vec![*content.unwrap_or_else(|| html.root_element())]
        }
    };
    let mut walker = Walker::new(source, &starts);
    for root in roots {
        walker.walk(root);
        walker.flush();
    }
    let page_title = html
        .select(&select("title"))
        .next()
        .map(|t| collapse(&t.text().collect::<String>()))
        .filter(|t| !t.is_empty());
    let title = metadata
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(page_title)
        .or(walker.first_h1.clone())
        .unwrap_or_else(|| file_stem(file));
    let meta = Value::Object(metadata);
    let chunks = chunk_file(&walker.sections, &title, source, options);
    Ok(SourceDocument {
        document: Document {
            id: file.relative(),
            doc_type: DocType::Html,
            title,
            url: file_url(file, options),
            created: dates::from_fields(
                Some(&meta),
                &["article:published_time", "date", "created"],
            ),
            updated: dates::from_fields(
                Some(&meta),
                &["article:modified_time", "last-modified", "updated"],
            ),
            author: super::author_in(Some(&meta)),
            summary: None,
            metadata: meta
                .as_object()
                .filter(|m| !m.is_empty())
                .map(|_| meta.to_string()),
        },
        chunks,
        links: walker.links,
        origin: origin(file),
        language: html
            .root_element()
            .value()
            .attr("lang")
            .and_then(super::language_of),
    })
}

/// The encoding a page declares in its first 1024 bytes, where browsers look for it:
/// `<meta charset="…">` or `<meta http-equiv="Content-Type" content="…; charset=…">`.
pub fn declared_encoding(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = bytes[..bytes.len().min(1024)].to_ascii_lowercase();
    let find =
        |haystack: &[u8], needle: &[u8]| haystack.windows(needle.len()).position(|w| w == needle);
    let mut rest = &head[..];
    while let Some(at) = find(rest, b"<meta") {
        rest = &rest[at + 5..];
        let tag = &rest[..rest.iter().position(|&b| b == b'>').unwrap_or(rest.len())];
        let Some(at) = find(tag, b"charset") else {
            continue;
        };
        let Some(value) = tag[at + 7..].trim_ascii_start().strip_prefix(b"=") else {
            continue;
        };
        let value = value.trim_ascii_start();
        let value = value
            .strip_prefix(b"\"")
            .or(value.strip_prefix(b"'"))
            .unwrap_or(value);
        let end = value
            .iter()
            .position(|&b| b"\"';/>".contains(&b) || b.is_ascii_whitespace())
            .unwrap_or(value.len());
        // A page that says UTF-16 is read as UTF-8 (it was decoded to reach the tag).
        if let Some(encoding) = Encoding::for_label(&value[..end]) {
            return Some(encoding.output_encoding());
        }
    }
    None
}

/// The `[data-cairn-body]` elements that are not inside another one, in document order.
fn outermost_marked(html: &Html) -> Vec<NodeRef<'_, Node>> {
    let mut found = Vec::new();
    let mut inside = None;
    for edge in html.tree.root().traverse() {
        match edge {
            Edge::Open(node)
                if inside.is_none()
                    && node
                        .value()
                        .as_element()
                        .is_some_and(|e| e.attr("data-cairn-body").is_some()) =>
            {
                inside = Some(node.id());
                found.push(node);
            }
            Edge::Close(node) if inside == Some(node.id()) => inside = None,
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkLimit;
    use crate::ingest::RawLink;
    use std::path::PathBuf;

    fn page(html: &str) -> SourceDocument {
        let file = InputFile {
            root: PathBuf::from("site"),
            path: PathBuf::from("site/guide/index.html"),
        };
        read(
            &file,
            html,
            &IngestOptions {
                chunk_limit: ChunkLimit::words(200),
                base_url: "/docs/".into(),
            },
        )
        .unwrap()
    }

    /// `source` read as site/a.html, `words` words a chunk.
    fn page_of_words(source: &str, words: usize) -> SourceDocument {
        let file = InputFile {
            root: PathBuf::from("site"),
            path: PathBuf::from("site/a.html"),
        };
        let options = IngestOptions {
            chunk_limit: ChunkLimit::words(words),
            base_url: String::new(),
        };
        read(&file, source, &options).unwrap()
    }

    #[test]
    fn finds_the_content_headings_metadata_and_links() {
        let doc = page(
            r#"<!doctype html><html><head><title>Guide — Site</title><meta name="description" content="How to"></head>
            <body><nav>Home About</nav><main><h1 id="top">Guide</h1><p>Intro <b>text</b> here.</p>
            <div data-cairn-ignore>Ignore me</div><h2 id="setup">Set up</h2><p>Run the <a href="../api/">API</a> tool.</p>
            <p data-cairn-meta="author">Ada</p><script>var x = "<p>no</p>";</script></main><footer>Footer</footer></body></html>"#,
        );
        assert_eq!(doc.document.title, "Guide — Site");
        assert_eq!(doc.document.url.as_deref(), Some("/docs/guide/"));
        let texts: Vec<(&str, Vec<String>, Option<String>)> = doc
            .chunks
            .iter()
            .map(|c| (c.text.as_str(), c.heading_path.clone(), c.anchor.clone()))
            .collect();
        assert_eq!(
            texts[0],
            (
                "Intro text here.",
                vec!["Guide".to_string()],
                Some("top".into())
            )
        );
        assert_eq!(texts[1].0, "Run the API tool.\n\nAda");
        assert_eq!(texts[1].2.as_deref(), Some("setup"));
        assert!(!doc.chunks.iter().any(|c| c.text.contains("Ignore")
            || c.text.contains("Home")
            || c.text.contains("no")));
        let meta: Value = serde_json::from_str(doc.document.metadata.as_deref().unwrap()).unwrap();
        assert_eq!(
            (meta["description"].as_str(), meta["author"].as_str()),
            (Some("How to"), Some("Ada"))
        );
        assert_eq!(
            doc.links,
            vec![RawLink {
                target: "../api/".into(),
                text: "API".into(),
                rel: None,
            }]
        );
    }

    #[test]
    fn marked_bodies_win_and_broken_markup_is_repaired() {
        let doc = page("<body><div>chrome</div><section data-cairn-body><h2>Part</h2><p>Unclosed <i>text<p>Second</section>");
        let texts: Vec<&str> = doc.chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["Unclosed text\n\nSecond"]);
        assert_eq!(doc.chunks[0].heading_path, vec!["Part".to_string()]);
    }

    #[test]
    fn blocks_that_start_with_entities_keep_their_lines() {
        let source = "<html><body>\n<p>&ldquo;Quoted&rdquo; words</p>\n<p>&amp; more</p>\n\n<p>plain text</p>\n<ul><li>&#122;ebra crossing</li></ul>\n<p>&nbsp;&nbsp;spaced out</p>\n<table><tr><td>&lt;cell&gt;</td></tr></table></body></html>\n";
        // Two words a chunk: one chunk a block.
        let doc = page_of_words(source, 2);
        let starts: Vec<(&str, u32, &str)> = doc
            .chunks
            .iter()
            .map(|c| {
                (
                    c.text.as_str(),
                    c.line_start,
                    &source[c.source_offset as usize..][..6],
                )
            })
            .collect();
        assert_eq!(
            starts,
            vec![
                ("\u{201c}Quoted\u{201d} words", 2, "&ldquo"),
                ("& more", 3, "&amp; "),
                ("plain text", 5, "plain "),
                ("zebra crossing", 6, "&#122;"),
                ("spaced out", 7, "spaced"),
                ("<cell>", 8, "&lt;ce"),
            ]
        );
    }

    #[test]
    fn only_the_outermost_marked_body_is_read_and_link_words_are_gathered_once() {
        let doc = page(
            r#"<body><div data-cairn-body><p>Outer <a href="x.html">link <a href="y.html">inner</a></a></p><div data-cairn-body><p>Inner</p></div></div>
            <p data-cairn-meta="author">Ada <span data-cairn-meta="first">Lovelace</span></p></body>"#,
        );
        let texts: Vec<&str> = doc.chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["Outer link inner\n\nInner"]);
        let meta: Value = serde_json::from_str(doc.document.metadata.as_deref().unwrap()).unwrap();
        assert_eq!(
            (meta["author"].as_str(), meta["first"].as_str()),
            (Some("Ada Lovelace"), Some("Lovelace"))
        );
    }

    #[test]
    fn declared_encodings_are_found() {
        let label = |page: &str| declared_encoding(page.as_bytes()).map(|e| e.name());
        assert_eq!(
            label(r#"<html><head><meta charset="iso-8859-1">"#),
            Some("windows-1252")
        );
        assert_eq!(label("<META CHARSET=Shift_JIS>"), Some("Shift_JIS"));
        assert_eq!(
            label(r#"<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">"#),
            Some("KOI8-R")
        );
        assert_eq!(label(r#"<meta charset="utf-16le">"#), Some("UTF-8"));
        assert_eq!(
            label(r#"<meta name="x" content="y"><p>charset=koi8-r</p>"#),
            None
        );
    }

    #[test]
    fn text_after_dropped_blanks_and_folded_runs_keeps_exact_offsets() {
        // Found by fuzzing: text with no tags after a newline the parser drops was placed at the
        // end of the page, and offsets inside a block drifted by each whitespace run folded.
        let source = "\n--\n# Heading {#custom}\n\nA paragraph with(*emphasis* and a [li]nk](other.md#x).\n\n## S22";
        let doc = page_of_words(source, 1);
        assert!(doc.chunks.len() > 10);
        for chunk in &doc.chunks {
            let first = chunk.text.split_whitespace().next().unwrap();
            assert!(
                source[chunk.source_offset as usize..].starts_with(first),
                "{:?} at {}",
                chunk.text,
                chunk.source_offset
            );
            assert_eq!(
                chunk.line_start as usize,
                source[..chunk.source_offset as usize].matches('\n').count() + 1
            );
        }
    }
}
