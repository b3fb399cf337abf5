//! The walk through a page's content: its text cut into blocks, sections at headings, and its
//! links.

use std::collections::HashMap;

use ego_tree::iter::Edge;
use ego_tree::{NodeId, NodeRef};
use scraper::Node;

use super::captures::{collapse, Captures};
use crate::chunk::{Block, Section};
use crate::ingest::RawLink;

const SKIPPED: &[&str] = &[
    "script", "style", "template", "noscript", "svg", "nav", "head",
];
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "pre",
    "table",
    "tr",
    "td",
    "th",
    "blockquote",
    "section",
    "article",
    "main",
    "dd",
    "dt",
    "dl",
    "figure",
    "figcaption",
    "header",
    "footer",
    "aside",
    "details",
    "summary",
    "hr",
    "body",
];

/// An element whose subtree the walker reads differently.
enum Inside {
    /// Left out.
    Ignored,
    /// A heading: its text and anchor are gathered.
    Heading {
        level: u8,
        text: String,
        anchor: Option<String>,
    },
}

pub(super) struct Walker<'a> {
    source: &'a str,
    /// Where each text node's first non-blank character stands in the source.
    starts: &'a HashMap<NodeId, usize>,
    /// Where each text node of the block being gathered starts, in the block and in the source
    /// (both increasing), and where the last block started.
    block_map: Vec<(usize, u64)>,
    last_start: u64,
    pub(super) sections: Vec<Section>,
    headings: Vec<(u8, String)>,
    block: String,
    pub(super) links: Vec<RawLink>,
    /// The text of the open links, each with its index in `links`.
    link_text: Captures<usize>,
    pub(super) first_h1: Option<String>,
    /// Depth of `<pre>` elements we are inside (whitespace is kept there).
    pre: usize,
    /// The element being passed over or read as a heading, until it closes.
    inside: Option<(NodeId, Inside)>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(source: &'a str, starts: &'a HashMap<NodeId, usize>) -> Self {
        Walker {
            source,
            starts,
            block_map: Vec::new(),
            last_start: 0,
            sections: vec![Section::default()],
            headings: Vec::new(),
            block: String::new(),
            links: Vec::new(),
            link_text: Captures::default(),
            first_h1: None,
            pre: 0,
            inside: None,
        }
    }
}

impl Walker<'_> {
    /// Reads what is under `root` (not `root` itself).
    pub(super) fn walk(&mut self, root: NodeRef<Node>) {
        for edge in root.traverse() {
            match edge {
                Edge::Open(node) if node != root => self.open(node),
                Edge::Close(node) if node != root => self.close(node),
                _ => {}
            }
        }
    }

    fn open(&mut self, node: NodeRef<Node>) {
        if let Some((_, inside)) = &mut self.inside {
            if let Inside::Heading { text, anchor, .. } = inside {
                match node.value() {
                    Node::Text(t) => text.push_str(t),
                    Node::Element(e) if anchor.is_none() => {
                        *anchor = e.attr("id").map(str::to_string)
                    }
                    _ => {}
                }
            }
            return;
        }
        match node.value() {
            Node::Text(text) => self.push_text(text, node.id()),
            Node::Element(element) => {
                let name = element.name();
                if SKIPPED.contains(&name) || element.attr("data-cairn-ignore").is_some() {
                    self.inside = Some((node.id(), Inside::Ignored));
                } else if let Some(level) = heading_level(name) {
                    self.flush();
                    let anchor = element.attr("id").map(str::to_string);
                    self.inside = Some((
                        node.id(),
                        Inside::Heading {
                            level,
                            text: String::new(),
                            anchor,
                        },
                    ));
                } else if name == "br" {
                    self.block.push('\n');
                } else {
                    if let Some(href) = element.attr("href").filter(|_| name == "a") {
                        self.links.push(RawLink {
                            target: href.to_string(),
                            text: String::new(),
                            rel: crate::ingest::rel_of(
                                element.attr("rel").map(str::to_ascii_lowercase).as_deref(),
                            ),
                        });
                        self.link_text.open(node.id(), self.links.len() - 1);
                    }
                    if BLOCKS.contains(&name) {
                        self.flush();
                    }
                    if name == "pre" {
                        self.pre += 1;
                    }
                }
            }
            _ => {}
        }
    }

    fn close(&mut self, node: NodeRef<Node>) {
        if let Some((id, _)) = &self.inside {
            if *id == node.id() {
                if let Some((
                    _,
                    Inside::Heading {
                        level,
                        text,
                        anchor,
                    },
                )) = self.inside.take()
                {
                    self.heading(level, &text, anchor);
                }
            }
            return;
        }
        let Node::Element(element) = node.value() else {
            return;
        };
        let name = element.name();
        if name == "pre" {
            self.pre = self.pre.saturating_sub(1);
        }
        if BLOCKS.contains(&name) {
            self.flush();
        }
        if name == "td" || name == "th" {
            self.block.push_str(" | ");
        }
        if let Some((link, text)) = self.link_text.close(node.id()) {
            self.links[link].text = text;
        }
    }

    fn heading(&mut self, level: u8, text: &str, anchor: Option<String>) {
        let text = collapse(text);
        if level == 1 && self.first_h1.is_none() {
            self.first_h1 = Some(text.clone());
        }
        self.headings.retain(|(l, _)| *l < level);
        self.headings.push((level, text));
        self.sections.push(Section {
            heading_path: self.headings.iter().map(|(_, t)| t.clone()).collect(),
            anchor,
            blocks: Vec::new(),
        });
    }

    fn push_text(&mut self, text: &str, node: NodeId) {
        self.link_text.push(text);
        let lead = text.len() - text.trim_start().len();
        if self.pre > 0 {
            self.note_start(self.block.len() + lead, node);
            self.block.push_str(text);
            return;
        }
        let starts_with_space = lead > 0;
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
        self.note_words(self.block.len(), text, node);
        self.block.push_str(&collapsed);
        if text.ends_with(char::is_whitespace) {
            self.block.push(' ');
        }
    }

    /// Maps offset `at` of the block to where text node `node` starts in the source, unless the
    /// parser moved that text back (out of a table): the map only goes forward.
    fn note_start(&mut self, at: usize, node: NodeId) {
        if let Some(&start) = self.starts.get(&node) {
            self.map(at, start as u64);
        }
    }

    /// Maps node `node`'s `text`, folded to one space between words from offset `at` of the
    /// block: word by word when the source has the text as written (no references), else by
    /// its start.
    fn note_words(&mut self, at: usize, text: &str, node: NodeId) {
        let Some(&start) = self.starts.get(&node) else {
            return;
        };
        let text = text.trim_start();
        if self.source.get(start..start + text.len()) != Some(text) {
            return self.map(at, start as u64);
        }
        let mut folded = at;
        for word in text.split_whitespace() {
            let offset = word.as_ptr() as usize - text.as_ptr() as usize;
            self.map(folded, (start + offset) as u64);
            folded += word.len() + 1;
        }
    }

    fn map(&mut self, at: usize, start: u64) {
        if self
            .block_map
            .last()
            .is_none_or(|&(t, s)| t < at && s < start)
        {
            self.block_map.push((at, start));
        }
    }

    /// Ends the current block, its text mapped to the source through its text nodes' starts.
    pub(super) fn flush(&mut self) {
        let text = std::mem::take(&mut self.block);
        let mut map = std::mem::take(&mut self.block_map);
        let lead = text.len() - text.trim_start().len();
        let text = text.trim().trim_end_matches('|').trim().to_string();
        if text.is_empty() {
            return;
        }
        for (at, _) in &mut map {
            *at = at.saturating_sub(lead);
        }
        // Text before the first noted start came just before it (or, with none, after the last block).
        if map.first().is_none_or(|&(at, _)| at > 0) {
            let start = map
                .first()
                .map_or(self.last_start, |&(at, s)| s.saturating_sub(at as u64));
            map.insert(0, (0, start));
        }
        self.last_start = map[0].1;
        let block = Block {
            text,
            source_map: map,
        };
        self.sections
            .last_mut()
            .expect("a section")
            .blocks
            .push(block);
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
