//! Ingestion (native only): finds the input files, reads each one with the reader for its
//! format, and hands back documents already cut into chunks that know their source lines and
//! offsets. A file that cannot be read is reported and skipped, and what a reader had to ignore
//! in a file it kept is reported as a warning; neither stops the run. Text is decoded from the
//! encoding its byte order mark or (HTML) `<meta charset>` declares, else UTF-8, else the one
//! chardetng guesses; files that look binary are skipped, and so are, unopened, files larger
//! than [`MAX_FILE_BYTES`] ([`MAX_PDF_BYTES`] for a PDF) and paths that are not regular files
//! (a FIFO, a device). Ids are unique: a second document with an id already taken is reported
//! with both places and skipped.
//!
//! [`collect`] lists the inputs as `cairn index` takes them: a built site (a folder with an
//! `index.html` at its top) by its HTML pages only, several input folders each under its own
//! name, and no two files with one id (and URL).
//!
//! In the browser (the mutable index of the `edit` module) only JSONL records are read, from text
//! handed over by JavaScript ([`records`]): the same reader, so the same documents and chunks.

// The browser compiles the record reader and what it shares with the file readers.
#![cfg_attr(browser, allow(dead_code, unused_imports))]

#[cfg(not(browser))]
mod collect;
pub mod dates;
#[cfg(not(browser))]
mod decode;
#[cfg(not(browser))]
mod html;
mod jsonl;
#[cfg(not(browser))]
mod markdown;
#[cfg(not(browser))]
mod pdf;
#[cfg(not(browser))]
mod text;

use std::collections::hash_map::{Entry, HashMap};
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::PathBuf;

#[cfg(not(browser))]
use encoding_rs::Encoding;
use rayon::prelude::*;

use crate::chunk::{chunk_sections, ChunkDraft, ChunkLimit, LineIndex};
use crate::error::{Error, Result};
use crate::index::{Chunk, Document};

#[cfg(not(browser))]
pub use collect::{
    collect, collect_files, thousands, BuiltSite, CollectOptions, Collected, SITE_MARKERS,
};
#[cfg(not(browser))]
use collect::{extension, not_regular, EXTENSIONS};
#[cfg(not(browser))]
pub use decode::MAX_PDF_BYTES;
#[cfg(not(browser))]
use decode::{decode, looks_binary, BINARY};

/// The largest Markdown, HTML or text file cairn reads, and the longest JSONL record: 64 MiB.
/// The longest real pages are a few megabytes (a book's one-page `print.html`, the longest
/// Wikipedia article), while a reader holds several copies of a file's text at once (its bytes,
/// the decoded text, a parsed tree, the chunks), one file on each of rayon's threads; so no real
/// site meets the limit, and a build's memory stays bounded whatever the inputs hold.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// A document and its chunks, ready to index (`Chunk::doc` is set by the index builder).
#[derive(Debug, Clone)]
pub struct SourceDocument {
    pub document: Document,
    pub chunks: Vec<Chunk>,
    /// Links found in the source, resolved to indexed documents by the builder.
    pub links: Vec<RawLink>,
    /// Where the document came from, for messages: the file's path, with `:line` for a record.
    pub origin: String,
    /// The language it says it is in (`<html lang>`, front matter or JSONL `lang`/`language`),
    /// as a primary subtag ("de"): what `cairn index` analyzes it as when not told.
    pub language: Option<String>,
}

/// A link as the source wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawLink {
    /// The target, relative to the linking document (`../a.md#x`).
    pub target: String,
    /// The link's words.
    pub text: String,
    /// What the link says the target is (HTML `rel`, a Markdown link's title), as written.
    pub rel: Option<String>,
}

#[derive(Debug, Clone)]
pub struct IngestOptions<'a> {
    /// How much text a chunk may hold.
    pub chunk_limit: ChunkLimit<'a>,
    /// Prefix of every file's URL; the file's path under its input folder follows it.
    pub base_url: String,
}

/// An input file and the folder its id and URL are relative to.
#[derive(Debug, Clone, PartialEq)]
pub struct InputFile {
    pub root: PathBuf,
    pub path: PathBuf,
}

impl InputFile {
    /// The path under the root, with forward slashes: the document id of a file. A name that
    /// is not UTF-8 keeps its other bytes as `%XX`.
    pub fn relative(&self) -> String {
        let rel = self.path.strip_prefix(&self.root).unwrap_or(&self.path);
        rel.components()
            .map(|c| lossless(c.as_os_str()))
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// A file name as text without losing a byte: what is not UTF-8 is written `%XX`, byte by byte.
/// (A `%` itself stays, so such a name can meet a real one spelled with `%XX`; the duplicate is
/// then reported, not merged.)
fn lossless(name: &OsStr) -> String {
    let mut text = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(text, "%{byte:02X}");
        }
    }
    text
}

/// What came of ingesting the inputs (or one file).
#[derive(Default)]
pub struct Ingested {
    pub documents: Vec<SourceDocument>,
    /// Files or records left out, and why.
    pub skipped: Vec<Error>,
    /// What was ignored in documents that were kept (a field that could not be read, front
    /// matter that was too deep), and why.
    pub warnings: Vec<Error>,
}

#[cfg(not(browser))]
/// Reads every file (in parallel, results in input order). `progress` is called once per file.
pub fn ingest(
    files: &[InputFile],
    options: &IngestOptions,
    progress: impl Fn() + Sync,
) -> Ingested {
    let results: Vec<Ingested> = files
        .par_iter()
        .map(|file| {
            let result = ingest_file(file, options);
            progress();
            result.unwrap_or_else(|e| Ingested {
                skipped: vec![e],
                ..Ingested::default()
            })
        })
        .collect();
    let mut ingested = Ingested::default();
    // Ids must be unique: two inputs can hold files at the same relative path, a JSONL file
    // the same id twice (`42` and `"42"` are one id).
    let mut origins: HashMap<String, String> = HashMap::new();
    for result in results {
        for document in result.documents {
            match origins.entry(document.document.id.clone()) {
                Entry::Vacant(entry) => {
                    entry.insert(document.origin.clone());
                    ingested.documents.push(document);
                }
                Entry::Occupied(first) => {
                    let hint = if document.document.doc_type == crate::hit::DocType::Jsonl {
                        ""
                    } else {
                        " (to index two folders that hold the same paths, index their common parent folder)"
                    };
                    ingested.skipped.push(Error::Ingest {
                        path: document.origin,
                        message: format!(
                            "the id {:?} is already taken by {}; this one is skipped{hint}",
                            first.key(),
                            first.get()
                        ),
                    });
                }
            }
        }
        ingested.skipped.extend(result.skipped);
        ingested.warnings.extend(result.warnings);
    }
    ingested
}

#[cfg(not(browser))]
/// Reads one file: its documents, the records in it that had to be skipped, and warnings.
pub fn ingest_file(file: &InputFile, options: &IngestOptions) -> Result<Ingested> {
    let path = file.path.display().to_string();
    let fail = |message: String| Error::Ingest {
        path: path.clone(),
        message,
    };
    let kind = extension(&file.path);
    let unsupported = || {
        fail(format!(
            "unsupported file type; cairn reads {}",
            EXTENSIONS.join(", ")
        ))
    };
    if !kind.as_deref().is_some_and(|e| EXTENSIONS.contains(&e)) {
        return Err(unsupported());
    }
    let cannot_read = |e: std::io::Error| fail(format!("cannot read it: {e}"));
    // What a path is, before it is opened: opening a FIFO would wait for a writer.
    let meta = std::fs::metadata(&file.path).map_err(cannot_read)?;
    if let Some(why) = not_regular(&meta.file_type()) {
        return Err(fail(why));
    }
    let modified = meta.modified().ok().map(dates::from_system_time);
    let mut opened = std::fs::File::open(&file.path).map_err(cannot_read)?;
    if kind.as_deref() == Some("jsonl") {
        return read_jsonl(file, opened, options).map_err(&fail);
    }
    let limit = if kind.as_deref() == Some("pdf") {
        MAX_PDF_BYTES
    } else {
        MAX_FILE_BYTES
    };
    let too_large = |size: u64| {
        fail(format!(
            "it is {}, over the limit of {} MiB for one {}; split it into smaller files",
            mib(size),
            limit >> 20,
            if limit == MAX_PDF_BYTES {
                "PDF"
            } else {
                "file"
            }
        ))
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    // Read no further than the limit, should the file have grown since.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut opened)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot_read)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    let whole_file = |mut doc: SourceDocument, warnings: Vec<String>| {
        if doc.chunks.is_empty() && !doc.document.title.trim().is_empty() {
            doc.chunks.push(title_only_chunk(1));
        }
        // A date the source states beats the file's time (a checkout rewrites that): updated
        // falls back to created, then to the modification time; created to updated.
        let d = &mut doc.document;
        d.updated = d
            .updated
            .take()
            .or_else(|| d.created.clone())
            .or_else(|| modified.clone());
        d.created = d.created.take().or_else(|| d.updated.clone());
        let warnings = warnings.into_iter().map(&fail).collect();
        Ok(Ingested {
            documents: vec![doc],
            skipped: Vec::new(),
            warnings,
        })
    };
    let decoded = |html: bool| decode(&bytes, html).map_err(&fail);
    match kind.as_deref() {
        Some("md" | "markdown") => {
            let (doc, warnings) = markdown::read(file, &decoded(false)?, options);
            whole_file(doc, warnings)
        }
        Some("txt") => whole_file(text::read(file, &decoded(false)?, options), Vec::new()),
        Some("html" | "htm") => whole_file(
            html::read(file, &decoded(true)?, options).map_err(&fail)?,
            Vec::new(),
        ),
        Some("pdf") => whole_file(pdf::read(file, &bytes, options).map_err(&fail)?, Vec::new()),
        _ => Err(unsupported()),
    }
}

#[cfg(not(browser))]
/// Reads a JSONL file line by line: a file may be a whole corpus (a BEIR corpus can be
/// gigabytes), so it has no size limit, only each of its records ([`MAX_FILE_BYTES`]). The
/// file must be UTF-8 and look like text in its first 8 KiB.
fn read_jsonl(
    file: &InputFile,
    mut opened: std::fs::File,
    options: &IngestOptions,
) -> std::result::Result<Ingested, String> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let mut head = Vec::new();
    (&mut opened)
        .take((BOM.len() + 8192) as u64)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if head.starts_with(BOM) {
        head.drain(..BOM.len());
    }
    if let Some((encoding, _)) = Encoding::for_bom(&head) {
        return Err(format!(
            "JSONL must be UTF-8, and this file is {}; convert it (iconv -f {0} -t UTF-8)",
            encoding.name()
        ));
    }
    if looks_binary(&head) {
        return Err(BINARY.into());
    }
    let mut reader = std::io::BufReader::new(std::io::Cursor::new(head).chain(opened));
    Ok(jsonl::read(file, &mut reader, options))
}

/// A size in MiB, for a message.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// The documents of JSONL records (one a line, as in a `.jsonl` file) handed over as text:
/// what the browser's mutable index adds. `origin` names them in messages (`origin:line`).
pub fn records(text: &str, origin: &str, options: &IngestOptions) -> Ingested {
    let file = InputFile {
        root: PathBuf::new(),
        path: PathBuf::from(origin),
    };
    jsonl::read(&file, &mut std::io::Cursor::new(text.as_bytes()), options)
}

/// The one chunk of a document that has a title and no text, so that its title can be found.
fn title_only_chunk(line: u32) -> Chunk {
    Chunk {
        doc: 0,
        chunk_index: 0,
        heading_path: Vec::new(),
        anchor: None,
        text: String::new(),
        line_start: line,
        line_end: line,
        source_offset: 0,
        pages: None,
    }
}

/// Turns chunk drafts into chunks with line ranges from `lines`.
fn finish_chunks(drafts: Vec<ChunkDraft>, lines: &dyn Fn(u64) -> u32) -> Vec<Chunk> {
    finish_paged_chunks(drafts, lines, None)
}

/// Turns chunk drafts into chunks with line ranges, and page ranges when `page_starts` (the
/// source offset where each page begins) is given.
fn finish_paged_chunks(
    drafts: Vec<ChunkDraft>,
    lines: &dyn Fn(u64) -> u32,
    page_starts: Option<&[u64]>,
) -> Vec<Chunk> {
    let page_of = |offset: u64| {
        page_starts.map(|starts| starts.partition_point(|&s| s <= offset).max(1) as u32)
    };
    drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| Chunk {
            doc: 0,
            chunk_index: i as u32,
            line_start: lines(d.source_start),
            line_end: lines(d.source_end.saturating_sub(1).max(d.source_start)),
            source_offset: d.source_start,
            pages: page_of(d.source_start)
                .zip(page_of(d.source_end.saturating_sub(1).max(d.source_start))),
            heading_path: d.heading_path,
            anchor: d.anchor,
            text: d.text,
        })
        .collect()
}

#[cfg(not(browser))]
/// A file's chunks, with line numbers from its own text (and pages, for paged sources).
fn chunk_file(
    sections: &[crate::chunk::Section],
    title: &str,
    source: &str,
    options: &IngestOptions,
) -> Vec<Chunk> {
    chunk_paged_file(sections, title, source, options, None)
}

#[cfg(not(browser))]
fn chunk_paged_file(
    sections: &[crate::chunk::Section],
    title: &str,
    source: &str,
    options: &IngestOptions,
    page_starts: Option<&[u64]>,
) -> Vec<Chunk> {
    let lines = LineIndex::new(source);
    // A reader's map from text to source is exact for verbatim runs and close elsewhere (HTML
    // folds whitespace and decodes references); wherever it lands, a chunk starts and ends on a
    // character of its own source.
    let inside = |offset: u64| {
        let mut at = (offset as usize).min(source.len());
        while !source.is_char_boundary(at) {
            at -= 1;
        }
        at as u64
    };
    let mut drafts = chunk_sections(sections, title, &options.chunk_limit);
    for draft in &mut drafts {
        draft.source_start = inside(draft.source_start);
        draft.source_end = inside(draft.source_end).max(draft.source_start);
    }
    finish_paged_chunks(drafts, &|o| lines.line_of(o), page_starts)
}

/// The author a document's metadata (front matter, `<meta>` tags, a record's `metadata`) names
/// under `author`.
/// The language a tag in `lang` or `language` of `metadata` names, if it is a language tag.
fn language_in(metadata: Option<&serde_json::Value>) -> Option<String> {
    let metadata = metadata?;
    let tag = metadata
        .get("lang")
        .or_else(|| metadata.get("language"))?
        .as_str()?;
    language_of(tag)
}

/// The primary subtag of a language tag as a source wrote it ("de-CH" → "de"), if it is one.
fn language_of(tag: &str) -> Option<String> {
    crate::analyze::language::primary_subtag(tag).ok()
}

fn author_in(metadata: Option<&serde_json::Value>) -> Option<String> {
    author_name(metadata?.get("author")?)
}

/// An author as written: a name, a list of names (joined with ", "), or an object's `name`.
fn author_name(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let name = match value {
        Value::String(name) => name.split_whitespace().collect::<Vec<_>>().join(" "),
        Value::Array(names) => names
            .iter()
            .filter_map(author_name)
            .collect::<Vec<_>>()
            .join(", "),
        Value::Object(object) => author_name(object.get("name")?)?,
        _ => return None,
    };
    let name: String = name.chars().take(200).collect();
    (!name.is_empty()).then_some(name)
}

/// A link's stated relationship, blanks folded, at most 200 characters; none when blank.
/// HTML link types that say how to follow a link, not what its target is.
const NOT_RELATIONSHIPS: [&str; 7] = [
    "noopener",
    "noreferrer",
    "nofollow",
    "external",
    "ugc",
    "sponsored",
    "opener",
];

fn rel_of(written: Option<&str>) -> Option<String> {
    let rel: String = written?
        .split_whitespace()
        .filter(|t| !NOT_RELATIONSHIPS.iter().any(|n| n.eq_ignore_ascii_case(t)))
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(200)
        .collect();
    (!rel.is_empty()).then_some(rel)
}

#[cfg(not(browser))]
/// The file's URL: `--base-url` and its path under the input folder, each name
/// percent-encoded; a site's `index.html` is its folder's URL, as web servers serve it.
fn file_url(file: &InputFile, options: &IngestOptions) -> Option<String> {
    let relative = file.path.strip_prefix(&file.root).unwrap_or(&file.path);
    let relative = relative
        .components()
        .map(|c| url_segment(c.as_os_str()))
        .collect::<Vec<_>>()
        .join("/");
    let path = match relative.strip_suffix("index.html") {
        Some(dir) if dir.is_empty() || dir.ends_with('/') => dir.to_string(),
        _ => relative,
    };
    Some(format!("{}{}", options.base_url, path))
}

#[cfg(not(browser))]
/// A file or folder name as one segment of a URL's path (RFC 3986): its bytes, with all but
/// the unreserved characters and the sub-delimiters written `%XX`. So a name is never read as
/// more than a name: `?` and `#` cannot start a query or fragment, `\` (which browsers read
/// as `/`) and `/` cannot make `\\host` or `//host` a link to another site, `:` cannot make
/// `javascript:x.md` a scheme, and `%` cannot make `%2e%2e` a step up.
fn url_segment(name: &OsStr) -> String {
    let mut segment = String::new();
    for &byte in name.as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&byte) {
            segment.push(byte as char);
        } else {
            let _ = write!(segment, "%{byte:02X}");
        }
    }
    segment
}

#[cfg(not(browser))]
fn file_stem(file: &InputFile) -> String {
    file.path.file_stem().map(lossless).unwrap_or_default()
}

/// Where a file's document came from, for messages.
fn origin(file: &InputFile) -> String {
    file.path.display().to_string()
}
