//! PDF: text per page (pdf-extract). Pages are joined by a blank line into one text, whose
//! paragraphs are the blocks; each chunk knows the pages it spans, so a chunk that straddles a
//! page break says "45–46". pdf-extract can panic on damaged files; that is caught and becomes
//! this file's error, and the run goes on.

use super::{chunk_paged_file, file_stem, file_url, IngestOptions, InputFile, SourceDocument};
use crate::chunk::{Block, Section};
use crate::hit::DocType;
use crate::index::Document;

pub fn read(file: &InputFile, bytes: &[u8], options: &IngestOptions) -> Result<SourceDocument, String> {
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes))
        .map_err(|_| "the PDF is damaged (its text could not be read)".to_string())?
        .map_err(|e| format!("cannot read the PDF: {e}"))?;
    let mut text = String::new();
    let mut page_starts = Vec::with_capacity(pages.len());
    for page in &pages {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        page_starts.push(text.len() as u64);
        // Lines inside a paragraph are joined with spaces (same length, so offsets hold).
        text.push_str(page.trim_end());
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
    let sections = [Section { heading_path: Vec::new(), anchor: None, blocks }];
    let title = file_stem(file);
    let chunks = chunk_paged_file(&sections, &title, &text, options, Some(&page_starts));
    Ok(SourceDocument {
        document: Document {
            id: file.relative(),
            doc_type: DocType::Pdf,
            title,
            url: file_url(file, options),
            metadata: Some(serde_json::json!({ "pages": pages.len() }).to_string()),
            created: None,
            updated: None,
        },
        chunks,
        links: Vec::new(),
    })
}
