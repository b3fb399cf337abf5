//! Markdown (CommonMark with tables and YAML front matter, parsed by pulldown-cmark): headings cut
//! the document into sections, and paragraphs, list items, code blocks and table rows are the
//! blocks. Each block maps its text back to source offsets. The title is front matter `title`,
//! else the first level-1 heading, else the file name; heading anchors are `{#id}` when given,
//! else GitHub-style slugs, made unique as GitHub does (`a`, `a-1`, then `a-1-1` for a heading
//! `A-1`). Front matter larger than 64 KiB, nested deeper than 64 levels or expanding (by
//! aliases) to more than 100,000 values is ignored with a warning, and so is front matter that
//! is not YAML; the document is kept.

use std::cell::Cell;
use std::collections::HashSet;
use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::{
    chunk_file, dates, file_stem, file_url, origin, IngestOptions, InputFile, RawLink,
    SourceDocument,
};
use crate::chunk::{Block, Section};
use crate::hit::DocType;
use crate::index::Document;

/// The document, and warnings about what in it was ignored.
pub fn read(
    file: &InputFile,
    source: &str,
    options: &IngestOptions,
) -> (SourceDocument, Vec<String>) {
    let parsed = parse(source);
    let title = parsed
        .front_matter
        .as_ref()
        .and_then(|m| match m.get("title")? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .or(parsed.first_h1.clone())
        .unwrap_or_else(|| file_stem(file));
    let front = parsed.front_matter.as_ref();
    let chunks = chunk_file(&parsed.sections, &title, source, options);
    let language = super::language_in(front);
    let document = SourceDocument {
        document: Document {
            id: file.relative(),
            doc_type: DocType::Md,
            title,
            url: file_url(file, options),
            created: dates::from_fields(front, &["created", "createdAt", "date"]),
            updated: dates::from_fields(front, &["updated", "updatedAt", "lastmod", "modified"]),
            author: super::author_in(front),
            summary: None,
            metadata: parsed.front_matter.map(|m| m.to_string()),
        },
        chunks,
        links: parsed.links,
        origin: origin(file),
        language,
    };
    (document, parsed.warnings)
}

struct Parsed {
    sections: Vec<Section>,
    first_h1: Option<String>,
    front_matter: Option<Value>,
    links: Vec<RawLink>,
    warnings: Vec<String>,
}

fn parse(source: &str) -> Parsed {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_HEADING_ATTRIBUTES;
    let mut sections = vec![Section::default()];
    let mut headings: Vec<(HeadingLevel, String)> = Vec::new();
    let mut anchors = Anchors::default();
    let mut block = Block::default();
    let mut heading: Option<(HeadingLevel, Option<String>, String)> = None;
    let mut metadata: Option<String> = None;
    let mut front_matter = None;
    let mut warnings = Vec::new();
    let mut first_h1 = None;
    let mut links = Vec::new();
    let mut link: Option<(String, String, String)> = None;

    let flush = |block: &mut Block, sections: &mut Vec<Section>| {
        let block = std::mem::take(block);
        if !block.text.trim().is_empty() {
            let section = sections.last_mut().expect("a section");
            section.blocks.push(block);
        }
    };

    for (event, range) in Parser::new_ext(source, options).into_offset_iter() {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => metadata = Some(String::new()),
            Event::End(TagEnd::MetadataBlock(_)) => {
                match read_front_matter(&metadata.take().unwrap_or_default()) {
                    Ok(value) => front_matter = value,
                    Err(problem) => {
                        warnings.push(format!("{problem}; the front matter is ignored"))
                    }
                }
            }
            Event::Text(text) if metadata.is_some() => {
                metadata.as_mut().expect("in front matter").push_str(&text)
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
                    let anchor = anchors.add(id, &text);
                    sections.push(Section {
                        heading_path: headings.iter().map(|(_, t)| t.clone()).collect(),
                        anchor: Some(anchor),
                        blocks: Vec::new(),
                    });
                }
            }
            Event::Start(Tag::Link {
                dest_url, title, ..
            }) => link = Some((dest_url.to_string(), String::new(), title.to_string())),
            Event::End(TagEnd::Link) => {
                if let Some((target, text, title)) = link.take() {
                    links.push(RawLink {
                        target,
                        text: text.trim().to_string(),
                        rel: super::rel_of(Some(&title)),
                    });
                }
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, link_text, _)) = link.as_mut() {
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
                    block.text.push(if matches!(event, Event::HardBreak) {
                        '\n'
                    } else {
                        ' '
                    });
                }
            }
            Event::End(TagEnd::TableCell) => block.text.push_str(" | "),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableHead
                | TagEnd::TableRow,
            ) => flush(&mut block, &mut sections),
            _ => {}
        }
    }
    flush(&mut block, &mut sections);
    Parsed {
        sections,
        first_h1,
        front_matter,
        links,
        warnings,
    }
}

const FRONT_MATTER_BYTES: usize = 64 * 1024;
const FRONT_MATTER_DEPTH: usize = 64;
const FRONT_MATTER_VALUES: usize = 100_000;

/// Front matter as JSON: a mapping, or nothing (when empty). Size and depth are checked before
/// the YAML parser sees it (deep nesting costs it time quadratic in the depth), and the values
/// read are counted as they are made (aliases can repeat one value exponentially often).
fn read_front_matter(yaml: &str) -> Result<Option<Value>, String> {
    if yaml.len() > FRONT_MATTER_BYTES {
        return Err(format!(
            "the front matter is {} bytes, more than {FRONT_MATTER_BYTES}",
            yaml.len()
        ));
    }
    if nesting_depth(yaml) > FRONT_MATTER_DEPTH {
        return Err(format!(
            "the front matter nests deeper than {FRONT_MATTER_DEPTH} levels"
        ));
    }
    let left = Cell::new(FRONT_MATTER_VALUES);
    match Bounded(&left).deserialize(serde_yaml::Deserializer::from_str(yaml)) {
        Ok(Value::Null) => Ok(None),
        Ok(value @ Value::Object(_)) => Ok(Some(value)),
        Ok(_) => Err("the front matter is not a mapping of keys to values".into()),
        Err(e) => Err(format!("the front matter is not valid YAML ({e})")),
    }
}

/// At least the nesting depth of YAML text, counted without parsing it: the flow brackets
/// open (`[`, `{`, quoted or not), plus the block levels open at the line (deeper indents, and
/// each `- ` or `? ` that opens a nested one).
fn nesting_depth(yaml: &str) -> usize {
    let (mut flow, mut deepest) = (0usize, 0usize);
    let mut columns: Vec<usize> = Vec::new();
    for line in yaml.lines() {
        let mut rest = line.trim_start_matches(' ');
        if flow == 0 && !rest.is_empty() && !rest.starts_with('#') {
            let mut column = line.len() - rest.len();
            columns.retain(|&c| c < column);
            columns.push(column);
            while let Some(after) = rest
                .strip_prefix(['-', '?'])
                .filter(|r| r.is_empty() || r.starts_with([' ', '\t']))
            {
                let item = after.trim_start();
                column += rest.len() - item.len();
                columns.push(column);
                rest = item;
            }
        }
        for c in rest.chars() {
            match c {
                '[' | '{' => flow += 1,
                ']' | '}' => flow = flow.saturating_sub(1),
                _ => continue,
            }
            deepest = deepest.max(columns.len() + flow);
        }
        deepest = deepest.max(columns.len() + flow);
    }
    deepest
}

/// Reads a JSON value from YAML, failing once more than the count in the cell has been made.
struct Bounded<'a>(&'a Cell<usize>);

impl Bounded<'_> {
    fn take<E: serde::de::Error>(&self) -> Result<(), E> {
        let left = self.0.get().checked_sub(1).ok_or_else(|| {
            E::custom(format!(
                "it expands to more than {FRONT_MATTER_VALUES} values"
            ))
        })?;
        self.0.set(left);
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("YAML")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.take().map(|_| Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.take().map(|_| Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.take().map(|_| Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.take().map(|_| Value::from(v))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.take().map(|_| Value::String(v.to_string()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.take().map(|_| Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Bounded(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.take()?;
        let mut entries = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            entries.insert(key, map.next_value_seed(Bounded(self.0))?);
        }
        Ok(Value::Object(entries))
    }
}

/// Appends an event's text to the block, noting where in the source it stands.
fn append(block: &mut Block, text: &str, source: &str, range: Range<usize>) {
    let within = source
        .get(range.clone())
        .and_then(|s| s.find(text))
        .unwrap_or(0);
    block
        .source_map
        .push((block.text.len(), (range.start + within) as u64));
    block.text.push_str(text);
}

/// The anchors of a document's headings, unique as GitHub makes them (github-slugger): a slug
/// taken gets `-1`, `-2`, … (the first free one), so `A`, `A`, `A-1` are `a`, `a-1`, `a-1-1`.
/// An explicit `{#id}` is kept as written, and no slug takes it afterwards.
#[derive(Default)]
struct Anchors {
    taken: HashSet<String>,
    /// For each slug, the last suffix tried.
    suffixes: std::collections::HashMap<String, usize>,
}

impl Anchors {
    fn add(&mut self, id: Option<String>, text: &str) -> String {
        if let Some(id) = id {
            self.taken.insert(id.clone());
            return id;
        }
        let slug: String = text
            .chars()
            .flat_map(char::to_lowercase)
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = slug.clone();
        while self.taken.contains(&unique) {
            let n = self.suffixes.entry(slug.clone()).or_insert(0);
            *n += 1;
            unique = format!("{slug}-{n}");
        }
        self.taken.insert(unique.clone());
        unique
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\ntitle: Guide\ntags: [a, b]\n---\n\nIntro text.\n\n# Install\n\nRun `cargo build` now.\n\n## On Linux {#linux}\n\n- first item\n- second item\n\n# Install\n\nAgain.\n";

    #[test]
    fn sections_headings_anchors_and_front_matter() {
        let parsed = parse(DOC);
        assert_eq!(
            parsed.front_matter.as_ref().unwrap()["tags"],
            serde_json::json!(["a", "b"])
        );
        assert_eq!(parsed.first_h1.as_deref(), Some("Install"));
        let summary: Vec<(Vec<String>, Option<String>, Vec<String>)> = parsed
            .sections
            .iter()
            .map(|s| {
                (
                    s.heading_path.clone(),
                    s.anchor.clone(),
                    s.blocks.iter().map(|b| b.text.clone()).collect(),
                )
            })
            .collect();
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(summary[0], (vec![], None, strings(&["Intro text."])));
        assert_eq!(
            summary[1],
            (
                strings(&["Install"]),
                Some("install".into()),
                strings(&["Run cargo build now."])
            )
        );
        assert_eq!(
            summary[2],
            (
                strings(&["Install", "On Linux"]),
                Some("linux".into()),
                strings(&["first item", "second item"])
            )
        );
        assert_eq!(summary[3].1.as_deref(), Some("install-1"));
    }

    #[test]
    fn heading_anchors_are_unique_as_on_github() {
        let parsed = parse("# A\n\n# A\n\n# A-1\n\n# A\n\n## B {#b}\n\n# B\n");
        let anchors: Vec<&str> = parsed.sections[1..]
            .iter()
            .map(|s| s.anchor.as_deref().unwrap())
            .collect();
        assert_eq!(anchors, vec!["a", "a-1", "a-1-1", "a-2", "b", "b-1"]);
    }

    #[test]
    fn hostile_front_matter_is_ignored_and_the_body_kept() {
        let deep_flow = format!(
            "---\ntitle: x\ntags: {}{}\n---\n\nBody text.\n",
            "[".repeat(30_000),
            "]".repeat(30_000)
        );
        let mut deep_block = String::from("---\n");
        for level in 0..200 {
            deep_block.push_str(&format!("{}k{level}:\n", " ".repeat(level)));
        }
        deep_block.push_str("---\n\nBody text.\n");
        let dashes = format!("---\nlist:\n{}x\n---\n\nBody text.\n", "- ".repeat(30_000));
        // (Padded, so that serde_yaml's own limit, a hundred replays per event, comes later.)
        let mut bomb = format!(
            "---\npad: [{}]\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
            vec!["1"; 2000].join(",")
        );
        for i in 1..10 {
            let previous = format!("*a{}", i - 1);
            bomb.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [previous.as_str(); 9].join(", ")
            ));
        }
        bomb.push_str("---\n\nBody text.\n");
        let huge = format!(
            "---\ntitle: x\npad: \"{}\"\n---\n\nBody text.\n",
            "p".repeat(70_000)
        );
        let broken = "---\ntitle: [unclosed\n---\n\nBody text.\n".to_string();
        for (name, source, problem) in [
            ("deep flow", deep_flow, "nests deeper than 64"),
            ("deep block", deep_block, "nests deeper than 64"),
            ("block dashes", dashes, "nests deeper than 64"),
            ("alias bomb", bomb, "expands to more than 100000 values"),
            ("huge", huge, "more than 65536"),
            ("broken", broken, "not valid YAML"),
        ] {
            let started = std::time::Instant::now();
            let parsed = parse(&source);
            println!("{name}: {:?}", started.elapsed());
            assert!(parsed.front_matter.is_none(), "{name}");
            assert_eq!(parsed.warnings.len(), 1, "{name}");
            assert!(
                parsed.warnings[0].contains(problem),
                "{name}: {}",
                parsed.warnings[0]
            );
            assert_eq!(parsed.sections[0].blocks[0].text, "Body text.", "{name}");
        }
        // Aliases that stay small are fine, and so is ordinary nesting.
        let parsed = parse("---\nbase: &b {a: 1}\nuse: *b\nnested: {x: [1, [2, [3]]]}\nlist:\n  - - a\n    - b\n---\nText.\n");
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        assert_eq!(
            parsed.front_matter.unwrap()["use"],
            serde_json::json!({"a": 1})
        );
    }

    #[test]
    fn nesting_depth_counts_flow_and_block_levels() {
        assert_eq!(nesting_depth("a: 1\nb: 2\n"), 1);
        assert_eq!(nesting_depth("a:\n  b:\n    c: [1, {d: 2}]\n"), 5);
        assert_eq!(nesting_depth("- - - x\n"), 4);
        assert_eq!(nesting_depth("a: [[[\n]]]\nb: 1\n"), 4);
        assert_eq!(
            nesting_depth("title: \"[[[\"\n"),
            4,
            "quoted brackets count too (an overestimate)"
        );
    }

    #[test]
    fn links_keep_their_targets_and_words() {
        let parsed =
            parse("See [the *install* guide](guide/install.md#build) and [site](https://x.org).\n");
        let links: Vec<(&str, &str)> = parsed
            .links
            .iter()
            .map(|l| (l.target.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(
            links,
            vec![
                ("guide/install.md#build", "the install guide"),
                ("https://x.org", "site")
            ]
        );
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
