//! Markdown (CommonMark with tables and YAML front matter, parsed by pulldown-cmark): headings cut
//! the document into sections, and paragraphs, list items, code blocks and table rows are the
//! blocks. Each block maps its text back to source offsets. The title is front matter `title`,
//! else the first level-1 heading, else the file name; heading anchors are `{#id}` when given,
//! else GitHub-style slugs.

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::{chunk_file, dates, file_stem, file_url, IngestOptions, InputFile, RawLink, SourceDocument};
use crate::chunk::{Block, Section};
use crate::hit::DocType;
use crate::index::Document;

pub fn read(file: &InputFile, source: &str, options: &IngestOptions) -> SourceDocument {
    let parsed = parse(source);
    let title = parsed
        .front_matter
        .as_ref()
        .and_then(|m| m.get("title"))
        .and_then(|t| t.as_str())
        .map(str::to_string)
        .or(parsed.first_h1.clone())
        .unwrap_or_else(|| file_stem(file));
    let front = parsed.front_matter.as_ref();
    let chunks = chunk_file(&parsed.sections, &title, source, options);
    SourceDocument {
        document: Document {
            id: file.relative(),
            doc_type: DocType::Md,
            title,
            url: file_url(file, options),
            created: dates::from_fields(front, &["created", "createdAt", "date"]),
            updated: dates::from_fields(front, &["updated", "updatedAt", "lastmod", "modified"]),
            metadata: parsed.front_matter.map(|m| m.to_string()),
        },
        chunks,
        links: parsed.links,
    }
}

struct Parsed {
    sections: Vec<Section>,
    first_h1: Option<String>,
    front_matter: Option<serde_json::Value>,
    links: Vec<RawLink>,
}

fn parse(source: &str) -> Parsed {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_HEADING_ATTRIBUTES;
    let mut sections = vec![Section::default()];
    let mut headings: Vec<(HeadingLevel, String)> = Vec::new();
    let mut slugs: HashMap<String, usize> = HashMap::new();
    let mut block = Block { text: String::new(), source_map: Vec::new() };
    let mut heading: Option<(HeadingLevel, Option<String>, String)> = None;
    let mut in_metadata = false;
    let mut front_matter = None;
    let mut first_h1 = None;
    let mut links = Vec::new();
    let mut link: Option<(String, String)> = None;

    let flush = |block: &mut Block, sections: &mut Vec<Section>| {
        if !block.text.trim().is_empty() {
            sections.last_mut().expect("a section").blocks.push(std::mem::replace(
                block,
                Block { text: String::new(), source_map: Vec::new() },
            ));
        } else {
            block.text.clear();
            block.source_map.clear();
        }
    };

    for (event, range) in Parser::new_ext(source, options).into_offset_iter() {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => in_metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_metadata = false,
            Event::Text(text) if in_metadata => {
                front_matter = serde_yaml::from_str::<serde_json::Value>(&text).ok().filter(|v| v.is_object());
            }
            Event::Start(Tag::Heading { level, id, .. }) => {
                flush(&mut block, &mut sections);
                heading = Some((level, id.map(|s| s.to_string()), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, id, text)) = heading.take() {
                    let text = text.trim().to_string();
                    if level == HeadingLevel::H1 && first_h1.is_none() {
                        first_h1 = Some(text.clone());
                    }
                    headings.retain(|(l, _)| *l < level);
                    headings.push((level, text.clone()));
                    let anchor = id.unwrap_or_else(|| unique_slug(&text, &mut slugs));
                    sections.push(Section {
                        heading_path: headings.iter().map(|(_, t)| t.clone()).collect(),
                        anchor: Some(anchor),
                        blocks: Vec::new(),
                    });
                }
            }
            Event::Start(Tag::Link { dest_url, .. }) => link = Some((dest_url.to_string(), String::new())),
            Event::End(TagEnd::Link) => {
                if let Some((target, text)) = link.take() {
                    links.push(RawLink { target, text: text.trim().to_string() });
                }
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, link_text)) = link.as_mut() {
                    link_text.push_str(&text);
                }
                if let Some((_, _, heading_text)) = heading.as_mut() {
                    heading_text.push_str(&text);
                } else {
                    append(&mut block, &text, source, range);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, _, heading_text)) = heading.as_mut() {
                    heading_text.push(' ');
                } else {
                    block.text.push(if matches!(event, Event::HardBreak) { '\n' } else { ' ' });
                }
            }
            Event::End(TagEnd::TableCell) => block.text.push_str(" | "),
            Event::End(
                TagEnd::Paragraph | TagEnd::Item | TagEnd::CodeBlock | TagEnd::TableHead | TagEnd::TableRow,
            ) => flush(&mut block, &mut sections),
            _ => {}
        }
    }
    flush(&mut block, &mut sections);
    Parsed { sections, first_h1, front_matter, links }
}

/// Appends an event's text to the block, noting where in the source it stands.
fn append(block: &mut Block, text: &str, source: &str, range: Range<usize>) {
    let within = source.get(range.clone()).and_then(|s| s.find(text)).unwrap_or(0);
    block.source_map.push((block.text.len(), (range.start + within) as u64));
    block.text.push_str(text);
}

/// A GitHub-style heading slug, made unique within the document with `-1`, `-2`, ….
fn unique_slug(text: &str, seen: &mut HashMap<String, usize>) -> String {
    let slug: String = text
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect();
    let count = seen.entry(slug.clone()).or_insert(0);
    let unique = if *count == 0 { slug } else { format!("{slug}-{count}") };
    *count += 1;
    unique
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\ntitle: Guide\ntags: [a, b]\n---\n\nIntro text.\n\n# Install\n\nRun `cargo build` now.\n\n## On Linux {#linux}\n\n- first item\n- second item\n\n# Install\n\nAgain.\n";

    #[test]
    fn sections_headings_anchors_and_front_matter() {
        let parsed = parse(DOC);
        assert_eq!(parsed.front_matter.as_ref().unwrap()["tags"], serde_json::json!(["a", "b"]));
        assert_eq!(parsed.first_h1.as_deref(), Some("Install"));
        let summary: Vec<(Vec<String>, Option<String>, Vec<String>)> = parsed
            .sections
            .iter()
            .map(|s| (s.heading_path.clone(), s.anchor.clone(), s.blocks.iter().map(|b| b.text.clone()).collect()))
            .collect();
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(summary[0], (vec![], None, strings(&["Intro text."])));
        assert_eq!(summary[1], (strings(&["Install"]), Some("install".into()), strings(&["Run cargo build now."])));
        assert_eq!(
            summary[2],
            (strings(&["Install", "On Linux"]), Some("linux".into()), strings(&["first item", "second item"]))
        );
        assert_eq!(summary[3].1.as_deref(), Some("install-1"));
    }

    #[test]
    fn links_keep_their_targets_and_words() {
        let parsed = parse("See [the *install* guide](guide/install.md#build) and [site](https://x.org).\n");
        let links: Vec<(&str, &str)> = parsed.links.iter().map(|l| (l.target.as_str(), l.text.as_str())).collect();
        assert_eq!(links, vec![("guide/install.md#build", "the install guide"), ("https://x.org", "site")]);
    }

    #[test]
    fn blocks_map_back_to_source() {
        let parsed = parse(DOC);
        let block = &parsed.sections[1].blocks[0];
        // "cargo build" sits inside backticks in the source.
        let at = block.text.find("cargo").unwrap();
        let source_at = block.source_offset(at) as usize;
        assert_eq!(&DOC[source_at..source_at + 11], "cargo build");
        let item = &parsed.sections[2].blocks[1];
        assert_eq!(&DOC[item.source_offset(0) as usize..][..11], "second item");
    }
}
