//! A fragmented index as a search `Source`: its meta opened and checked, the fragments and
//! vector records added as the shell fetches them (each decoded, bounded and checked against
//! the meta before it is held), and what the engine reads of them: term and word shards as a
//! lexical index, the vector side's partitions (binary codes scanned, the best re-scored with
//! their int8 records), field values, dates, and the text of the chunks shown as a small
//! `Index`. Lexical scores are the single file's to the bit (term shards carry each posting's
//! length byte, the meta the document table). `native::Folder` reads the packs from a folder.

use std::collections::HashMap;
use std::sync::Arc;

use super::{
    Address, Centroids, Fragment, LinksFragment, Meta, Partition, Payload, TermShard, TextFragment,
    WordShard, FRAGMENT_MAGIC, META_MAGIC,
};
use crate::error::{Error, Result};
use crate::index::format::{lengths_in_range, settings_in_range};
use crate::index::lexical::{term_idfs, Documents};
use crate::order;
use crate::search;
pub use crate::search::source::Step;
use crate::search::Need;
use crate::store::envelope::{gunzip, open};
use crate::store::rows::StaticTable;

/// The most chunks a fragmented index may have: the loader keeps a table a chunk (4 bytes), and
/// a search one more, so a crafted meta can cost at most 64 MB each (a 100k-page site has about
/// a million chunks).
pub const MAX_CHUNKS: u64 = 1 << 24;
/// The most a meta file may inflate to, for each byte of it, and in all (`META_FLOOR` more for
/// small ones): real ones inflate 1.3 to 4 times, a very repetitive site's up to about 25, and
/// a gzip bomb is refused before it costs more than this.
pub const META_RATIO: usize = 64;
pub const META_FLOOR: usize = 1 << 20;
pub const MAX_META: usize = 256 << 20;
/// How many chunks a meta may count for each byte of it (inflated): real ones count under 3
/// (each chunk is in the document or text tables; a site of many tiny sections, in the tens),
/// so a small meta cannot make a reader build tables for millions of chunks it does not have.
pub const CHUNKS_PER_META_BYTE: u64 = 64;

/// A fragmented index: its meta, and the fragments added so far.
pub struct Fragmented {
    meta: Meta,
    /// Each text fragment's first chunk, and where each fragment is (from the meta).
    text_starts: Vec<u32>,
    /// Each links fragment's first document (from the meta).
    link_starts: Vec<u32>,
    addresses: Vec<Address>,
    /// Each pack's length in bytes (its fragments end to end).
    pack_lengths: Vec<u64>,
    /// The document table BM25 reads (every chunk's document, each document's length), shared
    /// by every search's lexical index; and each document's first chunk (from the meta).
    documents: Arc<Documents>,
    first_chunk: Vec<u32>,
    terms: HashMap<u32, TermShard>,
    words: HashMap<u32, WordShard>,
    text: HashMap<u32, TextFragment>,
    links: HashMap<u32, LinksFragment>,
    centroids: Option<Centroids>,
    partitions: HashMap<u32, Partition>,
    /// Vector records added: (records fragment, record) → int8 components and scale.
    records: HashMap<(u32, u32), (Vec<i8>, f32)>,
    /// The static tier, with the rows added so far.
    statics: Option<StaticTable>,
    /// The filterable fields' values added: field fragment → (document, value), by document.
    fields: HashMap<u32, Vec<(u32, serde_json::Value)>>,
    /// The dated documents' dates (the dates fragment, once added), by document.
    dates: Option<Vec<(u32, i64)>>,
    /// The cross-encoder's scores added (`add_rerank_scores`): (model, query, the chunks it
    /// scored together) and their scores, the last few.
    rerank_scores: Vec<(RerankKey, Vec<f32>)>,
}

/// What the cross-encoder's scores are of: its name, the query, the chunks scored together.
type RerankKey = (String, String, Vec<u32>);

/// Fragment `number` from its bytes (gzip undone): its envelope opened and its payload decoded,
/// not yet checked against a meta (`Fragmented::add` does that).
pub fn decode(number: u32, bytes: &[u8]) -> Result<Fragment> {
    let name = format!("fragment {number}");
    let payload = open(FRAGMENT_MAGIC, bytes, &name)?;
    let fragment: Fragment = postcard::from_bytes(payload)
        .map_err(|e| damaged(format!("{name} cannot be decoded ({e})")))?;
    if fragment.number != number {
        return Err(damaged(format!(
            "{name} holds fragment {} instead",
            fragment.number
        )));
    }
    Ok(fragment)
}

pub(super) fn damaged(what: String) -> Error {
    Error::InvalidIndex(format!(
        "{what}; the fragmented index is damaged or was only partly uploaded: build the index again (`cairn index --layout fragments`) and upload all of it"
    ))
}

impl Fragmented {
    /// Opens a fragmented index from its meta file as stored (gzip), inflated to at most
    /// `META_RATIO` times its size (and `META_FLOOR`).
    pub fn open(file: &[u8]) -> Result<Self> {
        let limit = file
            .len()
            .saturating_mul(META_RATIO)
            .saturating_add(META_FLOOR)
            .min(MAX_META);
        Self::from_envelope(&gunzip(file, limit, "the meta file")?)
    }

    /// Opens a fragmented index from its meta file's envelope (gzip undone).
    pub fn from_envelope(bytes: &[u8]) -> Result<Self> {
        let payload = open(META_MAGIC, bytes, "fragmented index meta")?;
        let meta: Meta = postcard::from_bytes(payload).map_err(|e| {
            Error::InvalidIndex(format!(
                "the meta file cannot be decoded ({e}); build the index again with this version of cairn"
            ))
        })?;
        let chunks = meta.document_chunks.iter().map(|&n| n as u64).sum::<u64>();
        let held = (payload.len() as u64)
            .saturating_mul(CHUNKS_PER_META_BYTE)
            .max(1 << 16);
        if chunks > MAX_CHUNKS.min(held) {
            return Err(damaged(format!(
                "the meta file counts {chunks} chunks, more than the {} a meta of {} bytes may count",
                MAX_CHUNKS.min(held),
                payload.len()
            )));
        }
        settings_in_range(&meta.settings)
            .and_then(|()| {
                lengths_in_range(
                    meta.average_chunk_length,
                    meta.average_document_length,
                    meta.terms.len() as u64,
                )
            })
            .map_err(|m| damaged(format!("the meta file's {m}")))?;
        if meta.max_inflated as u64 > crate::store::envelope::MAX_INFLATED {
            return Err(damaged(format!(
                "the meta file says a fragment inflates to {} bytes",
                meta.max_inflated
            )));
        }
        let fragments = meta.fragment_lengths.len() as u64;
        let expected = meta.terms.len() as u64
            + meta.words.len() as u64
            + meta.text_chunks.len() as u64
            + meta
                .vectors
                .as_ref()
                .map_or(0, |v| 1 + 2 * v.partitions as u64)
            + meta.fields.len() as u64
            + meta.dates as u64
            + meta.link_documents.len() as u64;
        if meta.document_lengths.len() != meta.document_chunks.len()
            || fragments != expected
            || meta.pack_fragments.len() != meta.packs.len()
            || meta.pack_fragments.iter().map(|&n| n as u64).sum::<u64>() != fragments
            || meta.terms.windows(2).any(|w| w[0] >= w[1])
            || meta.term_ids.len() != meta.terms.len()
            || meta.term_ids.first().is_some_and(|&t| t != 0)
            || meta.term_ids.windows(2).any(|w| w[0] >= w[1])
            || meta.statics.as_ref().is_some_and(|rows| {
                meta.vectors.as_ref().map(|v| v.model.dimension) != Some(rows.dimension)
                    || rows.validate(rows.present.len() * 8).is_err()
            })
            || meta.words.windows(2).any(|w| w[0] >= w[1])
            || meta.text_chunks.contains(&0)
            || meta.text_chunks.iter().map(|&n| n as u64).sum::<u64>() != chunks
            || meta.packs.iter().any(|p| !super::is_pack_name(p))
            || meta.vectors.as_ref().is_some_and(|v| {
                v.model.dimension == 0
                    || v.model.dimension > 1 << 16
                    || v.partitions == 0
                    || v.partitions as u64 > chunks
                    || v.scan_codes == 0
            })
            || meta.fields.windows(2).any(|w| w[0] >= w[1])
            || meta.link_documents.contains(&0)
            || (!meta.link_documents.is_empty()
                && meta.link_documents.iter().map(|&n| n as u64).sum::<u64>()
                    != meta.document_chunks.len() as u64)
        {
            return Err(damaged("the meta file's tables do not agree".into()));
        }
        let chunks = chunks as usize;
        // Each text fragment's first chunk and links fragment's first document (their counts'
        // sums were checked above).
        let starts = |counts: &[u32]| -> Vec<u32> {
            counts
                .iter()
                .scan(0u32, |next, &n| Some(std::mem::replace(next, *next + n)))
                .collect()
        };
        let (text_starts, link_starts) = (starts(&meta.text_chunks), starts(&meta.link_documents));
        let mut addresses = Vec::with_capacity(meta.fragment_lengths.len());
        let mut pack_lengths = Vec::with_capacity(meta.packs.len());
        let mut lengths = meta.fragment_lengths.iter().enumerate();
        let text = meta.text_fragments();
        for (pack, &n) in meta.pack_fragments.iter().enumerate() {
            let mut offset = 0u64;
            for (number, &length) in lengths.by_ref().take(n as usize) {
                let length = if text.contains(&(number as u32)) {
                    u32::try_from(length as u64 * super::TEXT_UNIT as u64)
                        .map_err(|_| damaged(format!("fragment {number}'s length is too large")))?
                } else {
                    length
                };
                addresses.push(Address {
                    pack: pack as u32,
                    offset,
                    length,
                });
                offset += length as u64;
            }
            pack_lengths.push(offset);
        }
        let mut of_chunk = Vec::with_capacity(chunks);
        let mut first_chunk = Vec::with_capacity(meta.document_chunks.len());
        for (d, &n) in meta.document_chunks.iter().enumerate() {
            first_chunk.push(of_chunk.len() as u32);
            of_chunk.extend(std::iter::repeat_n(d as u32, n as usize));
        }
        let documents = Arc::new(Documents {
            of_chunk,
            lengths: meta.document_lengths.clone(),
            average_length: meta.average_document_length,
        });
        Ok(Fragmented {
            statics: meta.statics.clone().map(StaticTable::new),
            meta,
            text_starts,
            link_starts,
            addresses,
            pack_lengths,
            documents,
            first_chunk,
            terms: HashMap::new(),
            words: HashMap::new(),
            text: HashMap::new(),
            links: HashMap::new(),
            centroids: None,
            partitions: HashMap::new(),
            records: HashMap::new(),
            fields: HashMap::new(),
            dates: None,
            rerank_scores: Vec::new(),
        })
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// A search's step as the shells hand it on: its answer (put in a `FragmentStep` by
    /// `Step::map`), or where each fragment needed is.
    pub fn step(&self, step: Step<super::FragmentStep>) -> super::FragmentStep {
        match step {
            Step::Done(answer) => answer,
            Step::Need(Need {
                fragments,
                records,
                rows,
            }) => {
                let record_length = self.record_length() as u32;
                let request = |f: u32, record: Option<u32>| {
                    let (pack, offset, length) = self.address(f)?;
                    Some(super::FragmentRequest {
                        fragment: f,
                        record,
                        row: None,
                        pack: pack.to_string(),
                        offset: offset + record.map_or(0, |r| r as u64 * record_length as u64),
                        length: if record.is_some() {
                            record_length
                        } else {
                            length
                        },
                        pack_length: self.pack_lengths[self.addresses[f as usize].pack as usize],
                    })
                };
                super::FragmentStep {
                    need: Some(
                        fragments
                            .into_iter()
                            .filter_map(|f| request(f, None))
                            .chain(records.into_iter().filter_map(|(f, r)| request(f, Some(r))))
                            .chain(rows.into_iter().map(|r| super::FragmentRequest {
                                fragment: 0,
                                record: None,
                                row: Some(r.row),
                                pack: r.pack,
                                offset: r.offset,
                                length: r.length,
                                pack_length: r.pack_length,
                            }))
                            .collect(),
                    ),
                    ..Default::default()
                }
            }
            Step::Score(request) => super::FragmentStep {
                rerank: Some(request),
                ..Default::default()
            },
        }
    }

    /// Adds static row `row` from its record's bytes, checking them.
    pub fn add_static_row(&mut self, row: u32, bytes: &[u8]) -> Result<()> {
        match &mut self.statics {
            Some(table) => table.add(row, bytes),
            None => Err(damaged(format!(
                "static row {row} was given, but the index has no static tier"
            ))),
        }
    }

    /// The text fragment that holds chunk `chunk`.
    pub fn text_fragment(&self, chunk: u32) -> u32 {
        let i = self
            .text_starts
            .partition_point(|&c| c <= chunk)
            .saturating_sub(1);
        self.meta.text_start() + i as u32
    }

    /// The links fragment that holds document `doc`'s links, if the index has links.
    pub fn links_fragment(&self, doc: u32) -> Option<u32> {
        let i = self
            .link_starts
            .partition_point(|&d| d <= doc)
            .checked_sub(1)?;
        Some(self.meta.links_start() + i as u32)
    }

    /// Where fragment `number` is: (pack file name, offset, length).
    pub fn address(&self, number: u32) -> Option<(&str, u64, u32)> {
        let a = self.addresses.get(number as usize)?;
        Some((&self.meta.packs[a.pack as usize], a.offset, a.length))
    }

    /// How many fragments are loaded.
    pub fn loaded(&self) -> usize {
        self.terms.len()
            + self.words.len()
            + self.text.len()
            + self.links.len()
            + self.partitions.len()
            + self.records.len()
            + self.centroids.is_some() as usize
            + self.fields.len()
            + self.dates.is_some() as usize
    }

    /// Adds fragment `number` from its slot's bytes as its pack holds them (`address`): the
    /// slot undone and its gzip inflated to at most the meta's `max_inflated`, then `add`.
    pub fn add_slot(&mut self, number: u32, slot: &[u8]) -> Result<()> {
        let name = format!("fragment {number}");
        let Some(&Address { length, .. }) = self.addresses.get(number as usize) else {
            return Err(damaged(format!(
                "{name} was given, but the meta has {} fragments",
                self.addresses.len()
            )));
        };
        if slot.len() as u64 != length as u64 {
            return Err(damaged(format!(
                "{name} came as {} bytes, but its slot is {length}",
                slot.len()
            )));
        }
        let gzip = super::unslot(slot)
            .ok_or_else(|| damaged(format!("{name}'s slot does not end as it should")))?;
        let plain = gunzip(gzip, self.meta.max_inflated as usize, &name)?;
        self.add(number, &plain)
    }

    /// Adds fragment `number` from its envelope (gzip undone), checking that it is that fragment
    /// and agrees with the meta. A fragment that fails is not added, and nothing else changes.
    pub fn add(&mut self, number: u32, bytes: &[u8]) -> Result<()> {
        let fragment = decode(number, bytes)?;
        let name = format!("fragment {number}");
        let meta = &self.meta;
        let chunks = self.documents.of_chunk.len() as u64;
        let bad = |what: &str| {
            Err(damaged(format!(
                "{name} does not agree with the meta: {what}"
            )))
        };
        let text_start = meta.text_start();
        let centroids = meta.centroids_fragment();
        match fragment.payload {
            Payload::Terms(shard) if number < meta.words_start() => {
                let n = shard.terms.len();
                let next = meta.terms.get(number as usize + 1);
                if shard.terms.first() != Some(&meta.terms[number as usize])
                    || shard.terms.windows(2).any(|w| w[0] >= w[1])
                    || next.is_some_and(|next| shard.terms.last().is_some_and(|l| l >= next))
                    || shard.postings.len() != n
                    || shard.postings.iter().any(|p| {
                        p.freqs.len() != p.chunk_gaps.len()
                            || p.length_bytes.len() != p.chunk_gaps.len()
                            || (!p.chunk_gaps.is_empty()
                                && p.chunk_gaps.iter().map(|&g| g as u64).sum::<u64>() >= chunks)
                    })
                {
                    return bad("its terms or postings");
                }
                let mut shard = shard;
                (shard.idf, shard.document_idf) = shard
                    .postings
                    .iter()
                    .map(|p| term_idfs(p.chunks(), &self.documents))
                    .unzip();
                self.terms.insert(number, shard);
            }
            Payload::Words(shard) if (meta.words_start()..text_start).contains(&number) => {
                let i = (number - meta.words_start()) as usize;
                let next = meta.words.get(i + 1);
                let n = shard.words.len();
                if shard.words.first() != Some(&meta.words[i])
                    || shard.words.windows(2).any(|w| w[0] >= w[1])
                    || next.is_some_and(|next| shard.words.last().is_some_and(|l| l >= next))
                    || shard.terms.len() != n
                    || shard.frequencies.len() != n
                {
                    return bad("its words");
                }
                self.words.insert(number, shard);
            }
            Payload::Text(text) if meta.text_fragments().contains(&number) => {
                let i = (number - text_start) as usize;
                let end = self.text_starts[i] as u64 + meta.text_chunks[i] as u64;
                let docs = order::set(text.documents.iter().map(|(d, _)| *d));
                if text.first_chunk != self.text_starts[i]
                    || text.first_chunk as u64 + text.chunks.len() as u64 != end
                    || text.chunks.iter().enumerate().any(|(k, c)| {
                        self.documents.of_chunk[text.first_chunk as usize + k] != c.doc
                            || !docs.contains(&c.doc)
                    })
                    || docs.len() != text.documents.len()
                    || docs
                        .last()
                        .is_some_and(|&d| d as usize >= meta.document_chunks.len())
                {
                    return bad("its chunks or documents");
                }
                self.text.insert(number, text);
            }
            Payload::Centroids(c) if number == centroids => {
                let (k, dim) = self.vector_shape();
                let code_bytes = dim.div_ceil(8) as u64;
                if c.codes.len() as u64 != k as u64 * code_bytes
                    || c.mean.len() != dim
                    || c.sizes.len() != k
                    || !c.lengths.valid(k)
                    || c.mean.iter().any(|x| !x.is_finite())
                {
                    return bad("its centroids");
                }
                self.centroids = Some(c);
            }
            Payload::Partition(p) if number > centroids => {
                let (k, dim) = self.vector_shape();
                if number - centroids - 1 >= k as u32
                    || p.codes.len() as u64 != p.chunk_gaps.len() as u64 * dim.div_ceil(8) as u64
                    || !p.lengths.valid(p.chunk_gaps.len())
                    || p.centroid.len() != dim
                    || !p.centroid_scale.is_finite()
                    || (!p.chunk_gaps.is_empty()
                        && p.chunk_gaps.iter().map(|&g| g as u64).sum::<u64>() >= chunks)
                {
                    return bad("its vectors");
                }
                self.partitions.insert(number, p);
            }
            Payload::Field(f)
                if (meta.fields_start()..meta.fields_start() + meta.fields.len() as u32)
                    .contains(&number) =>
            {
                let documents = meta.document_chunks.len() as u32;
                let values: Option<Vec<serde_json::Value>> = f
                    .values
                    .iter()
                    .map(|v| serde_json::from_str(v).ok())
                    .collect();
                match values {
                    Some(values)
                        if values.len() == f.docs.len()
                            && f.docs.windows(2).all(|w| w[0] < w[1])
                            && f.docs.last().is_none_or(|&d| d < documents) =>
                    {
                        self.fields
                            .insert(number, f.docs.into_iter().zip(values).collect());
                    }
                    _ => return bad("its documents or values"),
                }
            }
            Payload::Dates(d) if Some(number) == meta.dates_fragment() => {
                let documents = meta.document_chunks.len() as u32;
                if d.docs.len() != d.unix_seconds.len()
                    || d.docs.windows(2).any(|w| w[0] >= w[1])
                    || d.docs.last().is_some_and(|&doc| doc >= documents)
                {
                    return bad("its documents or dates");
                }
                self.dates = Some(d.docs.into_iter().zip(d.unix_seconds).collect());
            }
            Payload::Links(l) if number >= meta.links_start() => {
                let i = (number - meta.links_start()) as usize;
                let Some(&first) = self.link_starts.get(i) else {
                    return bad("it is another kind of fragment");
                };
                let covered = first..first + meta.link_documents[i];
                let ends = order::set(l.linked.iter().map(|(d, _)| *d));
                if l.first_document != first
                    || ends.len() != l.linked.len()
                    || l.links.iter().any(|k| {
                        !(covered.contains(&k.from) || covered.contains(&k.to))
                            || !ends.contains(&k.from)
                            || !ends.contains(&k.to)
                    })
                    || ends
                        .last()
                        .is_some_and(|&d| d as usize >= meta.document_chunks.len())
                {
                    return bad("its links");
                }
                self.links.insert(number, l);
            }
            _ => return bad("it is another kind of fragment"),
        }
        Ok(())
    }

    /// Adds vector record `record` of records fragment `fragment` from its bytes, checking its
    /// length and checksum and that its partition has that many chunks.
    pub fn add_record(&mut self, fragment: u32, record: u32, bytes: &[u8]) -> Result<()> {
        let (k, dim) = self.vector_shape();
        let first = self.meta.records_fragment(0);
        let name = format!("vector record {record} of fragment {fragment}");
        if k == 0 || !(first..first + k as u32).contains(&fragment) {
            return Err(damaged(format!(
                "{name} was asked for, but that is not a records fragment"
            )));
        }
        let Some((values, scale)) =
            super::decode_record(bytes, dim, super::record_id(fragment, record))
        else {
            return Err(damaged(format!(
                "{name} is damaged or is another record's bytes (its length or checksum is wrong)"
            )));
        };
        self.records.insert((fragment, record), (values, scale));
        Ok(())
    }

    /// The length of one vector record.
    pub fn record_length(&self) -> usize {
        super::record_length(self.vector_shape().1)
    }

    fn vector_shape(&self) -> (usize, usize) {
        self.meta.vectors.as_ref().map_or((0, 0), |v| {
            (v.partitions as usize, v.model.dimension as usize)
        })
    }

    pub fn has_vectors(&self) -> bool {
        self.meta.vectors.is_some()
    }

    /// Adds the cross-encoder `model`'s scores of `chunks` for `query` (what a `Score` step asked
    /// for). The scores of the last few queries are kept.
    pub fn add_rerank_scores(
        &mut self,
        model: &str,
        query: &str,
        chunks: &[u32],
        scores: &[f32],
    ) -> Result<()> {
        if chunks.len() != scores.len()
            || chunks
                .iter()
                .any(|&c| c as usize >= self.documents.of_chunk.len())
            || scores.iter().any(|s| !s.is_finite())
        {
            return Err(Error::InvalidInput(format!(
                "{} rerank scores were given for {} chunks, or a chunk the index lacks, or a score that is not a number; give the cross-encoder's score of each text the search asked for",
                scores.len(),
                chunks.len()
            )));
        }
        if self.rerank_scores.len() >= 16 {
            self.rerank_scores.remove(0);
        }
        self.rerank_scores.push((
            (
                search::canonical_model(model),
                query.to_string(),
                chunks.to_vec(),
            ),
            scores.to_vec(),
        ));
        Ok(())
    }
}

#[cfg(not(browser))]
pub mod native;
mod source;
