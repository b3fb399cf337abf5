//! Finding the input files: folders walked, built sites read by their pages, exclusions, and
//! ids checked to be unique.

use std::collections::hash_map::{Entry, HashMap};
use std::path::{Path, PathBuf};

use globset::GlobSet;

use super::InputFile;
use crate::error::{Error, Result};

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

pub(super) const EXTENSIONS: &[&str] = &["md", "markdown", "html", "htm", "pdf", "txt", "jsonl"];

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
pub fn collect(
    inputs: &[PathBuf],
    exclude: &GlobSet,
    options: &CollectOptions,
) -> Result<Collected> {
    list(inputs, exclude, Some(options))
}

/// Lists the files to ingest, every supported file under each folder (built sites too), each
/// folder the root of its files' ids, whatever the number of folders; two files with one id are
/// left for [`ingest`](super::ingest) to report. What the readers' tests and tools use; `cairn
/// index` lists its inputs with [`collect`].
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
            let is_page =
                |f: &InputFile| extension(&f.path).is_some_and(|e| PAGES.contains(&e.as_str()));
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
    let root = walked
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| walked.clone());
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
pub(super) fn not_regular(kind: &std::fs::FileType) -> Option<String> {
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

pub(super) fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}
