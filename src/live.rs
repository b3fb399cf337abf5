//! An index changed in place: the browser's mutable index (`SearchIndex.edit` in `wasm`).
//! Documents come as JSONL records (read by `ingest::records`, so they become the documents and
//! chunks `cairn index records.jsonl` makes), go by id, or replace those of the same id. Each
//! edit builds the index again with `build::build` from the kept documents' chunks and the new
//! ones, taking every vector the old index has for a chunk's text (`build::Previous`), so only
//! new chunks are embedded. A failed edit changes nothing: the caller keeps the old index.

use std::collections::HashSet;

use serde::Serialize;

use crate::build::{self, ChunkEmbedder, Previous, VectorOptions};
use crate::chunk::{ChunkLimit, TokenLimit};
use crate::embed::{Embedder, ModelFiles};
use crate::error::{Error, Result};
use crate::index::lexical::LexicalIndex;
use crate::index::vector::{GraphSettings, Precision, VectorIndex};
use crate::index::{DocLink, Index, IndexSettings};
use crate::ingest::{self, IngestOptions, SourceDocument};
use crate::store::rows::RowRequest;

/// What an edit did.
#[derive(Debug, Default, Serialize, tsify::Tsify)]
#[serde(rename_all = "camelCase")]
pub struct EditReport {
    /// Documents added under new ids.
    pub added: usize,
    /// Documents replaced by a record of their id (`update`).
    pub replaced: usize,
    pub removed: usize,
    /// Chunks embedded by this edit (the others kept their vectors).
    pub embedded: usize,
    pub document_count: usize,
    pub chunk_count: usize,
    /// What was ignored in records that were kept (a date that could not be read, ...).
    pub warnings: Vec<String>,
}

/// An empty index to add documents to; with a model (the files of a model folder `cairn index`
/// wrote, weights named `weights_file`), one whose documents are embedded by it, and which
/// records it as the model that embedded them.
pub fn empty(model: Option<(&Embedder, &ModelFiles, &str)>) -> Index {
    let settings = IndexSettings::default();
    let vectors = model.map(|(embedder, files, weights_file)| {
        // The browser's weights are the ones that embed: source and web are the same file.
        let identity = embedder.identity(files, (embedder.weights_sha256().into(), weights_file));
        VectorIndex::flat(identity, Vec::new(), Precision::default())
    });
    let lexical = LexicalIndex::build(settings.bm25, Vec::new());
    Index::new(
        settings,
        Vec::new(),
        Vec::new(),
        Vec::new(),
        lexical,
        vectors,
    )
}

/// The documents of `records` (JSONL text), chunked as `cairn index` chunks them for `index`
/// (its chunk size, and the model's window when it embeds). A record that cannot be read, or
/// an id given twice, is an error: an edit takes all of its records or none.
fn read_records(
    index: &Index,
    embedder: Option<&Embedder>,
    records: &str,
) -> Result<(Vec<SourceDocument>, Vec<String>)> {
    let counter = match (embedder, &index.vectors) {
        (Some(embedder), Some(_)) => Some(embedder.token_counter()?),
        _ => None,
    };
    let count = |text: &str| counter.as_ref().map_or(0, |c| c.count(text));
    let options = IngestOptions {
        chunk_limit: ChunkLimit {
            words: index.settings.chunk_words as usize,
            tokens: counter.as_ref().map(|c| TokenLimit {
                max: c.window(),
                count: &count,
            }),
        },
        base_url: String::new(),
    };
    let read = ingest::records(records, "records", &options);
    if let Some(problem) = read.skipped.first() {
        return Err(Error::InvalidInput(format!(
            "{problem}; nothing was changed (fix that record and add them again)"
        )));
    }
    let mut ids = HashSet::new();
    for source in &read.documents {
        if !ids.insert(source.document.id.as_str()) {
            return Err(Error::InvalidInput(format!(
                "the id {:?} is given twice; nothing was changed",
                source.document.id
            )));
        }
    }
    let warnings = read.warnings.iter().map(|w| w.to_string()).collect();
    Ok((read.documents, warnings))
}

/// The 8-bit model's word rows that embedding `records` needs and that are not loaded yet:
/// what a shell fetches (by range) before `edit`.
pub fn rows_needed(index: &Index, embedder: &Embedder, records: &str) -> Result<Vec<RowRequest>> {
    if index.vectors.is_none() {
        return Ok(Vec::new());
    }
    let (sources, _) = read_records(index, Some(embedder), records)?;
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for source in &sources {
        for chunk in &source.chunks {
            let text = crate::index::indexed_text(&source.document, chunk);
            for row in embedder.missing_rows(&text)? {
                if seen.insert(row.row) {
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
}

/// `index` with the documents `remove` names taken out and those of `records` put in. With
/// `replace`, a record whose id is in the index replaces that document; without, it is an
/// error. Ids in `remove` that are not in the index are ignored.
pub fn edit(
    index: &Index,
    embedder: Option<&Embedder>,
    records: &str,
    remove: &[String],
    replace: bool,
) -> Result<(Index, EditReport)> {
    let (added, warnings) = read_records(index, embedder, records)?;
    let remove: HashSet<&str> = remove.iter().map(String::as_str).collect();
    let mut report = EditReport {
        warnings,
        ..EditReport::default()
    };
    let new_ids: HashSet<&str> = added.iter().map(|s| s.document.id.as_str()).collect();
    for document in &index.documents {
        if new_ids.contains(document.id.as_str()) {
            if !replace {
                return Err(Error::InvalidInput(format!(
                    "a document with the id {:?} is already in the index; update it instead, or remove it first (nothing was changed)",
                    document.id
                )));
            }
            report.replaced += 1;
        } else if remove.contains(document.id.as_str()) {
            report.removed += 1;
        }
    }
    report.added = added.len() - report.replaced;

    // The kept documents, with their chunks as they are, then the new ones.
    let mut kept = Vec::new(); // old document number → new one
    let mut sources = Vec::with_capacity(index.documents.len() + added.len());
    for (d, document) in index.documents.iter().enumerate() {
        if remove.contains(document.id.as_str()) || new_ids.contains(document.id.as_str()) {
            kept.push(None);
            continue;
        }
        kept.push(Some(sources.len() as u32));
        sources.push(SourceDocument {
            document: document.clone(),
            chunks: index
                .chunks_of(d as u32)
                .map(|c| index.chunks[c as usize].clone())
                .collect(),
            links: Vec::new(),
            origin: document.id.clone(),
            language: None,
        });
    }
    sources.extend(added);

    let settings = index.settings.clone();
    let mut edited = match &index.vectors {
        None => build::build(sources, settings, None, |_, _| {})?,
        Some(vectors) => {
            let previous = Previous::of(index, &vectors.model);
            let no_model = NoModel(vectors.dimension());
            let options = VectorOptions {
                embedder: match embedder {
                    Some(embedder) => embedder,
                    None => &no_model,
                },
                identity: vectors.model.clone(),
                // The browser scans every vector (it builds no graph).
                graph_from: usize::MAX,
                graph: GraphSettings::default(),
                precision: vectors.precision(),
                previous: previous.as_ref(),
            };
            let edited = build::build(sources, settings, Some(options), |_, _| {})?;
            let reused = previous.as_ref().map_or(0, Previous::reused);
            report.embedded = edited.chunks.len() - reused;
            edited
        }
    };
    // Links between kept documents stay (records bring none of their own).
    let mut links: Vec<DocLink> = index
        .links
        .iter()
        .filter_map(|l| {
            Some(DocLink {
                from: kept[l.from as usize]?,
                to: kept[l.to as usize]?,
                ..l.clone()
            })
        })
        .collect();
    links.append(&mut edited.links);
    links.sort_by_key(|l| (l.from, l.to));
    links.dedup_by(|a, b| a.from == b.from && a.to == b.to);
    edited.links = links;
    report.document_count = edited.documents.len();
    report.chunk_count = edited.chunks.len();
    Ok((edited, report))
}

/// What embeds an edit of an index with vectors when no model is loaded: nothing (removing
/// documents needs no model; adding some says to load it).
struct NoModel(usize);

impl ChunkEmbedder for NoModel {
    fn dimension(&self) -> usize {
        self.0
    }
    fn embed(&self, _: &str) -> Result<Vec<f32>> {
        Err(Error::Model(
            "this index embeds its documents, and its model is not loaded; load the model first (nothing was changed)".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, text: &str) -> String {
        serde_json::json!({ "id": id, "title": id.to_uppercase(), "text": text }).to_string()
    }

    #[test]
    fn an_edit_gives_the_index_a_fresh_build_of_the_same_records_gives() {
        let (a, b, c) = (
            record("a", "granite cairns mark the trail"),
            record("b", "the river crossing floods in spring"),
            record("c", "a lantern for the night walk"),
        );
        let empty = empty(None);
        let (one, report) = edit(&empty, None, &format!("{a}\n{b}\n"), &[], false).unwrap();
        assert_eq!((report.added, report.document_count), (2, 2));
        let (two, report) = edit(&one, None, &c, &["b".into(), "zz".into()], false).unwrap();
        assert_eq!((report.added, report.removed), (1, 1));
        let (fresh, _) = edit(&empty, None, &format!("{a}\n{c}\n"), &[], false).unwrap();
        // The same documents, chunks and lexical index (a chunk's line is its record's in the
        // text it came in).
        assert_eq!(two.documents, fresh.documents);
        let texts = |i: &Index| {
            i.chunks
                .iter()
                .map(|c| (c.doc, c.text.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&two), texts(&fresh));
        let lexical = |i: &Index| postcard::to_allocvec(&i.lexical).unwrap();
        assert_eq!(lexical(&two), lexical(&fresh));

        // An id already in the index is refused without `replace`, and replaced with it.
        let Err(err) = edit(&two, None, &record("a", "new text"), &[], false) else {
            panic!("an id already in the index was added again")
        };
        assert!(err.to_string().contains("already in the index"), "{err}");
        let (three, report) = edit(&two, None, &record("a", "new text"), &[], true).unwrap();
        assert_eq!(
            (report.added, report.replaced, report.document_count),
            (0, 1, 2)
        );
        assert_eq!(three.documents[1].id, "a");
        // A bad record or an id given twice changes nothing.
        assert!(edit(&two, None, "{\"id\": 1", &[], false).is_err());
        assert!(edit(&two, None, &format!("{c}\n{c}"), &[], true).is_err());
    }
}
