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

pub mod dates;
mod html;
mod jsonl;
mod markdown;
mod pdf;
mod text;

use std::collections::hash_map::{Entry, HashMap};
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use encoding_rs::{Encoding, UTF_8};
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
    /// Where the document came from, for messages: the file's path, with `:line` for a record.
    pub origin: String,
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

/// The files to ingest (it derefs to them), the paths under the input folders that could
/// not be listed (a dangling symbolic link, a folder that cannot be read), each with why, and
/// the input folders read as built sites.
#[derive(Debug, Default)]
pub struct Collected {
    pub files: Vec<InputFile>,
    pub skipped: Vec<Error>,
    /// The input folders [`collect`] read as built sites, and what it left out of each.
    pub sites: Vec<BuiltSite>,
}

impl std::ops::Deref for Collected {
    type Target = [InputFile];
    fn deref(&self) -> &[InputFile] {
        &self.files
    }
}

const EXTENSIONS: &[&str] = &["md", "markdown", "html", "htm", "pdf", "txt", "jsonl"];

/// The extensions of a built site's pages.
const PAGES: &[&str] = &["html", "htm"];

/// The files that make an input folder a built site: a page at its top that a web server serves
/// as the folder's own URL.
pub const SITE_MARKERS: &[&str] = &["index.html", "index.htm"];

/// How [`collect`] lists the inputs.
#[derive(Debug, Clone, Copy, Default)]
pub struct CollectOptions {
    /// Under a built site, take every supported file (`--all-files`), not only its pages.
    pub all_files: bool,
}

/// An input folder read as a built site: one with an `index.html` (or `index.htm`) directly
/// inside it. A site generator copies other files beside its pages (Sphinx the sources of every
/// page as `_sources/*.txt`, others `robots.txt` or PDFs to download); as Pagefind does, only
/// the pages are indexed unless [`CollectOptions::all_files`] is set.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltSite {
    /// The folder, as the command line named it.
    pub folder: PathBuf,
    /// Its HTML pages (`.html`, `.htm`), all taken.
    pub pages: usize,
    /// The other supported files under it that were left out, by extension: (extension, count),
    /// most first. Empty with `all_files`.
    pub left_out: Vec<(String, usize)>,
}

impl BuiltSite {
    /// How many files were left out.
    pub fn left_out_files(&self) -> usize {
        self.left_out.iter().map(|(_, n)| n).sum()
    }
}

impl std::fmt::Display for BuiltSite {
    /// One line: what was indexed and left out, and how to index the rest.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize, one: &str, many: &str| {
            format!("{} {}", thousands(n), if n == 1 { one } else { many })
        };
        write!(
            f,
            "{} is a built site: indexed its {}",
            self.folder.display(),
            plural(self.pages, "HTML page", "HTML pages")
        )?;
        if self.left_out.is_empty() {
            return Ok(());
        }
        let kinds: Vec<String> = self
            .left_out
            .iter()
            .map(|(ext, n)| format!(".{ext} {}", thousands(*n)))
            .collect();
        write!(
            f,
            ", left out {} ({}); pass --all-files to index them",
            plural(self.left_out_files(), "other file", "other files"),
            kinds.join(", ")
        )
    }
}

/// A count with thousands separated by commas (20,475), as messages write it.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Lists the files to ingest, as `cairn index` does, in a stable order: files given by name,
/// and the supported files under folders given by name, less those matching an `exclude` glob
/// (matched against a file's path under its input folder, its id and its path as listed).
///
/// - A folder with an `index.html` (or `index.htm`) directly inside it is a built site
///   ([`BuiltSite`]): only its HTML pages are taken, unless `options.all_files`. A file named
///   on the command line is always taken.
/// - With one input folder, a file's id and URL are its path under that folder (`guide/a.md`).
///   With more than one, they keep the folder's name (`std/index.html`, `book/index.html`), so
///   two sites' pages cannot meet at one URL.
/// - No two files may have the same id (and so the same URL): that is an error naming both. The
///   same file reached twice is taken once.
///
/// What cannot be listed under a folder is in `skipped` (an input that cannot be read at all
/// is the error).
pub fn collect(inputs: &[PathBuf], exclude: &GlobSet, options: &CollectOptions) -> Result<Collected> {
    list(inputs, exclude, Some(options))
}

/// Lists the files to ingest, every supported file under each folder (built sites too), each
/// folder the root of its files' ids, whatever the number of folders; two files with one id are
/// left for [`ingest`] to report. What the readers' tests and tools use; `cairn index` lists
/// its inputs with [`collect`].
pub fn collect_files(inputs: &[PathBuf], exclude: &GlobSet) -> Result<Collected> {
    list(inputs, exclude, None)
}

/// [`collect`] with `options`, or [`collect_files`] without.
fn list(
    inputs: &[PathBuf],
    exclude: &GlobSet,
    options: Option<&CollectOptions>,
) -> Result<Collected> {
    let cannot_read = |input: &Path, e: std::io::Error| Error::Ingest {
        path: input.display().to_string(),
        message: format!("cannot read it: {e}"),
    };
    let metas = inputs
        .iter()
        .map(|input| std::fs::metadata(input).map_err(|e| cannot_read(input, e)))
        .collect::<Result<Vec<_>>>()?;
    // With several input folders, each keeps its name in its files' ids and URLs.
    let named = options.is_some() && metas.iter().filter(|m| m.is_dir()).count() > 1;
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut sites = Vec::new();
    for (input, meta) in inputs.iter().zip(&metas) {
        if !meta.is_dir() {
            // A file named by a relative path keeps that path as its id; an absolute one, its name.
            let root = if input.is_relative() {
                PathBuf::new()
            } else {
                input.parent().map(Path::to_path_buf).unwrap_or_default()
            };
            let file = InputFile {
                root,
                path: input.clone(),
            };
            if !excluded(exclude, &file, None) {
                match not_regular(&meta.file_type()) {
                    Some(why) => skipped.push((file, why)),
                    None => out.push(file),
                }
            }
            continue;
        }
        let (walked, root) = if named {
            folder_root(input).map_err(|e| cannot_read(input, e))?
        } else {
            (input.clone(), input.clone())
        };
        let mut files = Vec::new();
        let mut problems = Vec::new();
        for entry in walkdir::WalkDir::new(&walked).follow_links(true) {
            match entry {
                Ok(entry) if entry.file_type().is_dir() => {}
                Ok(entry) if has_supported_extension(entry.path()) => {
                    match not_regular(&entry.file_type()) {
                        // Never opened: a FIFO would wait for a writer, a device never end.
                        Some(why) => problems.push((entry.into_path(), why)),
                        None => files.push(entry.into_path()),
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let path = e.path().unwrap_or(&walked).to_path_buf();
                    // A broken link to, say, an image is none of our business.
                    if path.extension().is_none() || has_supported_extension(&path) {
                        problems.push((path, listing_problem(&e)));
                    }
                }
            }
        }
        files.sort();
        let file = |path: PathBuf| InputFile {
            root: root.clone(),
            path,
        };
        let mut files: Vec<InputFile> = files
            .into_iter()
            .map(file)
            .filter(|f| !excluded(exclude, f, Some(&walked)))
            .collect();
        let mut problems: Vec<(InputFile, String)> = problems
            .into_iter()
            .map(|(path, why)| (file(path), why))
            .filter(|(f, _)| !excluded(exclude, f, Some(&walked)))
            .collect();
        let built = options.is_some() && SITE_MARKERS.iter().any(|m| walked.join(m).is_file());
        if built {
            let is_page = |f: &InputFile| extension(&f.path).is_some_and(|e| PAGES.contains(&e.as_str()));
            let mut left_out: Vec<(String, usize)> = Vec::new();
            if !options.is_some_and(|o| o.all_files) {
                for f in files.iter().filter(|f| !is_page(f)) {
                    let ext = extension(&f.path).unwrap_or_default();
                    match left_out.iter_mut().find(|(e, _)| *e == ext) {
                        Some((_, n)) => *n += 1,
                        None => left_out.push((ext, 1)),
                    }
                }
                left_out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                files.retain(is_page);
                problems.retain(|(f, _)| is_page(f) || extension(&f.path).is_none());
            }
            sites.push(BuiltSite {
                folder: input.clone(),
                pages: files.iter().filter(|f| is_page(f)).count(),
                left_out,
            });
        }
        out.extend(files);
        skipped.extend(problems);
    }
    if options.is_some() {
        out = unique(out)?;
    }
    let skipped = skipped
        .into_iter()
        .map(|(file, message)| Error::Ingest {
            path: file.path.display().to_string(),
            message,
        })
        .collect();
    Ok(Collected {
        files: out,
        skipped,
        sites,
    })
}

/// Whether an `exclude` glob matches a file: its id, its path as listed, or (`folder`, the input
/// folder it was found under) its path under that folder.
fn excluded(exclude: &GlobSet, file: &InputFile, folder: Option<&Path>) -> bool {
    exclude.is_match(file.relative())
        || exclude.is_match(&file.path)
        || folder.is_some_and(|folder| {
            let under = InputFile {
                root: folder.to_path_buf(),
                path: file.path.clone(),
            };
            exclude.is_match(under.relative())
        })
}

/// For one of several input folders: the path to walk it by and the root its files' ids are
/// relative to, its parent, so they keep the folder's name. A folder named without a name of
/// its own (`.`, `..`, `docs/..`) is walked by its full path, which has one.
fn folder_root(input: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    let walked = if input.file_name().is_some() {
        input.to_path_buf()
    } else {
        std::fs::canonicalize(input)?
    };
    let root = walked.parent().map(Path::to_path_buf).unwrap_or_else(|| walked.clone());
    Ok((walked, root))
}

/// The files, each id once: the same file listed twice (a folder and a file in it, both named)
/// is kept the first time; two files with one id (and so one URL) are an error naming both.
/// A JSONL file's documents take their ids from its records, so its own path does not count.
fn unique(files: Vec<InputFile>) -> Result<Vec<InputFile>> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<InputFile> = Vec::with_capacity(files.len());
    for file in files {
        if extension(&file.path).as_deref() == Some("jsonl") {
            out.push(file);
            continue;
        }
        match seen.entry(file.relative()) {
            Entry::Vacant(entry) => {
                entry.insert(out.len());
                out.push(file);
            }
            Entry::Occupied(entry) => {
                let first = &out[*entry.get()];
                let same = |a: &Path, b: &Path| {
                    a == b
                        || std::fs::canonicalize(a)
                            .ok()
                            .is_some_and(|a| std::fs::canonicalize(b).ok() == Some(a))
                };
                if same(&first.path, &file.path) {
                    continue;
                }
                return Err(Error::Ingest {
                    path: file.path.display().to_string(),
                    message: format!(
                        "its id and URL would be {:?}, as {}'s are: two inputs give them the same path; index folders with different names (such as their parent folders), or leave one out with --exclude",
                        entry.key(),
                        first.path.display()
                    ),
                });
            }
        }
    }
    Ok(out)
}

/// Why walkdir could not list a path, in words.
fn listing_problem(e: &walkdir::Error) -> String {
    if let Some(ancestor) = e.loop_ancestor() {
        return format!(
            "a symbolic link back to {}, a loop; not followed",
            ancestor.display()
        );
    }
    let path = e.path().unwrap_or(Path::new(""));
    let missing = std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    match std::fs::read_link(path) {
        Ok(_) if link_loops(path) => "a symbolic link loop; not followed".into(),
        Ok(target) if missing => format!(
            "a symbolic link to {}, which does not exist",
            target.display()
        ),
        _ => format!(
            "cannot read it: {}",
            e.io_error()
                .map_or_else(|| e.to_string(), ToString::to_string)
        ),
    }
}

/// Whether following the symbolic link at `path` comes back to a link it passed, or takes more
/// hops than Linux allows (40): what the system reports as "too many levels of symbolic links",
/// found by walking the links, which reads the same on every platform.
fn link_loops(path: &Path) -> bool {
    let mut passed = std::collections::HashSet::new();
    let mut at = path.to_path_buf();
    while let Ok(target) = std::fs::read_link(&at) {
        if !passed.insert(at.clone()) || passed.len() > 40 {
            return true;
        }
        at = at.parent().unwrap_or(Path::new("")).join(target);
    }
    false
}

/// Why a path that is neither a file nor a folder is skipped, or None for a regular file. Such a
/// path is never opened: opening a FIFO waits for a writer, and a device such as `/dev/zero`
/// never ends.
fn not_regular(kind: &std::fs::FileType) -> Option<String> {
    if kind.is_file() {
        return None;
    }
    #[cfg(unix)]
    let what = {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            "a FIFO, a named pipe: reading it would wait for a writer"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else {
            "a special file"
        }
    };
    #[cfg(not(unix))]
    let what = "a special file";
    Some(format!("not a regular file ({what})"))
}

fn has_supported_extension(path: &Path) -> bool {
    extension(path).is_some_and(|e| EXTENSIONS.contains(&e.as_str()))
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

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

/// The largest Markdown, HTML or text file cairn reads, and the longest JSONL record: 64 MiB.
/// The longest real pages are a few megabytes (a book's one-page `print.html`, the longest
/// Wikipedia article), while a reader holds several copies of a file's text at once (its bytes,
/// the decoded text, a parsed tree, the chunks), one file on each of rayon's threads; so no real
/// site meets the limit, and a build's memory stays bounded whatever the inputs hold.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The largest PDF cairn reads: 256 MiB. A PDF's bytes are mostly images and fonts, which are
/// never decoded, so an illustrated manual is far larger than its text.
pub const MAX_PDF_BYTES: u64 = 256 << 20;

/// A size in MiB, for a message.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

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

const BINARY: &str = "looks like a binary file, not text";

/// A text file's characters. The encoding is the one its byte order mark names; else, for
/// HTML, the one its `<meta charset>` declares; else UTF-8 when the bytes are UTF-8; else
/// chardetng's guess (a legacy encoding such as windows-1252). A file that looks binary is
/// refused.
fn decode(bytes: &[u8], html: bool) -> std::result::Result<String, String> {
    let bom = Encoding::for_bom(bytes);
    // UTF-16 is full of NUL bytes; any other text is not.
    if !bom.is_some_and(|(encoding, _)| encoding != UTF_8) && looks_binary(bytes) {
        return Err(BINARY.into());
    }
    let (encoding, bom_length) = bom.unwrap_or_else(|| {
        let declared = if html {
            html::declared_encoding(bytes)
        } else {
            None
        };
        let encoding = declared.unwrap_or_else(|| {
            if std::str::from_utf8(bytes).is_ok() {
                UTF_8
            } else {
                let mut detector = chardetng::EncodingDetector::new();
                detector.feed(bytes, true);
                detector.guess(None, true)
            }
        });
        (encoding, 0)
    });
    Ok(encoding
        .decode_without_bom_handling(&bytes[bom_length..])
        .0
        .into_owned())
}

/// Whether the first 8 KiB hold a NUL byte, or more than one control character in ten (other
/// than tab, line feed, form feed and carriage return): no text encoding makes those.
fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    let controls = head
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0c | b'\r')) || b == 0x7f)
        .count();
    head.contains(&0) || controls * 10 > head.len()
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

/// A file's chunks, with line numbers from its own text (and pages, for paged sources).
fn chunk_file(
    sections: &[crate::chunk::Section],
    title: &str,
    source: &str,
    options: &IngestOptions,
) -> Vec<Chunk> {
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

fn file_stem(file: &InputFile) -> String {
    file.path.file_stem().map(lossless).unwrap_or_default()
}

/// Where a file's document came from, for messages.
fn origin(file: &InputFile) -> String {
    file.path.display().to_string()
}
