//! A page's metadata: its `<meta>` tags and `data-cairn-meta` elements.

use ego_tree::iter::Edge;
use scraper::{Html, Node, Selector};
use serde_json::{Map, Value};

use super::captures::Captures;

/// `<meta>` tags, then `data-cairn-meta` elements (a later key wins).
pub(super) fn metadata(html: &Html) -> Map<String, Value> {
    let mut metadata = Map::new();
    for meta in html.select(&Selector::parse("meta[content]").expect("a valid selector")) {
        let key = meta
            .attr("name")
            .or(meta.attr("property"))
            .unwrap_or_default();
        if !key.is_empty() {
            metadata.insert(
                key.to_string(),
                Value::String(meta.attr("content").unwrap_or_default().to_string()),
            );
        }
    }
    let mut insert = |key: &str, value: String| {
        if !key.is_empty() {
            metadata.insert(key.to_string(), Value::String(value));
        }
    };
    let mut texts = Captures::default();
    for edge in html.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Text(text) => texts.push(text),
                Node::Element(element) => match element
                    .attr("data-cairn-meta")
                    .map(|spec| spec.split_once(':').ok_or(spec))
                {
                    Some(Ok((key, value))) => insert(key.trim(), value.trim().to_string()),
                    Some(Err(key)) => texts.open(node.id(), key.trim().to_string()),
                    None => {}
                },
                _ => {}
            },
            Edge::Close(node) => {
                if let Some((key, value)) = texts.close(node.id()) {
                    insert(&key, value);
                }
            }
        }
    }
    metadata
}
