//! JSONL records, one document a line: `{"_id" or "id", "title", "text", "url"?, "metadata"?}`,
//! as in a BEIR `corpus.jsonl`. A line that is not such a record is reported and skipped.

use serde::Deserialize;
use serde_json::Value;

use super::{dates, finish_chunks, title_only_chunk, IngestOptions, InputFile, SourceDocument};
use crate::chunk::{chunk_sections, Block, Section};
use crate::error::Error;
use crate::hit::DocType;
use crate::index::Document;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(alias = "_id")]
    id: Option<Value>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    metadata: Option<Value>,
    #[serde(default, alias = "created", alias = "date")]
    created_at: Option<String>,
    #[serde(default, alias = "updated")]
    updated_at: Option<String>,
}

pub fn read(file: &InputFile, source: &str, options: &IngestOptions) -> (Vec<SourceDocument>, Vec<Error>) {
    let mut documents = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let line_number = i as u32 + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| Error::Ingest { path: format!("{}:{line_number}", file.path.display()), message };
        let record: Record = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(e) => {
                errors.push(fail(format!("not a JSON record: {e}")));
                continue;
            }
        };
        let id = match record.id {
            Some(Value::String(s)) if !s.is_empty() => s,
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                errors.push(fail("the record has no \"_id\" or \"id\" (a string or number)".into()));
                continue;
            }
        };
        let text = record.text.unwrap_or_default();
        let sections = [Section { heading_path: Vec::new(), anchor: None, blocks: vec![Block::verbatim(text, 0)] }];
        let title = record.title.unwrap_or_default();
        let mut chunks = finish_chunks(chunk_sections(&sections, &title, &options.chunk_limit), &|_| line_number);
        if chunks.is_empty() && !title.trim().is_empty() {
            chunks.push(title_only_chunk(line_number));
        }
        documents.push(SourceDocument {
            document: Document {
                id,
                doc_type: DocType::Jsonl,
                title,
                url: record.url,
                metadata: record.metadata.filter(|m| !m.is_null()).map(|m| m.to_string()),
                created: record.created_at.as_deref().and_then(dates::parse),
                updated: record.updated_at.as_deref().or(record.created_at.as_deref()).and_then(dates::parse),
            },
            chunks,
            links: Vec::new(),
        });
    }
    (documents, errors)
}
