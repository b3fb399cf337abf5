//! A fragmented index as a search `Source`: its meta opened and checked, the fragments and
//! vector records added as the shell fetches them (each decoded, bounded and checked against
//! the meta before it is held), and what the engine reads of them: term and word shards as a
//! lexical index, the vector side's partitions (binary codes scanned, the best re-scored with
//! their int8 records), field values, dates, and the text of the chunks shown as a small
//! `Index`. Lexical scores are the single file's to the bit (term shards carry each posting's
//! length byte, the meta the document table). `native::Folder` reads the packs from a folder.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use super::{
    default_probes, Address, Centroids, CodeQuery, Fragment, LinkedDocument, Meta, Partition, Payload, TermShard, TextFragment,
    WordShard, FRAGMENT_MAGIC, META_MAGIC,
};
use crate::error::{Error, Result};
use crate::hit::{
    ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, SearchHit, SearchOptions,
};
use crate::store::rows::StaticTable;
use crate::index::format::{lengths_in_range, settings_in_range};
use crate::store::envelope::{gunzip, open};
use crate::index::lexical::{least_length, term_idfs, Documents, LexicalIndex, Postings};
use crate::index::vector::{dot, dot_i8, ScoredChunk};
use crate::index::{Chunk, DocLink, Document, Index, IndexSettings};
use crate::search::source::{Held, Need, Source, View};
use crate::order;
use crate::search::{self, answer, QueryContext};
pub use crate::search::source::Step;

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

/// How many of the binary scan's best candidates a query re-scores with their int8 records by
/// default, for each hit it asks for (`limit`), at most the pool: 50 at 10 hits, which find as much of the exact
/// top 10 as 100 did on real embeddings, for 20 kB less (`docs/benchmarks.md`). The rest of the
/// pool keeps its code estimates.
const RESCORE_PER_HIT: usize = 5;

/// A fragmented index: its meta, and the fragments added so far.
pub struct Fragmented {
    meta: Meta,
    /// Each text fragment's first chunk, and where each fragment is (from the meta).
    text_starts: Vec<u32>,
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
        return Err(damaged(format!("{name} holds fragment {} instead", fragment.number)));
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
        let limit = file.len().saturating_mul(META_RATIO).saturating_add(META_FLOOR).min(MAX_META);
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
        let held = (payload.len() as u64).saturating_mul(CHUNKS_PER_META_BYTE).max(1 << 16);
        if chunks > MAX_CHUNKS.min(held) {
            return Err(damaged(format!(
                "the meta file counts {chunks} chunks, more than the {} a meta of {} bytes may count",
                MAX_CHUNKS.min(held),
                payload.len()
            )));
        }
        settings_in_range(&meta.settings)
            .and_then(|()| {
                lengths_in_range(meta.average_chunk_length, meta.average_document_length, meta.terms.len() as u64)
            })
            .map_err(|m| damaged(format!("the meta file's {m}")))?;
        if meta.max_inflated as u64 > crate::store::envelope::MAX_INFLATED {
            return Err(damaged(format!("the meta file says a fragment inflates to {} bytes", meta.max_inflated)));
        }
        let fragments = meta.fragment_lengths.len() as u64;
        let expected = meta.terms.len() as u64
            + meta.words.len() as u64
            + meta.text_chunks.len() as u64
            + meta.vectors.as_ref().map_or(0, |v| 1 + 2 * v.partitions as u64)
            + meta.fields.len() as u64
            + meta.dates as u64;
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
        {
            return Err(damaged("the meta file's tables do not agree".into()));
        }
        let chunks = chunks as usize;
        let mut text_starts = Vec::with_capacity(meta.text_chunks.len());
        let mut next = 0u32;
        for &n in &meta.text_chunks {
            text_starts.push(next);
            next += n;
        }
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
            addresses,
            pack_lengths,
            documents,
            first_chunk,
            terms: HashMap::new(),
            words: HashMap::new(),
            text: HashMap::new(),
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

    pub fn document_count(&self) -> usize {
        self.meta.document_chunks.len()
    }

    pub fn chunk_count(&self) -> usize {
        self.documents.of_chunk.len()
    }

    /// A search's step as the shells hand it on: its answer (put in a `FragmentStep` by
    /// `Step::map`), or where each fragment needed is.
    pub fn step(&self, step: Step<super::FragmentStep>) -> super::FragmentStep {
        match step {
            Step::Done(answer) => answer,
            Step::Need(fragments, records) => {
                let record_length = self.record_length() as u32;
                let request = |f: u32, record: Option<u32>| {
                    let (pack, offset, length) = self.address(f)?;
                    Some(super::FragmentRequest {
                        fragment: f,
                        record,
                        row: None,
                        pack: pack.to_string(),
                        offset: offset + record.map_or(0, |r| r as u64 * record_length as u64),
                        length: if record.is_some() { record_length } else { length },
                        pack_length: self.pack_lengths[self.addresses[f as usize].pack as usize],
                    })
                };
                super::FragmentStep {
                    need: Some(
                        fragments
                            .into_iter()
                            .filter_map(|f| request(f, None))
                            .chain(records.into_iter().filter_map(|(f, r)| request(f, Some(r))))
                            .collect(),
                    ),
                    ..Default::default()
                }
            }
            Step::Score(request) => super::FragmentStep {
                rerank: Some(request),
                ..Default::default()
            },
            Step::Rows(rows) => super::FragmentStep {
                need: Some(
                    rows.into_iter()
                        .map(|r| super::FragmentRequest {
                            fragment: 0,
                            record: None,
                            row: Some(r.row),
                            pack: r.pack,
                            offset: r.offset,
                            length: r.length,
                            pack_length: r.pack_length,
                        })
                        .collect(),
                ),
                ..Default::default()
            },
        }
    }

    /// Adds static row `row` from its record's bytes, checking them.
    pub fn add_static_row(&mut self, row: u32, bytes: &[u8]) -> Result<()> {
        match &mut self.statics {
            Some(table) => table.add(row, bytes),
            None => Err(damaged(format!("static row {row} was given, but the index has no static tier"))),
        }
    }

    /// The text fragment that holds chunk `chunk`.
    pub fn text_fragment(&self, chunk: u32) -> u32 {
        let i = self.text_starts.partition_point(|&c| c <= chunk).saturating_sub(1);
        self.meta.text_start() + i as u32
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
            return Err(damaged(format!("{name} was given, but the meta has {} fragments", self.addresses.len())));
        };
        if slot.len() as u64 != length as u64 {
            return Err(damaged(format!("{name} came as {} bytes, but its slot is {length}", slot.len())));
        }
        let gzip = super::unslot(slot).ok_or_else(|| damaged(format!("{name}'s slot does not end as it should")))?;
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
        let bad = |what: &str| Err(damaged(format!("{name} does not agree with the meta: {what}")));
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
                let known = |d: u32| {
                    docs.contains(&d) || text.linked.iter().any(|(l, _)| *l == d)
                };
                let documents = meta.document_chunks.len() as u32;
                if text.first_chunk != self.text_starts[i]
                    || text.first_chunk as u64 + text.chunks.len() as u64 != end
                    || text.chunks.iter().enumerate().any(|(k, c)| {
                        self.documents.of_chunk[text.first_chunk as usize + k] != c.doc
                            || !docs.contains(&c.doc)
                    })
                    || text
                        .links
                        .iter()
                        .any(|l| !known(l.from) || !known(l.to))
                    || docs.iter().chain(text.linked.iter().map(|(d, _)| d)).any(|&d| d >= documents)
                {
                    return bad("its chunks, documents or links");
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
                if (meta.fields_start()..meta.fields_start() + meta.fields.len() as u32).contains(&number) =>
            {
                let documents = meta.document_chunks.len() as u32;
                let values: Option<Vec<serde_json::Value>> =
                    f.values.iter().map(|v| serde_json::from_str(v).ok()).collect();
                match values {
                    Some(values)
                        if values.len() == f.docs.len()
                            && f.docs.windows(2).all(|w| w[0] < w[1])
                            && f.docs.last().is_none_or(|&d| d < documents) =>
                    {
                        self.fields.insert(number, f.docs.into_iter().zip(values).collect());
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
            return Err(damaged(format!("{name} was asked for, but that is not a records fragment")));
        }
        let Some((values, scale)) = super::decode_record(bytes, dim, super::record_id(fragment, record)) else {
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

    /// Runs one search with what is loaded: its hits, or the fragments it needs first.
    pub fn search(&self, query: &str, context: QueryContext<'_>, options: &SearchOptions) -> Result<Step<Vec<SearchHit>>> {
        answer::search(self, query, context, options)
    }

    /// A prompt's context (`buildContext`), or the fragments its search needs first.
    pub fn build_context(
        &self,
        query: &str,
        context: QueryContext<'_>,
        options: &ContextOptions,
    ) -> Result<Step<ContextResponse>> {
        answer::build_context(self, query, context, options)
    }

    /// Document search (`searchDocuments`), or the fragments it needs first.
    pub fn search_documents(
        &self,
        query: &str,
        context: QueryContext<'_>,
        options: &DocumentSearchOptions,
        clock_ms: impl Fn() -> f64,
    ) -> Result<Step<DocumentSearchResponse>> {
        answer::search_documents(self, query, context, options, clock_ms)
    }

    /// Adds the cross-encoder `model`'s scores of `chunks` for `query` (what a `Score` step asked
    /// for). The scores of the last few queries are kept.
    pub fn add_rerank_scores(&mut self, model: &str, query: &str, chunks: &[u32], scores: &[f32]) -> Result<()> {
        if chunks.len() != scores.len()
            || chunks.iter().any(|&c| c as usize >= self.chunk_count())
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
            (search::canonical_model(model), query.to_string(), chunks.to_vec()),
            scores.to_vec(),
        ));
        Ok(())
    }

    /// The lexical index of the query's terms and of the words of `word_shards`, with the
    /// postings of every term whose shard is loaded.
    fn lexical(&self, query_terms: &[String], word_shards: &BTreeSet<u32>) -> LexicalIndex {
        let mut words: BTreeMap<&str, &str> = BTreeMap::new();
        let mut frequencies: HashMap<&str, u32> = HashMap::new();
        for shard in word_shards.iter().filter_map(|s| self.words.get(s)) {
            for ((w, t), &f) in shard.words.iter().zip(&shard.terms).zip(&shard.frequencies) {
                words.insert(w, t);
                frequencies.insert(t, f);
            }
        }
        let mut names = order::set(words.values().copied());
        names.extend(query_terms.iter().map(String::as_str).filter(|t| self.has_term(t)));
        let mut chunk_lengths = vec![0u32; self.documents.of_chunk.len()];
        let terms: Vec<(String, f32, f32, Postings, u32)> = names
            .iter()
            .map(|&term| {
                let loaded = self
                    .meta
                    .term_shard(term)
                    .and_then(|s| self.terms.get(&s))
                    .and_then(|shard| Some((shard, shard.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()?)));
                let Some((shard, i)) = loaded else {
                    let f = frequencies.get(term).copied().unwrap_or(0);
                    return (term.to_string(), 0.0, 0.0, Postings::default(), f);
                };
                let p = &shard.postings[i];
                let postings = Postings {
                    chunk_gaps: p.chunk_gaps.clone(),
                    freqs: p.freqs.clone(),
                };
                for (chunk, &byte) in postings.chunks().zip(&p.length_bytes) {
                    chunk_lengths[chunk as usize] = least_length(byte);
                }
                let f = p.freqs.len() as u32;
                (term.to_string(), shard.idf[i], shard.document_idf[i], postings, f)
            })
            .collect();
        let position: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, i as u32))
            .collect();
        let words = words
            .into_iter()
            .map(|(w, t)| (w.to_string(), position[t]))
            .collect();
        LexicalIndex::partial(
            self.meta.settings.bm25,
            terms,
            words,
            chunk_lengths,
            self.meta.average_chunk_length,
            Arc::clone(&self.documents),
        )
    }

    /// The fragments of the partitions whose centroids are nearest `query`.
    fn probes(&self, query: &[f32], codes: &CodeQuery, options: &SearchOptions) -> Result<Vec<u32>> {
        let (k, dim) = self.vector_shape();
        if query.len() != dim {
            return Err(Error::Model(format!(
                "the query embedding has {} dimensions, the index's model has {dim}",
                query.len()
            )));
        }
        let Some(centroids) = self.centroids.as_ref() else {
            return Ok(vec![self.meta.centroids_fragment()]);
        };
        let base = dot(query, &centroids.mean);
        let mut scored: Vec<ScoredChunk> = centroids
            .codes
            .chunks_exact(dim.div_ceil(8))
            .enumerate()
            .map(|(j, code)| ScoredChunk {
                chunk: j as u32,
                score: codes.estimate(base, centroids.lengths.get(j), code),
            })
            .collect();
        crate::order::top_k(&mut scored, k, |s| s.score, |s| s.chunk);
        let probes = match options.probes {
            Some(probes) => probes.clamp(1, k as u32) as usize,
            // The meta's scan budget, and at least twice the pool: a search that asks for more
            // candidates than the budget holds scans partitions that can hold them.
            None => {
                let budget = self.meta.vectors.as_ref().map_or(1, |v| v.scan_codes);
                let twice = u32::try_from(search::pool(options).saturating_mul(2)).unwrap_or(u32::MAX);
                default_probes(scored.iter().map(|s| centroids.sizes[s.chunk as usize]), budget.max(twice))
            }
        };
        scored.truncate(probes);
        Ok(scored
            .into_iter()
            .map(|s| self.meta.partition_fragment(s.chunk))
            .collect())
    }

    /// The candidates of the probed partitions whose binary codes score best against `query`,
    /// best first: the pool (or `rescore`, if more), each as (estimate, chunk, records fragment,
    /// record); and how many of the first are re-scored with their int8 records (`rescore`).
    fn scan(
        &self,
        query: &[f32],
        codes: &CodeQuery,
        probes: &[u32],
        mask: Option<&[bool]>,
        options: &SearchOptions,
    ) -> (Vec<(f32, u32, u32, u32)>, usize) {
        let bytes = query.len().div_ceil(8);
        let mut scored: Vec<(f32, u32, u32, u32)> = Vec::new();
        for &fragment in probes {
            let p = &self.partitions[&fragment];
            let records = fragment + self.vector_shape().0 as u32;
            let base = dot_i8(query, &p.centroid) * p.centroid_scale;
            let mut chunk = 0u32;
            for (i, (gap, code)) in p.chunk_gaps.iter().zip(p.codes.chunks_exact(bytes)).enumerate() {
                chunk += gap;
                if mask.is_none_or(|m| m[chunk as usize]) {
                    scored.push((codes.estimate(base, p.lengths.get(i), code), chunk, records, i as u32));
                }
            }
        }
        let pool = search::pool(options);
        let rescore = options
            .rescore
            .map_or(RESCORE_PER_HIT.saturating_mul(options.limit as usize).min(pool), |r| r as usize)
            .max(1);
        order::top_by(&mut scored, rescore.max(pool), |a, b| {
            b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
        });
        let rescore = rescore.min(scored.len());
        (scored, rescore)
    }

    /// An index of the `chunks` (loaded) and their documents, with those documents' links and
    /// the documents at the links' other ends; where each chunk is in it; and the document
    /// number of each of its documents.
    fn build_view(
        &self,
        chunks: &BTreeSet<u32>,
        lexical: LexicalIndex,
    ) -> (Index, HashMap<u32, u32>, Vec<u32>) {
        // Every document the fragments read here describe, in full or as a link's other end.
        let mut known: BTreeMap<u32, Document> = BTreeMap::new();
        let mut links: Vec<DocLink> = Vec::new();
        let mut hit_docs = BTreeSet::new();
        let mut found: Vec<&Chunk> = Vec::with_capacity(chunks.len());
        for &c in chunks {
            let text = &self.text[&self.text_fragment(c)];
            let chunk = &text.chunks[(c - text.first_chunk) as usize];
            found.push(chunk);
            if hit_docs.insert(chunk.doc) {
                links.extend(
                    text.links
                        .iter()
                        .filter(|l| l.from == chunk.doc || l.to == chunk.doc)
                        .cloned(),
                );
            }
            for (d, document) in &text.documents {
                known.insert(*d, document.clone());
            }
            for (d, l) in &text.linked {
                known.entry(*d).or_insert_with(|| stub(l));
            }
        }
        order::sort_by(&mut links, |a, b| (a.from, a.to).cmp(&(b.from, b.to)));
        links.dedup();
        let mut wanted: BTreeSet<u32> = hit_docs;
        wanted.extend(links.iter().flat_map(|l| [l.from, l.to]));
        let position: HashMap<u32, u32> = wanted
            .iter()
            .enumerate()
            .map(|(i, &d)| (d, i as u32))
            .collect();
        let documents = wanted
            .iter()
            .map(|d| {
                known.remove(d).unwrap_or_else(|| {
                    stub(&LinkedDocument {
                        id: String::new(),
                        doc_type: crate::hit::DocType::Text,
                        title: String::new(),
                    })
                })
            })
            .collect();
        let mut view_chunks = Vec::with_capacity(found.len());
        let mut chunk_in_view = HashMap::with_capacity(found.len());
        for (&c, chunk) in chunks.iter().zip(found) {
            chunk_in_view.insert(c, view_chunks.len() as u32);
            let mut chunk = chunk.clone();
            chunk.doc = position[&chunk.doc];
            view_chunks.push(chunk);
        }
        for l in &mut links {
            l.from = position[&l.from];
            l.to = position[&l.to];
        }
        order::sort_by(&mut links, |a, b| (a.from, a.to).cmp(&(b.from, b.to)));
        let index = Index::new(
            self.meta.settings.clone(),
            documents,
            view_chunks,
            links,
            lexical,
            None,
        );
        (index, chunk_in_view, wanted.into_iter().collect())
    }
}

impl Source for Fragmented {
    fn settings(&self) -> &IndexSettings {
        &self.meta.settings
    }
    fn chunk_count(&self) -> usize {
        self.documents.of_chunk.len()
    }
    fn document_count(&self) -> usize {
        self.meta.document_chunks.len()
    }
    fn doc_of(&self, chunk: u32) -> u32 {
        self.documents.of_chunk[chunk as usize]
    }
    fn chunks_of(&self, doc: u32) -> Range<u32> {
        let first = self.first_chunk[doc as usize];
        first..first + self.meta.document_chunks[doc as usize]
    }
    fn has_vectors(&self) -> bool {
        self.meta.vectors.is_some()
    }
    fn statics(&self) -> Option<&StaticTable> {
        self.statics.as_ref()
    }
    fn fetches(&self) -> bool {
        true
    }
    fn want_terms<'t>(&self, terms: &mut dyn Iterator<Item = &'t str>, need: &mut Need) {
        need.fragments.extend(
            terms
                .filter_map(|t| self.meta.term_shard(t))
                .filter(|s| !self.terms.contains_key(s)),
        );
    }
    fn want_words(&self, prefix: &str, need: &mut Need) {
        need.fragments.extend(self.meta.word_shards(prefix).filter(|s| !self.words.contains_key(s)));
    }
    /// Whether the index has `term` (its term shard loaded).
    fn has_term(&self, term: &str) -> bool {
        self.meta
            .term_shard(term)
            .and_then(|s| self.terms.get(&s))
            .is_some_and(|shard| shard.terms.binary_search_by(|t| t.as_str().cmp(term)).is_ok())
    }

    /// By the term's number among all the index's terms, from its loaded term shard.
    fn term_weight(&self, term: &str) -> Option<(u32, f32)> {
        let s = self.meta.term_shard(term)?;
        let shard = self.terms.get(&s)?;
        let i = shard.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()?;
        Some((self.meta.term_ids[s as usize].checked_add(i as u32)?, shard.idf[i]))
    }
    fn lexicon(&self, terms: &[String], prefixes: &[String]) -> Held<'_, LexicalIndex> {
        let shards = order::set(prefixes.iter().flat_map(|p| self.meta.word_shards(p)));
        Held::Owned(Box::new(self.lexical(terms, &shards)))
    }
    fn want_vectors(&self, need: &mut Need) {
        if self.centroids.is_none() {
            need.fragments.insert(self.meta.centroids_fragment());
        }
    }
    /// The partitions whose centroids are nearest the query, their binary codes scanned, and the
    /// best `rescore` re-scored with their int8 records: the single file's own bytes and
    /// scores. The rest of the pool keeps the scan's estimates, none above the least re-scored
    /// score, so a semantic search's hits are re-scored ones (`rescore` is at least `limit`
    /// by default).
    fn nearest(
        &self,
        query: &[f32],
        mask: Option<&[bool]>,
        options: &SearchOptions,
        need: &mut Need,
    ) -> Result<Vec<ScoredChunk>> {
        let codes = CodeQuery::new(query);
        let probes = self.probes(query, &codes, options)?;
        let before = need.fragments.len();
        need.fragments.extend(probes.iter().filter(|p| !self.partitions.contains_key(p)));
        if need.fragments.len() > before {
            return Ok(Vec::new());
        }
        let (candidates, rescore) = self.scan(query, &codes, &probes, mask, options);
        let (exact, estimated) = candidates.split_at(rescore);
        let records: Vec<(u32, u32)> = exact
            .iter()
            .map(|&(_, _, fragment, record)| (fragment, record))
            .filter(|key| !self.records.contains_key(key))
            .collect();
        if !records.is_empty() {
            need.records.extend(records);
            return Ok(Vec::new());
        }
        let mut hits: Vec<ScoredChunk> = exact
            .iter()
            .map(|&(_, chunk, fragment, record)| {
                let (values, scale) = &self.records[&(fragment, record)];
                ScoredChunk {
                    chunk,
                    score: scale * dot_i8(query, values),
                }
            })
            .collect();
        let floor = hits.iter().map(|h| h.score).fold(f32::INFINITY, f32::min);
        hits.extend(estimated.iter().map(|&(estimate, chunk, _, _)| ScoredChunk {
            chunk,
            score: estimate.min(floor),
        }));
        crate::order::top_k(&mut hits, search::pool(options), |h| h.score, |h| h.chunk);
        Ok(hits)
    }
    fn want_field(&self, field: &str, need: &mut Need) {
        need.fragments.extend(self.meta.field_fragment(field).filter(|n| !self.fields.contains_key(n)));
    }
    /// `doc`'s value of `field`, from its field fragment (None when it has none, or the
    /// fragment is not added).
    fn field_value(&self, doc: u32, field: &str) -> Option<serde_json::Value> {
        let values = self.fields.get(&self.meta.field_fragment(field)?)?;
        let i = values.binary_search_by_key(&doc, |(d, _)| *d).ok()?;
        Some(values[i].1.clone())
    }

    fn want_dates(&self, need: &mut Need) {
        if self.dates.is_none() {
            need.fragments.extend(self.meta.dates_fragment());
        }
    }
    fn date(&self, doc: u32) -> Option<i64> {
        let dates = self.dates.as_deref()?;
        let i = dates.binary_search_by_key(&doc, |&(d, _)| d).ok()?;
        Some(dates[i].1)
    }
    fn want_text(&self, chunk: u32, need: &mut Need) {
        let f = self.text_fragment(chunk);
        if !self.text.contains_key(&f) {
            need.fragments.insert(f);
        }
    }
    /// From a loaded text fragment of one of its chunks (each holds its documents' links).
    fn links_from(&self, doc: u32) -> Vec<DocLink> {
        let chunks = self.chunks_of(doc);
        if chunks.is_empty() {
            return Vec::new();
        }
        let fragments = self.text_fragment(chunks.start)..=self.text_fragment(chunks.end - 1);
        let Some(text) = fragments.filter_map(|f| self.text.get(&f)).next() else {
            return Vec::new();
        };
        let mut links: Vec<DocLink> = text.links.iter().filter(|l| l.from == doc).cloned().collect();
        order::sort_by(&mut links, |a, b| a.to.cmp(&b.to));
        links
    }
    /// The text the cross-encoder reads of chunk `chunk` (its text fragment added), as the single
    /// file gives it.
    fn indexed_text(&self, chunk: u32) -> String {
        let text = &self.text[&self.text_fragment(chunk)];
        let c = &text.chunks[(chunk - text.first_chunk) as usize];
        let document = text
            .documents
            .iter()
            .find(|(d, _)| *d == c.doc)
            .map(|(_, d)| d)
            .expect("a text fragment holds its chunks' documents (checked when added)");
        crate::index::indexed_text(document, c)
    }

    fn view<'a>(&'a self, chunks: &BTreeSet<u32>, lexical: Held<'a, LexicalIndex>) -> View<'a> {
        let lexical = match lexical {
            Held::Owned(lexical) => *lexical,
            Held::Borrowed(_) => self.lexical(&[], &BTreeSet::new()),
        };
        let (index, chunks, documents) = self.build_view(chunks, lexical);
        View {
            index: Held::Owned(Box::new(index)),
            chunks: Some(chunks),
            documents: Some(documents),
        }
    }
    fn rerank_scores(&self, model: &str, query: &str, chunks: &[u32]) -> Option<&[f32]> {
        self.rerank_scores
            .iter()
            .find(|((m, q, c), _)| m == model && q == query && c == chunks)
            .map(|(_, scores)| scores.as_slice())
    }
}

/// A document known only as a link's other end.
fn stub(l: &LinkedDocument) -> Document {
    Document {
        id: l.id.clone(),
        doc_type: l.doc_type,
        title: l.title.clone(),
        url: None,
        metadata: None,
        created: None,
        updated: None,
        author: None,
        summary: None,
    }
}


/// Native: searching a fragmented index in a folder, fetching fragments from its packs.
#[cfg(not(target_arch = "wasm32"))]
pub mod native {
    use std::path::{Path, PathBuf};

    use super::{Fragmented, Step};
    use crate::error::{Error, Result};
    use crate::fragment::{META_FILE, PACK_DIR};
    use crate::hit::{
        ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, SearchHit,
        SearchOptions,
    };
    use crate::search::QueryContext;

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

        /// Searches, fetching each round's fragments from the packs until it answers.
        pub fn search(
            &mut self,
            query: &str,
            context: QueryContext<'_>,
            options: &SearchOptions,
        ) -> Result<Vec<SearchHit>> {
            self.run(context.reranker, |index| index.search(query, context, options))
        }

        /// `buildContext`, fetching as [`search`](Self::search) does.
        pub fn build_context(
            &mut self,
            query: &str,
            context: QueryContext<'_>,
            options: &ContextOptions,
        ) -> Result<ContextResponse> {
            self.run(context.reranker, |index| index.build_context(query, context, options))
        }

        /// `searchDocuments`, fetching as [`search`](Self::search) does.
        pub fn search_documents(
            &mut self,
            query: &str,
            context: QueryContext<'_>,
            options: &DocumentSearchOptions,
        ) -> Result<DocumentSearchResponse> {
            self.run(context.reranker, |index| index.search_documents(query, context, options, crate::search::now_ms))
        }

        /// Takes `step`s, adding what each needs, until one answers.
        fn run<T>(
            &mut self,
            reranker: Option<&dyn crate::search::CrossEncoder>,
            step: impl Fn(&Fragmented) -> Result<Step<T>>,
        ) -> Result<T> {
            loop {
                match step(&self.index)? {
                    Step::Done(answer) => return Ok(answer),
                    Step::Need(fragments, records) => {
                        self.rounds += 1;
                        for f in fragments {
                            let slot = self.read(f, None)?;
                            self.index.add_slot(f, &slot)?;
                        }
                        for (f, r) in records {
                            let bytes = self.read(f, Some(r))?;
                            self.index.add_record(f, r, &bytes)?;
                        }
                    }
                    Step::Rows(rows) => {
                        self.rounds += 1;
                        for r in rows {
                            let what = format!("static row {}", r.row);
                            let bytes = read_range(&self.dir.join(PACK_DIR).join(&r.pack), r.offset, r.length, &what)?;
                            self.bytes += bytes.len() as u64;
                            self.index.add_static_row(r.row, &bytes)?;
                        }
                    }
                    Step::Score(r) => {
                        let reranker = reranker.ok_or_else(|| crate::search::not_loaded(&r.model))?;
                        let texts: Vec<&str> = r.texts.iter().map(String::as_str).collect();
                        let scores = reranker.relevance(&r.query, &texts)?;
                        self.index.add_rerank_scores(&r.model, &r.query, &r.chunks, &scores)?;
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
            let index = &self.index;
            let mut documents = vec![None; meta.document_chunks.len()];
            let mut chunks = Vec::with_capacity(index.chunk_count());
            let mut links = Vec::new();
            for f in text {
                let fragment = &index.text[&f];
                chunks.extend(fragment.chunks.iter().cloned());
                links.extend(fragment.links.iter().cloned());
                for (d, document) in &fragment.documents {
                    documents[*d as usize].get_or_insert_with(|| document.clone());
                }
            }
            links.sort_by_key(|l| (l.from, l.to));
            links.dedup();
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
                if document.summary.as_deref() == Some(text.as_str()) && text.len() <= summary_chars::MAX {
                    document.summary = None;
                }
            }
            let vectors = match &meta.vectors {
                None => None,
                Some(v) => {
                    let dim = v.model.dimension as usize;
                    let mut flat = vec![0f32; chunks.len() * dim];
                    for p in 0..v.partitions {
                        let (partition, records) = (meta.partition_fragment(p), meta.records_fragment(p));
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
                            for (out, &x) in flat[chunk * dim..(chunk + 1) * dim].iter_mut().zip(values) {
                                *out = x as f32 * scale;
                            }
                        }
                    }
                    Some(VectorIndex::flat(v.model.clone(), flat, Precision::Int8))
                }
            };
            let lexical = self.index.lexical(&[], &Default::default());
            Ok(Index::new(meta.settings.clone(), documents, chunks, links, lexical, vectors))
        }

        /// Fragment `fragment`'s slot as its pack holds it (raw for vector records), or one of
        /// its records; what was read is counted in `bytes`.
        fn read(&mut self, fragment: u32, record: Option<u32>) -> Result<Vec<u8>> {
            let (pack, mut offset, mut length) = self.index.address(fragment).ok_or_else(|| {
                Error::InvalidIndex(format!("fragment {fragment} is not in the meta file"))
            })?;
            if let Some(r) = record {
                let size = self.index.record_length() as u32;
                offset += r as u64 * size as u64;
                length = size;
            }
            let what = match record {
                Some(r) => format!("vector record {r} of fragment {fragment}"),
                None => format!("fragment {fragment}"),
            };
            let bytes = read_range(&self.dir.join(PACK_DIR).join(pack), offset, length, &what)?;
            self.bytes += bytes.len() as u64;
            Ok(bytes)
        }
    }

    /// `length` bytes of the file at `path` from `offset`, `what` naming them in errors.
    fn read_range(path: &Path, offset: u64, length: u32, what: &str) -> Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let damaged = |why: String| {
            super::damaged(format!("cannot read {what} ({length} bytes at {offset}) from {}: {why}", path.display()))
        };
        let mut file = std::fs::File::open(path).map_err(|e| damaged(e.to_string()))?;
        let size = file.metadata().map_err(|e| damaged(e.to_string()))?.len();
        if offset.saturating_add(length as u64) > size {
            return Err(damaged(format!("the file has only {size} bytes")));
        }
        file.seek(SeekFrom::Start(offset)).map_err(|e| damaged(e.to_string()))?;
        let mut bytes = vec![0u8; length as usize];
        file.read_exact(&mut bytes).map_err(|e| damaged(e.to_string()))?;
        Ok(bytes)
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
}
