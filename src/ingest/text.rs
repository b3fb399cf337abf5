//! Plain text: paragraphs (separated by blank lines) are the blocks; the title is the file name.

use super::{chunk_file, file_stem, file_url, origin, IngestOptions, InputFile, SourceDocument};
use crate::chunk::{Block, Section};
use crate::hit::DocType;
use crate::index::Document;

pub fn read(file: &InputFile, source: &str, options: &IngestOptions) -> SourceDocument {
    let mut blocks = Vec::new();
    let mut start: Option<usize> = None;
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        if line.trim().is_empty() {
            if let Some(s) = start.take() {
                blocks.push(Block::verbatim(source[s..offset].to_string(), s as u64));
            }
        } else if start.is_none() {
            start = Some(offset);
        }
        offset += line.len();
    }
    if let Some(s) = start {
        blocks.push(Block::verbatim(source[s..].to_string(), s as u64));
    }
    let sections = [Section {
        heading_path: Vec::new(),
        anchor: None,
        blocks,
    }];
    let title = file_stem(file);
    let chunks = chunk_file(&sections, &title, source, options);
    SourceDocument {
        document: Document {
            id: file.relative(),
            doc_type: DocType::Text,
            title,
            url: file_url(file, options),
            ..Document::default()
        },
        chunks,
        links: Vec::new(),
        origin: origin(file),
        language: None,
    }
}
