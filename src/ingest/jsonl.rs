//! JSONL records, one document a line: `{"_id" or "id", "title", "text", "url"?, "metadata"?,
//! "createdAt" or "created" or "date"?, "updatedAt" or "updated"?, "author"?, "lang" or
//! "language"?}`, as in a BEIR
//! `corpus.jsonl`. An id is taken exactly as written: a string's text, a number's digits (so
//! `42` and `"42"` are one id, and `12345678901234567891` is not rounded). A line that is not
//! such a record, or not UTF-8, or longer than 64 MiB, or nesting deeper than 64 levels, is
//! reported and skipped. A field that cannot be read is ignored
//! with a warning, and the record kept: a number title or text is its digits, a number date is
//! Unix seconds, and `_id` wins over `id`.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{
    dates, finish_chunks, title_only_chunk, IngestOptions, Ingested, InputFile, SourceDocument,
};
use crate::chunk::{chunk_sections, Block, Section};
use crate::error::Error;
use crate::hit::DocType;
use crate::index::{Document, Timestamp};

/// A record's fields, each as written (a field named twice fails the record).
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(rename = "_id", borrow)]
    underscore_id: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    title: Option<&'a RawValue>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    url: Option<&'a RawValue>,
    metadata: Option<Value>,
    #[serde(rename = "createdAt", borrow)]
    created_at: Option<&'a RawValue>,
    #[serde(borrow)]
    created: Option<&'a RawValue>,
    #[serde(borrow)]
    date: Option<&'a RawValue>,
    #[serde(rename = "updatedAt", borrow)]
    updated_at: Option<&'a RawValue>,
    #[serde(borrow)]
    updated: Option<&'a RawValue>,
    author: Option<Value>,
    lang: Option<Value>,
    language: Option<Value>,
}

/// The deepest a record may nest, the record itself being level 1: the limit YAML front matter
/// has, so that a document's metadata can nest as deep from either source. Lines are measured
/// before they are parsed, so a deeper one is refused whatever field holds the depth, and
/// never reaches serde_json's recursion (which stops at 128 levels, and recurses on the stack).
pub const MAX_NESTING: usize = 64;

/// Reads the records of a JSONL file, line by line from `source`. A line longer than
/// [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES) is skipped without being held.
pub fn read(file: &InputFile, source: &mut dyn BufRead, options: &IngestOptions) -> Ingested {
    let mut out = Ingested::default();
    let mut line = Vec::new();
    for line_number in 1u32.. {
        let place = format!("{}:{line_number}", file.path.display());
        let note = |message: String| Error::Ingest {
            path: place.clone(),
            message,
        };
        let length = match next_line(source, &mut line, super::MAX_FILE_BYTES as usize) {
            Ok(Some(length)) => length,
            Ok(None) => break,
            Err(e) => {
                out.skipped
                    .push(note(format!("cannot read the file from this line on: {e}")));
                break;
            }
        };
        if length > super::MAX_FILE_BYTES as usize {
            out.skipped.push(note(format!(
                "the record is {}, over the limit of {} MiB for one record; skipped (split its text over several records)",
                super::mib(length as u64),
                super::MAX_FILE_BYTES >> 20
            )));
            continue;
        }
        let line = line.as_slice();
        let Ok(line) = std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line)) else {
            out.skipped.push(note(
                "not UTF-8 text (JSONL must be UTF-8; convert the file, e.g. with iconv)".into(),
            ));
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        if nesting(line.as_bytes()) > MAX_NESTING {
            out.skipped.push(note(format!(
                "the record nests deeper than {MAX_NESTING} levels; skipped (flatten its fields)"
            )));
            continue;
        }
        let record: Record = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(e) => {
                out.skipped.push(note(format!("not a JSON record: {e}")));
                continue;
            }
        };
        let mut warnings = Vec::new();
        if record.underscore_id.is_some() && record.id.is_some() {
            warnings.push("both \"_id\" and \"id\" are given; \"_id\" is the id".to_string());
        }
        let id = match record.underscore_id.or(record.id).and_then(as_text) {
            Some(id) if !id.is_empty() => id,
            _ => {
                out.skipped.push(note(
                    "the record has no \"_id\" or \"id\" (a non-empty string, or a number)".into(),
                ));
                continue;
            }
        };
        let title = text_field("title", record.title, &mut warnings).unwrap_or_default();
        let text = text_field("text", record.text, &mut warnings).unwrap_or_default();
        let url = record.url.and_then(|raw| {
            let url = serde_json::from_str::<String>(raw.get()).ok();
            if url.is_none() {
                warnings.push(format!("\"url\" is {}, not a string; ignored", shown(raw)));
            }
            url
        });
        let created = date_field("createdAt", record.created_at, &mut warnings)
            .or_else(|| date_field("created", record.created, &mut warnings))
            .or_else(|| date_field("date", record.date, &mut warnings));
        let updated = date_field("updatedAt", record.updated_at, &mut warnings)
            .or_else(|| date_field("updated", record.updated, &mut warnings))
            .or_else(|| created.clone());
        // `author` beside the text, else in `metadata`.
        let author = record
            .author
            .as_ref()
            .and_then(super::author_name)
            .or_else(|| super::author_in(record.metadata.as_ref()));
        // `lang` or `language` beside the text, else in `metadata`.
        let language = [&record.lang, &record.language]
            .into_iter()
            .find_map(|v| v.as_ref()?.as_str().and_then(super::language_of))
            .or_else(|| super::language_in(record.metadata.as_ref()));
        let sections = [Section {
            heading_path: Vec::new(),
            anchor: None,
            blocks: vec![Block::verbatim(text, 0)],
        }];
        let mut chunks = finish_chunks(
            chunk_sections(&sections, &title, &options.chunk_limit),
            &|_| line_number,
        );
        if chunks.is_empty() && !title.trim().is_empty() {
            chunks.push(title_only_chunk(line_number));
        }
        out.warnings.extend(warnings.into_iter().map(&note));
        out.documents.push(SourceDocument {
            document: Document {
                id,
                doc_type: DocType::Jsonl,
                title,
                url,
                metadata: record
                    .metadata
                    .filter(|m| !m.is_null())
                    .map(|m| m.to_string()),
                created,
                updated,
                author,
                summary: None,
            },
            chunks,
            links: Vec::new(),
            origin: place.clone(),
            language,
        });
    }
    out
}

/// Reads the next line of `source` into `line` (without its `\n`), keeping no more than
/// `limit` bytes of it; gives the line's whole length, or None at the end.
fn next_line(
    source: &mut dyn BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Option<usize>> {
    line.clear();
    let mut length = 0;
    let mut started = false;
    loop {
        let buffer = match source.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            return Ok(started.then_some(length));
        }
        started = true;
        let end = buffer.iter().position(|&b| b == b'\n');
        let part = &buffer[..end.unwrap_or(buffer.len())];
        if length + part.len() <= limit {
            line.extend_from_slice(part);
        }
        length += part.len();
        let used = end.map_or(part.len(), |end| end + 1);
        source.consume(used);
        if end.is_some() {
            return Ok(Some(length));
        }
    }
}

/// How deep a line of JSON nests (`{"a": [1]}` is 2), from its brackets outside strings,
/// without parsing it.
fn nesting(json: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in json {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    deepest
}

/// A value as text, if it is a string (its text) or a number (its digits, as written).
fn as_text(raw: &RawValue) -> Option<String> {
    let raw = raw.get();
    if raw.starts_with('"') {
        serde_json::from_str(raw).ok()
    } else if raw.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        Some(raw.to_string())
    } else {
        None
    }
}

fn text_field(name: &str, raw: Option<&RawValue>, warnings: &mut Vec<String>) -> Option<String> {
    let text = as_text(raw?);
    if text.is_none() {
        warnings.push(format!(
            "\"{name}\" is {}, not a string or a number; ignored",
            shown(raw?)
        ));
    }
    text
}

fn date_field(name: &str, raw: Option<&RawValue>, warnings: &mut Vec<String>) -> Option<Timestamp> {
    let date = serde_json::from_str::<Value>(raw?.get())
        .ok()
        .as_ref()
        .and_then(dates::from_value);
    if date.is_none() {
        warnings.push(format!(
            "\"{name}\" is {}, not a date (YYYY-MM-DD, RFC 3339, or Unix seconds within the years 1 to 9999); ignored",
            shown(raw?)
        ));
    }
    date
}

/// The start of a value as written, for a message.
fn shown(raw: &RawValue) -> String {
    let text = raw.get();
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
