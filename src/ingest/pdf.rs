//! PDF: text per page (pdf-extract). Pages are joined by a blank line into one text, whose
//! paragraphs are the blocks; each chunk knows the pages it spans, so a chunk that straddles a
//! page break says "45–46". pdf-extract can panic on damaged files; that is caught, without
//! printing it, and becomes this file's error ("the PDF is damaged"), and the run goes on. It
//! also recurses through a page's `Parent` chain and through forms drawn inside forms, where a
//! loop would overflow the stack (which no catch can stop), so those are followed first, with a
//! budget, and a PDF that loops is refused.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Once;

use pdf_extract::{
    content::Content, ConvertToFmt, Dictionary, Document, MediaBox, Object, ObjectId, OutputDev,
    OutputError, PlainTextOutput, Transform,
};

use super::{
    chunk_paged_file, file_stem, file_url, origin, IngestOptions, InputFile, SourceDocument,
};
use crate::chunk::{Block, Section};
use crate::hit::DocType;
use crate::index::Document as IndexDocument;

pub fn read(
    file: &InputFile,
    bytes: &[u8],
    options: &IngestOptions,
) -> Result<SourceDocument, String> {
    let pages = quietly(|| pages(bytes))
        .map_err(|panic| format!("the PDF is damaged (its text could not be read: {panic})"))??;
    let mut text = String::new();
    let mut page_starts = Vec::with_capacity(pages.len());
    for page in &pages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        page_starts.push(text.len() as u64);
        // Lines inside a paragraph are joined with spaces (same length, so offsets hold).
        text.push_str(page.trim());
    }
    let mut blocks = Vec::new();
    let mut offset = 0;
    for paragraph in text.split("\n\n") {
        let trimmed = paragraph.trim();
        if !trimmed.is_empty() {
            let start = offset + (paragraph.len() - paragraph.trim_start().len());
            blocks.push(Block::verbatim(trimmed.replace('\n', " "), start as u64));
        }
        offset += paragraph.len() + 2;
    }
    let sections = [Section {
        heading_path: Vec::new(),
        anchor: None,
        blocks,
    }];
    let title = file_stem(file);
    let chunks = chunk_paged_file(&sections, &title, &text, options, Some(&page_starts));
    Ok(SourceDocument {
        document: IndexDocument {
            id: file.relative(),
            doc_type: DocType::Pdf,
            title,
            url: file_url(file, options),
            metadata: Some(serde_json::json!({ "pages": pages.len() }).to_string()),
            ..IndexDocument::default()
        },
        chunks,
        links: Vec::new(),
        origin: origin(file),
        language: None,
    })
}

/// The text of each page, from one reading of the document.
fn pages(bytes: &[u8]) -> Result<Vec<String>, String> {
    let mut doc = Document::load_mem(bytes).map_err(|e| format!("cannot read the PDF: {e}"))?;
    if doc.is_encrypted() {
        doc.decrypt("").map_err(|e| {
            format!("the PDF is encrypted ({e}); cairn reads PDFs that open without a password")
        })?;
    }
    check_nesting(&doc)?;
    let text = Shared::default();
    let mut pages = Pages {
        inner: PlainTextOutput::new(text.clone()),
        text,
        starts: Vec::new(),
    };
    pdf_extract::output_doc(&doc, &mut pages).map_err(|e| format!("cannot read the PDF: {e}"))?;
    let text = pages.text.0.borrow();
    let ends = pages.starts.iter().skip(1).copied().chain([text.len()]);
    Ok(pages
        .starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| text[start..end].to_string())
        .collect())
}

const MAX_DEPTH: usize = 64;
const MAX_FORMS: usize = 100_000;

/// Climbs each page's `Parent` chain and follows the forms it draws (`Do`) as pdf-extract would,
/// failing where that would go deeper than [`MAX_DEPTH`] (a loop) or draw more than
/// [`MAX_FORMS`] forms (forms that draw each other many times over).
fn check_nesting(doc: &Document) -> Result<(), String> {
    let damaged = |what: &str| format!("the PDF is damaged ({what})");
    let mut drawn: HashMap<ObjectId, Vec<Vec<u8>>> = HashMap::new();
    let mut budget = MAX_FORMS;
    for page in doc.get_pages().into_values() {
        let mut resources = None;
        let mut node = doc.get_dictionary(page).ok();
        for depth in 0.. {
            let Some(dict) = node else { break };
            if depth == MAX_DEPTH {
                return Err(damaged("its page tree loops"));
            }
            resources = resources.or_else(|| dictionary(doc, dict, b"Resources"));
            node = dict
                .get(b"Parent")
                .and_then(Object::as_reference)
                .and_then(|id| doc.get_dictionary(id))
                .ok();
        }
        let Some(resources) = resources else { continue };
        let content = doc.get_page_content(page).unwrap_or_default();
        let mut stack: Vec<(&Dictionary, Vec<Vec<u8>>, usize)> =
            vec![(resources, names_drawn(&content), 0)];
        while let Some((resources, names, depth)) = stack.pop() {
            for name in names {
                let Some(form) = dictionary(doc, resources, b"XObject")
                    .and_then(|x| x.get(&name).and_then(Object::as_reference).ok())
                else {
                    continue;
                };
                let Ok(stream) = doc.get_object(form).and_then(Object::as_stream) else {
                    continue;
                };
                budget = budget
                    .checked_sub(1)
                    .ok_or_else(|| damaged("its forms draw each other too many times"))?;
                if depth == MAX_DEPTH {
                    return Err(damaged("its forms draw themselves"));
                }
                let inner = drawn
                    .entry(form)
                    .or_insert_with(|| {
                        names_drawn(
                            &stream
                                .decompressed_content()
                                .unwrap_or_else(|_| stream.content.clone()),
                        )
                    })
                    .clone();
                stack.push((
                    dictionary(doc, &stream.dict, b"Resources").unwrap_or(resources),
                    inner,
                    depth + 1,
                ));
            }
        }
    }
    Ok(())
}

/// The names of the XObjects a content stream draws.
fn names_drawn(content: &[u8]) -> Vec<Vec<u8>> {
    let operations = Content::decode(content)
        .map(|c| c.operations)
        .unwrap_or_default();
    operations
        .into_iter()
        .filter(|op| op.operator == "Do")
        .filter_map(|op| {
            op.operands
                .first()
                .and_then(|name| name.as_name().ok())
                .map(<[u8]>::to_vec)
        })
        .collect()
}

/// A dictionary entry that is (or refers to) a dictionary.
fn dictionary<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    doc.dereference(dict.get(key).ok()?).ok()?.1.as_dict().ok()
}

/// pdf-extract's plain text, and where in it each page begins.
struct Pages {
    inner: PlainTextOutput<Shared>,
    text: Shared,
    starts: Vec<usize>,
}

#[derive(Clone, Default)]
struct Shared(Rc<RefCell<String>>);

impl std::fmt::Write for Shared {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.borrow_mut().push_str(s);
        Ok(())
    }
}

impl ConvertToFmt for Shared {
    type Writer = Shared;
    fn convert(self) -> Shared {
        self
    }
}

impl OutputDev for Pages {
    fn begin_page(
        &mut self,
        page: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.starts.push(self.text.0.borrow().len());
        self.inner.begin_page(page, media_box, art_box)
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, turning a panic into `Err(its message)`. The panic is not printed: a hook,
/// installed once, stays silent on a thread inside `quietly` and otherwise calls the hook that
/// was there before.
fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.get() {
                previous(info)
            }
        }));
    });
    let was = QUIET.replace(true);
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.set(was);
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned());
        message.unwrap_or_else(|| "a panic".into())
    })
}
