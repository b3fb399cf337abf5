//! Native: searching a fragmented index in a folder, fetching fragments from its packs.

use std::path::{Path, PathBuf};

use super::{Fragmented, Step};
use crate::error::{Error, Result};
use crate::fragment::{META_FILE, PACK_DIR};
use crate::search::Need;
use crate::search::Source;

/// A fragmented index read from a folder, and the bytes and fetch rounds it has read.
pub struct Folder {
    pub dir: PathBuf,
    pub index: Fragmented,
    pub bytes: u64,
    pub rounds: u32,
}

impl Folder {
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join(META_FILE);
        let bytes = read_bounded(&path, super::MAX_META as u64)?;
        let index = Fragmented::open(&bytes)?;
        Ok(Folder {
            dir: dir.to_path_buf(),
            index,
            bytes: bytes.len() as u64,
            rounds: 0,
        })
    }

    /// Takes `step`s (a search of `search::answer`), fetching what each needs from the packs,
    /// until one answers.
    pub fn run<T>(
        &mut self,
        reranker: Option<&dyn crate::search::CrossEncoder>,
        step: impl Fn(&Fragmented) -> Result<Step<T>>,
    ) -> Result<T> {
        loop {
            match step(&self.index)? {
                Step::Done(answer) => return Ok(answer),
                Step::Need(Need {
                    fragments,
                    records,
                    rows,
                }) => {
                    self.rounds += 1;
                    for f in fragments {
                        let slot = self.read(f, None)?;
                        self.index.add_slot(f, &slot)?;
                    }
                    for (f, r) in records {
                        let bytes = self.read(f, Some(r))?;
                        self.index.add_record(f, r, &bytes)?;
                    }
                    for r in rows {
                        let what = format!("static row {}", r.row);
                        let bytes = self.read_range(&r.pack, r.offset, r.length, &what)?;
                        self.index.add_static_row(r.row, &bytes)?;
                    }
                }
                Step::Score(r) => {
                    let reranker = reranker.ok_or_else(|| crate::search::not_loaded(&r.model))?;
                    let texts: Vec<&str> = r.texts.iter().map(String::as_str).collect();
                    let scores = reranker.relevance(&r.query, &texts)?;
                    self.index
                        .add_rerank_scores(&r.model, &r.query, &r.chunks, &scores)?;
                }
            }
        }
    }

    /// The whole index back from its fragments, with what a rebuild reuses: documents (each
    /// summary as the single file stores it), chunks, links and vectors (the records' int8
    /// bytes), and no postings (it is not for searching).
    pub fn read_index(&mut self) -> Result<crate::index::Index> {
        use crate::index::vector::{Precision, VectorIndex};
        use crate::index::{folded_text, summary_chars, Index};
        let meta = self.index.meta().clone();
        let text = meta.text_fragments();
        for f in text.clone() {
            let slot = self.read(f, None)?;
            self.index.add_slot(f, &slot)?;
        }
        let first_links = meta.links_start();
        let link_fragments = first_links..first_links + meta.link_documents.len() as u32;
        for f in link_fragments.clone() {
            let slot = self.read(f, None)?;
            self.index.add_slot(f, &slot)?;
        }
        let index = &self.index;
        let mut documents = vec![None; meta.document_chunks.len()];
        let mut chunks = Vec::with_capacity(index.chunk_count());
        for f in text {
            let fragment = &index.text[&f];
            chunks.extend(fragment.chunks.iter().cloned());
            for (d, document) in &fragment.documents {
                documents[*d as usize].get_or_insert_with(|| document.clone());
            }
        }
        // Each link from the fragment of the document it leaves.
        let mut links = Vec::new();
        for f in link_fragments {
            let fragment = &index.links[&f];
            let covered = fragment.first_document
                ..fragment.first_document + meta.link_documents[(f - first_links) as usize];
            links.extend(
                fragment
                    .links
                    .iter()
                    .filter(|l| covered.contains(&l.from))
                    .cloned(),
            );
        }
        links.sort_by_key(|l| (l.from, l.to));
        let mut documents: Vec<_> = documents
            .into_iter()
            .map(|d| d.ok_or_else(|| super::damaged("a document is in no text fragment".into())))
            .collect::<Result<_>>()?;
        // A document short enough to be its own summary stores none; its fragments hold
        // its text resolved.
        for (d, document) in documents.iter_mut().enumerate() {
            let start = index.first_chunk[d] as usize;
            let own = &chunks[start..start + meta.document_chunks[d] as usize];
            let text = folded_text(own);
            if document.summary.as_deref() == Some(text.as_str())
                && text.len() <= summary_chars::MAX
            {
                document.summary = None;
            }
        }
        let vectors = match &meta.vectors {
            None => None,
            Some(v) => {
                let dim = v.model.dimension as usize;
                let mut flat = vec![0f32; chunks.len() * dim];
                for p in 0..v.partitions {
                    let (partition, records) =
                        (meta.partition_fragment(p), meta.records_fragment(p));
                    let slot = self.read(partition, None)?;
                    self.index.add_slot(partition, &slot)?;
                    let bytes = self.read(records, None)?;
                    let size = self.index.record_length();
                    let mut chunk = 0usize;
                    let gaps = self.index.partitions[&partition].chunk_gaps.clone();
                    for (r, gap) in gaps.iter().enumerate() {
                        chunk += *gap as usize;
                        let record = bytes.get(r * size..(r + 1) * size).unwrap_or(&[]);
                        self.index.add_record(records, r as u32, record)?;
                        let (values, scale) = &self.index.records[&(records, r as u32)];
                        for (out, &x) in flat[chunk * dim..(chunk + 1) * dim].iter_mut().zip(values)
                        {
                            *out = x as f32 * scale;
                        }
                    }
                }
                Some(VectorIndex::flat(v.model.clone(), flat, Precision::Int8))
            }
        };
        let lexical = self.index.lexical(&[], &Default::default());
        Ok(Index::new(
            meta.settings.clone(),
            documents,
            chunks,
            links,
            lexical,
            vectors,
        ))
    }

    /// Fragment `fragment`'s slot as its pack holds it (raw for vector records), or one of
    /// its records; what was read is counted in `bytes`.
    fn read(&mut self, fragment: u32, record: Option<u32>) -> Result<Vec<u8>> {
        let (pack, mut offset, mut length) = self.index.address(fragment).ok_or_else(|| {
            Error::InvalidIndex(format!("fragment {fragment} is not in the meta file"))
        })?;
        let mut what = format!("fragment {fragment}");
        if let Some(r) = record {
            let size = self.index.record_length() as u32;
            offset += r as u64 * size as u64;
            length = size;
            what = format!("vector record {r} of {what}");
        }
        self.read_range(&pack.to_string(), offset, length, &what)
    }

    /// `length` bytes of pack `pack` from `offset`, `what` naming them in errors; counted in
    /// `bytes`.
    fn read_range(&mut self, pack: &str, offset: u64, length: u32, what: &str) -> Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.dir.join(PACK_DIR).join(pack);
        let damaged = |why: String| {
            super::damaged(format!(
                "cannot read {what} ({length} bytes at {offset}) from {}: {why}",
                path.display()
            ))
        };
        let mut file = std::fs::File::open(&path).map_err(|e| damaged(e.to_string()))?;
        let size = file.metadata().map_err(|e| damaged(e.to_string()))?.len();
        if offset.saturating_add(length as u64) > size {
            return Err(damaged(format!("the file has only {size} bytes")));
        }
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| damaged(e.to_string()))?;
        let mut bytes = vec![0u8; length as usize];
        file.read_exact(&mut bytes)
            .map_err(|e| damaged(e.to_string()))?;
        self.bytes += bytes.len() as u64;
        Ok(bytes)
    }
}

/// The file at `path`, refused unread when it is over `limit` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let size = std::fs::metadata(path)
        .map_err(|e| Error::InvalidIndex(format!("cannot read {}: {e}", path.display())))?
        .len();
    if size > limit {
        return Err(Error::InvalidIndex(format!(
            "{} has {size} bytes, more than the {limit} it may have; it is not a cairn meta file, build the index again",
            path.display()
        )));
    }
    Ok(std::fs::read(path)?)
}
