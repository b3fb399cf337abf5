//! HTML pages, as a static site generator writes them (parsed with scraper/html5ever, which
//! repairs broken markup the way browsers do). The content is the `[data-cairn-body]`
//! elements when the page marks any, else `<main>`, else the first `<article>`, else `<body>`;
//! `[data-cairn-ignore]` elements, and `<nav>`, `<script>`, `<style>`, `<template>`,
//! `<noscript>` and `<svg>`, are left out. Headings cut sections, their `id` is the anchor.
//! Metadata comes from `<meta>` tags and `data-cairn-meta="key"` (the element's text) or
//! `data-cairn-meta="key:value"`. The parser keeps no source positions, so each block's
//! source offset is where its first word is next found in the raw HTML.

use ego_tree::NodeRef;
use scraper::{ElementRef, Html, Node, Selector};
use serde_json::{Map, Value};

use super::{chunk_file, dates, file_stem, file_url, IngestOptions, InputFile, RawLink, SourceDocument};
use crate::chunk::{Block, Section};
use crate::hit::DocType;
use crate::index::Document;

const SKIPPED: &[&str] = &["script", "style", "template", "noscript", "svg", "nav", "head"];
const BLOCKS: &[&str] = &[
    "p", "div", "li", "ul", "ol", "pre", "table", "tr", "td", "th", "blockquote", "section", "article", "main", "dd",
    "dt", "dl", "figure", "figcaption", "header", "footer", "aside", "details", "summary", "hr", "body",
];

pub fn read(file: &InputFile, source: &str, options: &IngestOptions) -> SourceDocument {
    let html = Html::parse_document(source);
    let select = |css: &str| Selector::parse(css).expect("a valid selector");
    let mut metadata = Map::new();
    for meta in html.select(&select("meta[content]")) {
        let key = meta.attr("name").or(meta.attr("property")).unwrap_or_default();
        if !key.is_empty() {
            metadata.insert(key.to_string(), Value::String(meta.attr("content").unwrap_or_default().to_string()));
        }
    }
    for element in html.select(&select("[data-cairn-meta]")) {
        let spec = element.attr("data-cairn-meta").unwrap_or_default();
        let (key, value) = match spec.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim().to_string()),
            None => (spec.trim(), collapse(&element.text().collect::<String>())),
        };
        if !key.is_empty() {
            metadata.insert(key.to_string(), Value::String(value));
        }
    }
    let roots: Vec<ElementRef> = {
        let marked: Vec<ElementRef> = html.select(&select("[data-cairn-body]")).collect();
        if !marked.is_empty() {
            marked
        } else {
            ["main", "article", "body"]
                .iter()
                .find_map(|css| html.select(&select(css)).next())
                .map(|e| vec![e])
                .unwrap_or_else(|| vec![html.root_element()])
        }
    };
    let mut walker = Walker { source, cursor: 0, sections: vec![Section::default()], headings: Vec::new(), block: String::new(), links: Vec::new(), first_h1: None, pre: 0 };
    for root in roots {
        walker.walk(*root);
        walker.flush();
    }
    let page_title = html.select(&select("title")).next().map(|t| collapse(&t.text().collect::<String>())).filter(|t| !t.is_empty());
    let title = metadata
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(page_title)
        .or(walker.first_h1.clone())
        .unwrap_or_else(|| file_stem(file));
    let meta = Value::Object(metadata);
    let chunks = chunk_file(&walker.sections, &title, source, options);
    SourceDocument {
        document: Document {
            id: file.relative(),
            doc_type: DocType::Html,
            title,
            url: file_url(file, options),
            created: dates::from_fields(Some(&meta), &["article:published_time", "date", "created"]),
            updated: dates::from_fields(Some(&meta), &["article:modified_time", "last-modified", "updated"]),
            metadata: meta.as_object().filter(|m| !m.is_empty()).map(|_| meta.to_string()),
        },
        chunks,
        links: walker.links,
    }
}

struct Walker<'a> {
    source: &'a str,
    /// Where in the raw HTML the last block was found; the next is looked for after it.
    cursor: usize,
    sections: Vec<Section>,
    headings: Vec<(u8, String)>,
    block: String,
    links: Vec<RawLink>,
    first_h1: Option<String>,
    /// Depth of `<pre>` elements we are inside (whitespace is kept there).
    pre: usize,
}

impl Walker<'_> {
    fn walk(&mut self, node: NodeRef<Node>) {
        for child in node.children() {
            match child.value() {
                Node::Text(text) => self.push_text(text),
                Node::Element(element) => {
                    let name = element.name();
                    if SKIPPED.contains(&name) || element.attr("data-cairn-ignore").is_some() {
                        continue;
                    }
                    let element_ref = ElementRef::wrap(child).expect("an element");
                    if let Some(level) = heading_level(name) {
                        self.flush();
                        let text = collapse(&element_ref.text().collect::<String>());
                        if level == 1 && self.first_h1.is_none() {
                            self.first_h1 = Some(text.clone());
                        }
                        self.headings.retain(|(l, _)| *l < level);
                        self.headings.push((level, text));
                        let anchor = element.attr("id").map(str::to_string).or_else(|| {
                            element_ref.select(&Selector::parse("[id]").expect("selector")).next().and_then(|e| e.attr("id").map(str::to_string))
                        });
                        self.sections.push(Section {
                            heading_path: self.headings.iter().map(|(_, t)| t.clone()).collect(),
                            anchor,
                            blocks: Vec::new(),
                        });
                        continue;
                    }
                    if name == "a" {
                        if let Some(href) = element.attr("href") {
                            let text = collapse(&element_ref.text().collect::<String>());
                            self.links.push(RawLink { target: href.to_string(), text });
                        }
                    }
                    if name == "br" {
                        self.block.push('\n');
                        continue;
                    }
                    let block = BLOCKS.contains(&name);
                    if block {
                        self.flush();
                    }
                    if name == "pre" {
                        self.pre += 1;
                    }
                    self.walk(child);
                    if name == "pre" {
                        self.pre -= 1;
                    }
                    if block {
                        self.flush();
                    }
                    if name == "td" || name == "th" {
                        self.block.push_str(" | ");
                    }
                }
                _ => {}
            }
        }
    }

    fn push_text(&mut self, text: &str) {
        if self.pre > 0 {
            self.block.push_str(text);
            return;
        }
        let starts_with_space = text.starts_with(char::is_whitespace);
        let collapsed = collapse(text);
        if collapsed.is_empty() {
            if !self.block.is_empty() && !self.block.ends_with(' ') {
                self.block.push(' ');
            }
            return;
        }
        if starts_with_space && !self.block.is_empty() && !self.block.ends_with([' ', '\n']) {
            self.block.push(' ');
        }
        self.block.push_str(&collapsed);
        if text.ends_with(char::is_whitespace) {
            self.block.push(' ');
        }
    }

    /// Ends the current block, placing it in the source after the previous one.
    fn flush(&mut self) {
        let text = std::mem::take(&mut self.block);
        let text = text.trim().trim_end_matches('|').trim().to_string();
        if text.is_empty() {
            return;
        }
        let first_word = text.split_whitespace().next().unwrap_or_default();
        if let Some(found) = self.source.get(self.cursor..).and_then(|rest| rest.find(first_word)) {
            self.cursor += found;
        }
        let block = Block::verbatim(text, self.cursor as u64);
        self.sections.last_mut().expect("a section").blocks.push(block);
    }
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Whitespace runs folded to one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkLimit;
    use std::path::PathBuf;

    fn page(html: &str) -> SourceDocument {
        let file = InputFile { root: PathBuf::from("site"), path: PathBuf::from("site/guide/index.html") };
        read(&file, html, &IngestOptions { chunk_limit: ChunkLimit::words(200), base_url: "/docs/".into() })
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
        let texts: Vec<(&str, Vec<String>, Option<String>)> =
            doc.chunks.iter().map(|c| (c.text.as_str(), c.heading_path.clone(), c.anchor.clone())).collect();
        assert_eq!(texts[0], ("Intro text here.", vec!["Guide".to_string()], Some("top".into())));
        assert_eq!(texts[1].0, "Run the API tool.\n\nAda");
        assert_eq!(texts[1].2.as_deref(), Some("setup"));
        assert!(!doc.chunks.iter().any(|c| c.text.contains("Ignore") || c.text.contains("Home") || c.text.contains("no")));
        let meta: Value = serde_json::from_str(doc.document.metadata.as_deref().unwrap()).unwrap();
        assert_eq!((meta["description"].as_str(), meta["author"].as_str()), (Some("How to"), Some("Ada")));
        assert_eq!(doc.links, vec![RawLink { target: "../api/".into(), text: "API".into() }]);
    }

    #[test]
    fn marked_bodies_win_and_broken_markup_is_repaired() {
        let doc = page("<body><div>chrome</div><section data-cairn-body><h2>Part</h2><p>Unclosed <i>text<p>Second</section>");
        let texts: Vec<&str> = doc.chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, vec!["Unclosed text\n\nSecond"]);
        assert_eq!(doc.chunks[0].heading_path, vec!["Part".to_string()]);
    }
}
