//! Ingestion (native only): finds the input files, reads each one with the reader for its
//! format, and hands back documents already cut into chunks that know their source lines and
//! offsets. A file that cannot be read is reported and skipped; it never stops the run.

pub mod dates;
mod html;
mod jsonl;
mod markdown;
mod pdf;
mod text;

use std::path::{Path, PathBuf};

use globset::GlobSet;
use rayon::prelude::*;

use crate::chunk::{chunk_sections, ChunkDraft, ChunkLimit, LineIndex};
use crate::error::{Error, Result};
use crate::index::{Chunk, Document};

/// A document and its chunks, ready to index (`Chunk::doc` is set by the index builder).
#[derive(Debug, Clone)]
pub struct SourceDocument {
    pub document: Document,
    pub chunks: Vec<Chunk>,
    /// Links found in the source, resolved to indexed documents by the builder.
    pub links: Vec<RawLink>,
}

/// A link as the source wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawLink {
    /// The target, relative to the linking document (`../a.md#x`).
    pub target: String,
    /// The link's words.
    pub text: String,
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
    /// The path under the root, with forward slashes: the document id of a file.
    pub fn relative(&self) -> String {
        let rel = self.path.strip_prefix(&self.root).unwrap_or(&self.path);
        rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
    }
}

/// What came of ingesting the inputs.
pub struct Ingested {
    pub documents: Vec<SourceDocument>,
    /// Files or records left out, and why.
    pub skipped: Vec<Error>,
}

const EXTENSIONS: &[&str] = &["md", "markdown", "html", "htm", "pdf", "txt", "jsonl"];

/// Lists the files to ingest, in a stable order: files given by name, and the supported files
/// under folders given by name, less those matching an `exclude` glob.
pub fn collect_files(inputs: &[PathBuf], exclude: &GlobSet) -> Result<Vec<InputFile>> {
    let mut out = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| Error::Ingest { path: input.display().to_string(), message: format!("cannot read it: {e}") })?;
        if meta.is_file() {
            // A file named by a relative path keeps that path as its id; an absolute one, its name.
            let root = if input.is_relative() { PathBuf::new() } else { input.parent().map(Path::to_path_buf).unwrap_or_default() };
            out.push(InputFile { root, path: input.clone() });
            continue;
        }
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(input)
            .follow_links(true)
            .into_iter()
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| entry.into_path())
            .filter(|path| has_supported_extension(path))
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|path| InputFile { root: input.clone(), path }));
    }
    out.retain(|file| !exclude.is_match(file.relative()) && !exclude.is_match(&file.path));
    Ok(out)
}

fn has_supported_extension(path: &Path) -> bool {
    extension(path).is_some_and(|e| EXTENSIONS.contains(&e.as_str()))
}

fn extension(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// Reads every file (in parallel, results in input order). `progress` is called once per file.
pub fn ingest(files: &[InputFile], options: &IngestOptions, progress: impl Fn() + Sync) -> Ingested {
    let results: Vec<(Vec<SourceDocument>, Vec<Error>)> = files
        .par_iter()
        .map(|file| {
            let result = ingest_file(file, options);
            progress();
            match result {
                Ok(done) => done,
                Err(e) => (Vec::new(), vec![e]),
            }
        })
        .collect();
    let mut ingested = Ingested { documents: Vec::new(), skipped: Vec::new() };
    let mut ids = std::collections::HashSet::new();
    for (documents, errors) in results {
        for document in documents {
            // Ids must be unique: two inputs can hold files at the same relative path.
            if ids.insert(document.document.id.clone()) {
                ingested.documents.push(document);
            } else {
                ingested.skipped.push(Error::Ingest {
                    path: document.document.id.clone(),
                    message: "another input already has a document with this id; index their common parent folder instead".into(),
                });
            }
        }
        ingested.skipped.extend(errors);
    }
    ingested
}

/// Reads one file: its documents, and the records in it that had to be skipped.
pub fn ingest_file(file: &InputFile, options: &IngestOptions) -> Result<(Vec<SourceDocument>, Vec<Error>)> {
    let path = file.path.display().to_string();
    let fail = |message: String| Error::Ingest { path: path.clone(), message };
    let bytes = std::fs::read(&file.path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let modified = std::fs::metadata(&file.path).and_then(|m| m.modified()).ok().map(dates::from_system_time);
    let whole_file = |mut doc: SourceDocument| {
        if doc.chunks.is_empty() && !doc.document.title.trim().is_empty() {
            doc.chunks.push(title_only_chunk(1));
        }
        // A date the source states beats the file's time (a checkout rewrites that): updated
        // falls back to created, then to the modification time; created to updated.
        let d = &mut doc.document;
        d.updated = d.updated.take().or_else(|| d.created.clone()).or_else(|| modified.clone());
        d.created = d.created.take().or_else(|| d.updated.clone());
        Ok((vec![doc], Vec::new()))
    };
    match extension(&file.path).as_deref() {
        Some("md" | "markdown") => whole_file(markdown::read(file, &decode(&bytes), options)),
        Some("txt") => whole_file(text::read(file, &decode(&bytes), options)),
        Some("html" | "htm") => whole_file(html::read(file, &decode(&bytes), options)),
        Some("pdf") => whole_file(pdf::read(file, &bytes, options).map_err(fail)?),
        Some("jsonl") => {
            let text = std::str::from_utf8(&bytes).map_err(|e| fail(format!("JSONL must be UTF-8: {e}")))?;
            Ok(jsonl::read(file, text, options))
        }
        _ => Err(fail(format!("unsupported file type; cairn reads {}", EXTENSIONS.join(", ")))),
    }
}

/// Text from bytes: UTF-8 (a BOM is dropped); anything else is read as UTF-8 with invalid
/// sequences replaced, so one bad byte does not lose a file.
fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
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
fn finish_paged_chunks(drafts: Vec<ChunkDraft>, lines: &dyn Fn(u64) -> u32, page_starts: Option<&[u64]>) -> Vec<Chunk> {
    let page_of = |offset: u64| page_starts.map(|starts| starts.partition_point(|&s| s <= offset).max(1) as u32);
    drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| Chunk {
            doc: 0,
            chunk_index: i as u32,
            line_start: lines(d.source_start),
            line_end: lines(d.source_end.saturating_sub(1).max(d.source_start)),
            source_offset: d.source_start,
            pages: page_of(d.source_start).zip(page_of(d.source_end.saturating_sub(1).max(d.source_start))),
            heading_path: d.heading_path,
            anchor: d.anchor,
            text: d.text,
        })
        .collect()
}

/// A file's chunks, with line numbers from its own text (and pages, for paged sources).
fn chunk_file(sections: &[crate::chunk::Section], title: &str, source: &str, options: &IngestOptions) -> Vec<Chunk> {
    chunk_paged_file(sections, title, source, options, None)
}

fn chunk_paged_file(
    sections: &[crate::chunk::Section],
    title: &str,
    source: &str,
    options: &IngestOptions,
    page_starts: Option<&[u64]>,
) -> Vec<Chunk> {
    let lines = LineIndex::new(source);
    finish_paged_chunks(chunk_sections(sections, title, &options.chunk_limit), &|o| lines.line_of(o), page_starts)
}

/// The file's URL: `--base-url` and its path under the input folder; a site's `index.html`
/// is its folder's URL, as web servers serve it.
fn file_url(file: &InputFile, options: &IngestOptions) -> Option<String> {
    let relative = file.relative();
    let path = match relative.strip_suffix("index.html") {
        Some(dir) if dir.is_empty() || dir.ends_with('/') => dir.to_string(),
        _ => relative,
    };
    Some(format!("{}{}", options.base_url, path))
}

fn file_stem(file: &InputFile) -> String {
    file.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}
