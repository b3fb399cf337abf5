//! Cutting an index into fragments (native): term shards of about `shard_postings` postings,
//! word shards for completion and typos, text fragments of about `text_bytes` of chunk text
//! (slots padded to `TEXT_UNIT`s), with vectors IVF centroids and one partition and one records
//! fragment per centroid, and a fragment per filterable field and for the dates. Each fragment
//! is gzipped; fragments are laid end to end in packs named by their content hash, and the meta
//! file is written last, so a reader never sees a meta naming a pack that is not there, and a
//! failed write leaves the previous layout answering.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::{
    binary_code, Centroids, DocumentDates, FieldValues, Fragment, Lengths, LinkedDocument,
    LinksFragment, Meta, Partition, Payload, TermPostings, TermShard, TextFragment, VectorMeta,
    WordShard, FRAGMENT_MAGIC, META_FILE, META_MAGIC, PACK_DIR,
};
use crate::error::{Error, Result};
use crate::index::lexical::length_byte;
use crate::index::vector::dot;
use crate::index::{DocLink, Index};
use crate::search::filter;
use crate::store::envelope::{compress, seal, Stream};
use crate::store::pack::{hex, quantize_into};

/// How to cut. The defaults are the sizes that cost the Rust docs least per query
/// (docs/benchmarks.md), and packs large enough that 100k pages stay far under a static
/// host's file limit.
#[derive(Debug, Clone)]
pub struct Options {
    pub shard_postings: usize,
    pub shard_words: usize,
    pub text_bytes: usize,
    /// About how many bytes of links a links fragment holds (a document with more is one alone).
    pub link_bytes: usize,
    pub pack_bytes: usize,
    /// IVF partitions (default: `default_partitions`).
    pub partitions: Option<usize>,
    /// How many codes a query scans by default (`VectorMeta::scan_codes`).
    pub scan_codes: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            shard_postings: 1_000,
            shard_words: 250,
            text_bytes: 1024,
            link_bytes: 4096,
            pack_bytes: 1 << 20,
            partitions: None,
            scan_codes: SCAN_CODES,
        }
    }
}

/// A layout in memory: the meta file's bytes and the packs (name, bytes).
pub struct Layout {
    pub meta: Vec<u8>,
    pub packs: Vec<(String, Vec<u8>)>,
    pub fragments: usize,
}

/// Cuts `index` into fragments.
pub fn layout(index: &Index, options: &Options) -> Result<Layout> {
    let mut fragments: Vec<Payload> = Vec::new();
    // The records fragments (after every other): raw bytes, one range a vector.
    let mut raw: Vec<Vec<u8>> = Vec::new();
    let (terms, term_ids, shards) = term_shards(index, options.shard_postings.max(1));
    fragments.extend(shards.into_iter().map(Payload::Terms));
    let (words, word_shards) = word_shards(index, options.shard_words.max(1));
    fragments.extend(word_shards.into_iter().map(Payload::Words));
    let (text, texts) = text_fragments(index, options.text_bytes.max(1));
    fragments.extend(texts.into_iter().map(Payload::Text));
    let vectors = match &index.vectors {
        Some(v) if !v.is_empty() => {
            let k = options
                .partitions
                .unwrap_or_else(|| default_partitions(v.len()))
                .clamp(1, v.len().min(65_536));
            // The records fragments come after the centroids and the k partitions.
            let first_records = (fragments.len() + 1 + k) as u32;
            let (centroids, partitions, records) =
                ivf(&v.to_flat(), v.dimension(), k, first_records);
            fragments.push(Payload::Centroids(centroids));
            fragments.extend(partitions.into_iter().map(Payload::Partition));
            raw = records;
            Some(VectorMeta {
                model: v.model.clone(),
                partitions: k as u32,
                scan_codes: options.scan_codes.max(1),
            })
        }
        _ => None,
    };

    let mut inflated = 0usize;
    let mut encoded: Vec<Vec<u8>> = fragments
        .into_par_iter()
        .enumerate()
        .map(|(number, payload)| {
            encode(&Fragment {
                number: number as u32,
                payload,
            })
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .map(|(slot, size)| {
            inflated = inflated.max(size);
            slot
        })
        .collect();
    encoded.extend(raw);
    // The filterable fields' values, a fragment a field (numbered after the records).
    let (fields, values) = field_values(index);
    let dates = document_dates(index);
    let has_dates = !dates.docs.is_empty();
    let last = has_dates.then_some(Payload::Dates(dates));
    // The links fragments last: only a search that shows links fetches them.
    let (link_documents, links) = link_fragments(index, options.link_bytes.max(1));
    for payload in values
        .into_iter()
        .map(Payload::Field)
        .chain(last)
        .chain(links.into_iter().map(Payload::Links))
    {
        let number = encoded.len() as u32;
        let (slot, size) = encode(&Fragment { number, payload })?;
        inflated = inflated.max(size);
        encoded.push(slot);
    }
    // The fragments end to end in packs of at most `pack_bytes` (a bigger fragment is a pack of
    // its own), each pack with how many fragments it holds.
    let mut hash = Sha256::new();
    let mut groups: Vec<(Vec<u8>, u32)> = Vec::new();
    for bytes in &encoded {
        hash.update(bytes);
        match groups.last_mut() {
            Some((pack, n)) if pack.len() + bytes.len() <= options.pack_bytes => {
                pack.extend_from_slice(bytes);
                *n += 1;
            }
            _ => groups.push((bytes.clone(), 1)),
        }
    }
    let pack_fragments = groups.iter().map(|&(_, n)| n).collect();
    let packs: Vec<(String, Vec<u8>)> = groups
        .into_iter()
        .map(|(bytes, _)| (super::pack_name(&bytes, "cairnpack"), bytes))
        .collect();

    let lexical = &index.lexical;
    let mut meta = Meta {
        settings: index.settings.clone(),
        hash: hex(&hash.finalize()),
        document_chunks: document_chunks(index),
        document_lengths: lexical.documents.lengths.clone(),
        average_chunk_length: lexical.average_length,
        average_document_length: lexical.documents.average_length,
        terms,
        term_ids,
        words,
        text_chunks: text,
        vectors,
        statics: index.statics.clone(),
        packs: packs.iter().map(|(n, _)| n.clone()).collect(),
        pack_fragments,
        fragment_lengths: Vec::new(),
        fields,
        dates: has_dates,
        link_documents,
        max_inflated: u32::try_from(inflated)
            .map_err(|_| Error::InvalidIndex("a fragment is larger than 4 GB".into()))?,
    };
    let texts = meta.text_fragments();
    meta.fragment_lengths = encoded
        .iter()
        .zip(0..)
        .map(|(b, number)| {
            let unit = if texts.contains(&number) {
                super::TEXT_UNIT as usize
            } else {
                1
            };
            // `encode` pads exactly the text payloads to whole units.
            debug_assert_eq!(b.len() % unit, 0, "fragment {number}");
            (b.len() / unit) as u32
        })
        .collect();
    Ok(Layout {
        meta: gzip(&encode_meta(&meta)?),
        packs,
        fragments: encoded.len(),
    })
}

/// The meta file's envelope (before gzip).
pub fn encode_meta(meta: &Meta) -> Result<Vec<u8>> {
    let payload = postcard::to_allocvec(meta)
        .map_err(|e| Error::InvalidIndex(format!("could not encode the meta file: {e}")))?;
    Ok(seal(META_MAGIC, &payload))
}

/// Writes the layout's packs into `dir/p/`. A pack already there is kept only when its bytes
/// are what its name says (a pack's name is its content hash), so a live index's packs are
/// never rewritten, and a damaged or truncated one is replaced: building again repairs it.
pub fn save_packs(layout_packs: &[(String, Vec<u8>)], dir: &Path) -> Result<()> {
    let packs = dir.join(PACK_DIR);
    if layout_packs.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&packs)?;
    for (name, bytes) in layout_packs {
        let path = packs.join(name);
        if !pack_is_whole(&path, name, bytes.len()) {
            let staging = packs.join(format!(".{name}.partial"));
            let mut file = std::fs::File::create(&staging)?;
            file.write_all(bytes)?;
            // On disk before the meta that names it is renamed into place.
            file.sync_all()?;
            std::fs::rename(&staging, &path)?;
        }
    }
    Ok(())
}

/// Whether the file at `path` is the pack `name` of `length` bytes: its length, then its
/// content hash.
fn pack_is_whole(path: &Path, name: &str, length: usize) -> bool {
    let kind = name.rsplit('.').next().unwrap_or_default();
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == length as u64)
        && std::fs::read(path).is_ok_and(|bytes| super::pack_name(&bytes, kind) == name)
}

/// What of a folder's files an earlier build of cairn can be proven to have written: the index
/// now in it (a meta file or an index file that reads as one) and the packs under `p/` it names.
/// A build removes nothing else; a folder whose index does not read owns nothing.
#[derive(Debug, Default)]
pub struct Owned {
    pub packs: std::collections::HashSet<String>,
    /// `meta.cairn` and `index.cairn` read as cairn's.
    pub meta: bool,
    pub index_file: bool,
    /// The browser model's weights file the index names (`model/<file>`).
    pub web_weights: Option<String>,
}

/// What the index now in `dir` owns (`Owned`).
pub fn owned(dir: &Path) -> Owned {
    let mut owned = Owned::default();
    if let Ok(index) = super::load::native::Folder::open(dir) {
        let meta = index.index.meta();
        owned.meta = true;
        owned.packs.extend(meta.packs.iter().cloned());
        owned.packs.extend(
            meta.statics
                .iter()
                .flat_map(|rows| rows.packs.iter().cloned()),
        );
        owned.web_weights = meta
            .vectors
            .as_ref()
            .map(|v| v.model.web_weights_file.clone());
    }
    if let Ok(index) = std::fs::read(dir.join(crate::index::INDEX_FILE))
        .map_err(Error::from)
        .and_then(|bytes| crate::index::format::read(&bytes))
    {
        owned.index_file = true;
        owned.packs.extend(
            index
                .statics
                .iter()
                .flat_map(|rows| rows.packs.iter().cloned()),
        );
        if let Some(v) = &index.vectors {
            owned
                .web_weights
                .get_or_insert_with(|| v.model.web_weights_file.clone());
        }
    }
    owned.packs.retain(|name| super::is_pack_name(name));
    owned
}

/// Removes from `dir/p/` the packs in `owned` (what an earlier index named, `owned_packs`) that
/// are not in `keep`, and then `p/` itself if that emptied it. Nothing else is touched: a file
/// in `p/` that no index of cairn's named is the site's own.
pub fn remove_owned<'a>(
    dir: &Path,
    owned: &std::collections::HashSet<String>,
    keep: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    let keep: std::collections::HashSet<&str> = keep.into_iter().collect();
    let packs = dir.join(PACK_DIR);
    let mut removed = false;
    for name in owned
        .iter()
        .filter(|n| !keep.contains(n.as_str()) && super::is_pack_name(n))
    {
        removed |= std::fs::remove_file(packs.join(name)).is_ok();
    }
    if removed {
        // Fails, as it should, while anything else is in it.
        let _ = std::fs::remove_dir(&packs);
    }
    Ok(())
}

/// A fragment's bytes as a pack holds them: the envelope around its postcard, gzipped, in its
/// slot (`super::unslot`); and the envelope's length (what the gzip inflates to).
pub fn encode(fragment: &Fragment) -> Result<(Vec<u8>, usize)> {
    let payload = postcard::to_allocvec(fragment)
        .map_err(|e| Error::InvalidIndex(format!("could not encode a fragment: {e}")))?;
    let unit = match fragment.payload {
        Payload::Text(_) => super::TEXT_UNIT as usize,
        _ => 1,
    };
    let envelope = seal(FRAGMENT_MAGIC, &payload);
    let mut slot = gzip(&envelope);
    let length = (slot.len() + 2).next_multiple_of(unit);
    let tail = (length - slot.len()) as u16;
    slot.resize(length - 2, 0);
    slot.extend_from_slice(&tail.to_le_bytes());
    Ok((slot, envelope.len()))
}

/// A fragment's gzip (`envelope::compress`).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    compress(bytes, Stream::Gzip)
}

fn document_chunks(index: &Index) -> Vec<u32> {
    let mut counts = vec![0u32; index.documents.len()];
    for chunk in &index.chunks {
        counts[chunk.doc as usize] += 1;
    }
    counts
}

/// Terms in order, at most `size` postings a shard (a term of more is a shard of its own, so a
/// query for it fetches no other term's postings); each posting with its chunk's length byte.
fn term_shards(index: &Index, size: usize) -> (Vec<String>, Vec<u32>, Vec<TermShard>) {
    let lexical = &index.lexical;
    let mut firsts = Vec::new();
    let mut ids = Vec::new();
    let mut shards: Vec<TermShard> = Vec::new();
    let mut postings_in_shard = 0;
    for (t, term) in lexical.terms.iter().enumerate() {
        let postings = &lexical.postings[t];
        if shards.is_empty() || postings_in_shard + postings.freqs.len() > size {
            firsts.push(term.clone());
            ids.push(t as u32);
            shards.push(TermShard::default());
            postings_in_shard = 0;
        }
        let shard = shards.last_mut().expect("pushed above");
        shard.terms.push(term.clone());
        shard.postings.push(TermPostings {
            chunk_gaps: postings.chunk_gaps.clone(),
            freqs: postings.freqs.clone(),
            length_bytes: postings
                .chunks()
                .map(|c| length_byte(lexical.chunk_lengths[c as usize]))
                .collect(),
        });
        postings_in_shard += postings.freqs.len();
    }
    (firsts, ids, shards)
}

/// The indexed words in order, `size` a shard, each with its term and the term's chunk
/// frequency.
fn word_shards(index: &Index, size: usize) -> (Vec<String>, Vec<WordShard>) {
    let lexical = &index.lexical;
    let mut firsts = Vec::new();
    let mut shards = Vec::new();
    for (words, terms) in lexical
        .words
        .chunks(size)
        .zip(lexical.word_terms.chunks(size))
    {
        firsts.push(words[0].clone());
        shards.push(WordShard {
            words: words.to_vec(),
            terms: terms.iter().map(|&t| lexical.term(t).to_string()).collect(),
            frequencies: terms
                .iter()
                .map(|&t| lexical.chunk_frequency(t) as u32)
                .collect(),
        });
    }
    (firsts, shards)
}

/// Chunks in order, cut after about `size` bytes of text, with their documents; and how many
/// chunks each holds.
fn text_fragments(index: &Index, size: usize) -> (Vec<u32>, Vec<TextFragment>) {
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    let mut bytes = 0;
    for (c, chunk) in index.chunks.iter().enumerate() {
        if ranges.is_empty() || bytes >= size {
            ranges.push(c..c);
            bytes = 0;
        }
        ranges.last_mut().expect("pushed above").end = c + 1;
        bytes += chunk.text.len() + chunk.heading_path.iter().map(String::len).sum::<usize>();
    }
    let counts = ranges.iter().map(|r| r.len() as u32).collect();
    let fragments = ranges
        .into_iter()
        .map(|range| {
            let chunks = index.chunks[range.clone()].to_vec();
            let mut docs: Vec<u32> = chunks.iter().map(|c| c.doc).collect();
            docs.dedup();
            TextFragment {
                first_chunk: range.start as u32,
                chunks,
                documents: docs
                    .iter()
                    .map(|&d| {
                        let mut document = index.documents[d as usize].clone();
                        document.summary = index.summary(d);
                        (d, document)
                    })
                    .collect(),
            }
        })
        .collect();
    (counts, fragments)
}

/// Documents in order, cut after about `size` bytes of links (each document's links out and
/// in), with what a link shows of each document at its other end; and how many documents each
/// covers. None when no document links to another.
fn link_fragments(index: &Index, size: usize) -> (Vec<u32>, Vec<LinksFragment>) {
    if index.links.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let bytes_of = |d: u32| -> usize {
        let into = index.links_to(d).filter(|l| l.from != d);
        index
            .links_from(d)
            .iter()
            .chain(into)
            .map(|l| l.text.len() + 8)
            .sum()
    };
    let mut ranges: Vec<std::ops::Range<u32>> = Vec::new();
    let mut bytes = 0;
    for d in 0..index.documents.len() as u32 {
        if ranges.is_empty() || bytes >= size {
            ranges.push(d..d);
            bytes = 0;
        }
        ranges.last_mut().expect("pushed above").end = d + 1;
        bytes += bytes_of(d);
    }
    let counts = ranges.iter().map(|r| r.len() as u32).collect();
    let fragments = ranges
        .into_iter()
        .map(|range| {
            // Each link once: out of a document of the range, or into one from outside it; in
            // the index's order between the same two documents.
            let mut links: Vec<DocLink> = range
                .clone()
                .flat_map(|d| {
                    let into = index.links_to(d).filter(|l| !range.contains(&l.from));
                    index.links_from(d).iter().chain(into).cloned()
                })
                .collect();
            links.sort_by_key(|l| (l.from, l.to));
            let mut ends: Vec<u32> = links.iter().flat_map(|l| [l.from, l.to]).collect();
            ends.sort_unstable();
            ends.dedup();
            LinksFragment {
                first_document: range.start,
                links,
                linked: ends
                    .into_iter()
                    .map(|d| {
                        let doc = &index.documents[d as usize];
                        (
                            d,
                            LinkedDocument {
                                id: doc.id.clone(),
                                doc_type: doc.doc_type,
                                title: doc.title.clone(),
                            },
                        )
                    })
                    .collect(),
            }
        })
        .collect();
    (counts, fragments)
}

/// Each field a filter can name, ascending, and every document's value of it.
fn field_values(index: &Index) -> (Vec<String>, Vec<FieldValues>) {
    let mut fields: std::collections::BTreeMap<String, FieldValues> = Default::default();
    for doc in 0..index.documents.len() as u32 {
        for name in filter::field_names(index, doc) {
            if let Some(value) = filter::field_value(index, doc, &name) {
                let entry = fields.entry(name).or_default();
                entry.docs.push(doc);
                entry.values.push(value.to_string());
            }
        }
    }
    fields.into_iter().unzip()
}

/// Each dated document's date (updated, else created).
fn document_dates(index: &Index) -> DocumentDates {
    let mut dates = DocumentDates::default();
    for (doc, d) in index.documents.iter().enumerate() {
        if let Some(at) = d.updated.as_ref().or(d.created.as_ref()) {
            dates.docs.push(doc as u32);
            dates.unix_seconds.push(at.unix_seconds);
        }
    }
    dates
}

/// How many IVF partitions `chunks` vectors get by default: 3 √chunks (949 at 100k). Finer than
/// 2 √chunks, they hold a query's neighbours in fewer codes where a site's vectors spread
/// (`docs/benchmarks.md`, "Finer partitions"), for a centroids fragment half as large again.
pub fn default_partitions(chunks: usize) -> usize {
    (3.0 * (chunks as f64).sqrt()).round() as usize
}

/// How many codes a query scans by default (`VectorMeta::scan_codes`; at least 4 partitions):
/// about 55 kB at 100k chunks. On real embeddings (the Rust books) the probed partitions then
/// hold 96.6% of the exact top 10, and 92.6% at half of it, which also moved the eval
/// collections' hybrid nDCG@10 by up to 0.014 (`docs/benchmarks.md`).
const SCAN_CODES: u32 = 1_000;

/// Spherical k-means (seeded by evenly spaced vectors, so builds are reproducible), then each
/// vector in its nearest centroid's partition: its difference from the centroid there (a binary
/// code and a length), and its int8 record (as the single file stores it) in the partition's
/// records.
/// `first_records` is the number of partition 0's records fragment, which each record's checksum
/// names with its place (`record_id`).
pub fn ivf(
    vectors: &[f32],
    dim: usize,
    k: usize,
    first_records: u32,
) -> (Centroids, Vec<Partition>, Vec<Vec<u8>>) {
    let n = vectors.len() / dim;
    let row = |i: usize| &vectors[i * dim..(i + 1) * dim];
    let mut centroids: Vec<f32> = (0..k).flat_map(|j| row(j * n / k).to_vec()).collect();
    let nearest = |centroids: &[f32]| -> Vec<u32> {
        (0..n)
            .into_par_iter()
            .map(|i| {
                let v = row(i);
                let mut best = (f32::NEG_INFINITY, 0u32);
                for (j, c) in centroids.chunks_exact(dim).enumerate() {
                    let s = dot(v, c);
                    if s > best.0 {
                        best = (s, j as u32);
                    }
                }
                best.1
            })
            .collect()
    };
    let mut assignment = nearest(&centroids);
    for _ in 0..10 {
        let mut sums = vec![0f64; k * dim];
        let mut counts = vec![0usize; k];
        for (i, &j) in assignment.iter().enumerate() {
            counts[j as usize] += 1;
            for (s, x) in sums[j as usize * dim..(j as usize + 1) * dim]
                .iter_mut()
                .zip(row(i))
            {
                *s += *x as f64;
            }
        }
        for j in 0..k {
            let sum = &sums[j * dim..(j + 1) * dim];
            let norm = sum.iter().map(|x| x * x).sum::<f64>().sqrt();
            if counts[j] > 0 && norm > 0.0 {
                for (c, s) in centroids[j * dim..(j + 1) * dim].iter_mut().zip(sum) {
                    *c = (s / norm) as f32;
                }
            }
        }
        let next = nearest(&centroids);
        if next == assignment {
            break;
        }
        assignment = next;
    }
    // Partitions numbered so that near ones are neighbours in the packs.
    let order = locality_order(&centroids, dim);
    let mut renumber = vec![0u32; k];
    for (new, &old) in order.iter().enumerate() {
        renumber[old] = new as u32;
    }
    let centroids: Vec<f32> = order
        .iter()
        .flat_map(|&j| centroids[j * dim..(j + 1) * dim].to_vec())
        .collect();
    let assignment: Vec<u32> = assignment.iter().map(|&j| renumber[j as usize]).collect();
    let mean: Vec<f32> = (0..dim)
        .map(|d| centroids.chunks_exact(dim).map(|c| c[d]).sum::<f32>() / k as f32)
        .collect();
    let (codes, lengths) = differences(
        centroids.chunks_exact(dim).map(|c| (c, mean.as_slice())),
        dim,
    );
    let mut sizes = vec![0u32; k];
    for &j in &assignment {
        sizes[j as usize] += 1;
    }
    let stored = Centroids {
        sizes,
        mean,
        lengths,
        codes,
    };
    // Each partition's centroid in int8, and its members' differences from it as stored.
    let mut partitions: Vec<Partition> = Vec::with_capacity(k);
    let mut records = vec![Vec::new(); k];
    let mut members = vec![Vec::new(); k];
    for (i, &j) in assignment.iter().enumerate() {
        members[j as usize].push(i);
    }
    let mut values = Vec::with_capacity(dim);
    for (j, members) in members.iter().enumerate() {
        let mut centroid = Vec::with_capacity(dim);
        let centroid_scale = quantize_into(&centroids[j * dim..(j + 1) * dim], &mut centroid);
        let base: Vec<f32> = centroid
            .iter()
            .map(|&x| x as f32 * centroid_scale)
            .collect();
        let (codes, lengths) = differences(members.iter().map(|&i| (row(i), base.as_slice())), dim);
        let mut last = 0;
        let chunk_gaps = members
            .iter()
            .map(|&i| {
                let gap = i as u32 - last;
                last = i as u32;
                gap
            })
            .collect();
        for (r, &i) in members.iter().enumerate() {
            values.clear();
            let scale = quantize_into(row(i), &mut values);
            let id = super::record_id(first_records + j as u32, r as u32);
            super::encode_record(&values, scale, id, &mut records[j]);
        }
        partitions.push(Partition {
            centroid,
            centroid_scale,
            chunk_gaps,
            lengths,
            codes,
        });
    }
    (stored, partitions, records)
}

/// An order of the `centroids` that keeps near ones together: the set split in two at the
/// median of its spread along the line between two of its most distant members (found by two
/// sweeps), and each half ordered the same way. The partitions a query probes, its nearest, then
/// lie in a few runs of adjacent fragments, which a browser fetches in a few range requests.
fn locality_order(centroids: &[f32], dim: usize) -> Vec<usize> {
    fn split<'c>(ids: &mut [usize], row: &dyn Fn(usize) -> &'c [f32]) {
        if ids.len() <= 2 {
            return;
        }
        let farthest = |from: usize, ids: &[usize]| {
            let mut best = (f32::INFINITY, from);
            for &i in ids {
                let s = dot(row(from), row(i));
                if s < best.0 {
                    best = (s, i);
                }
            }
            best.1
        };
        let a = farthest(ids[0], ids);
        let b = farthest(a, ids);
        let axis: Vec<f32> = row(a).iter().zip(row(b)).map(|(x, y)| x - y).collect();
        let mut keyed: Vec<(f32, usize)> = ids.iter().map(|&i| (dot(row(i), &axis), i)).collect();
        keyed.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        for (id, (_, i)) in ids.iter_mut().zip(keyed) {
            *id = i;
        }
        let (left, right) = ids.split_at_mut(ids.len() / 2);
        split(left, row);
        split(right, row);
    }
    let mut ids: Vec<usize> = (0..centroids.len() / dim).collect();
    split(&mut ids, &|i| &centroids[i * dim..(i + 1) * dim]);
    ids
}

/// The binary codes and lengths of each `(vector, base)`'s difference `vector − base`.
fn differences<'a>(
    pairs: impl Iterator<Item = (&'a [f32], &'a [f32])>,
    dim: usize,
) -> (Vec<u8>, Lengths) {
    let mut codes = Vec::new();
    let mut lengths = Vec::new();
    let mut difference = vec![0f32; dim];
    for (v, base) in pairs {
        difference
            .iter_mut()
            .zip(v.iter().zip(base))
            .for_each(|(d, (x, b))| *d = x - b);
        codes.extend(binary_code(&difference));
        lengths.push(dot(&difference, &difference).sqrt());
    }
    let scale = lengths.iter().fold(0f32, |m, &l| m.max(l));
    let bytes = lengths
        .iter()
        .map(|&l| {
            if scale > 0.0 {
                (l / scale * 255.0).round() as u8
            } else {
                0
            }
        })
        .collect();
    (codes, Lengths { scale, bytes })
}

/// Writes `index` as a fragmented layout into `dir`: packs (and `rows`, the static rows' packs
/// its `statics` names), then the meta file by rename, then the packs the previous index named
/// and this one does not are removed (nothing else).
pub fn write(
    index: &Index,
    dir: &Path,
    options: &Options,
    rows: &[(String, Vec<u8>)],
) -> Result<Layout> {
    let owned = owned(dir).packs;
    let mut layout = layout(index, options)?;
    layout.packs.extend(rows.iter().cloned());
    save_packs(&layout.packs, dir)?;
    let staging = dir.join(format!(".{META_FILE}.partial"));
    std::fs::write(&staging, &layout.meta)?;
    std::fs::rename(&staging, dir.join(META_FILE))?;
    remove_owned(dir, &owned, layout.packs.iter().map(|(n, _)| n.as_str()))?;
    Ok(layout)
}
