//! What the engine reads of the fragments held: `Source` for `Fragmented` (term and word shards as
//! a lexical index, the vector side's probes, binary-code scan and re-scoring, fields, dates, and
//! the chunks shown as a small `Index`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use super::super::{default_probes, CodeQuery, LinkedDocument, TermShard};
use crate::error::{Error, Result};
use crate::hit::{SearchMode, SearchOptions};
use crate::index::lexical::{least_length, LexicalIndex, Postings};
use crate::index::vector::{dot, dot_i8, ScoredChunk};
use crate::index::{Chunk, DocLink, Document, Index, IndexSettings};
use crate::order;
use crate::search::source::{Held, Need, Source, View};
use crate::search::{self};
use crate::store::rows::StaticTable;

use super::Fragmented;

/// A word's stem is the word cut short by at most STEM_CUT characters (Snowball's longest English
/// suffixes, "ational", "fulness", are seven; the few changed letters at a stem's end are
/// missed), leaving at least STEM_MIN.
const STEM_CUT: usize = 7;
const STEM_MIN: usize = 3;
/// A prefix's completions' term shards come with its word shards when there are at most this
/// many (each about 1,000 postings, a few kB).
const COMPLETION_SHARDS: usize = 4;

/// How many of the binary scan's best candidates a semantic search re-scores with their int8
/// records by default, for each hit it asks for (`limit`), at most the pool: 50 at 10 hits, which find as much of the exact
/// top 10 as 100 did on real embeddings, for 20 kB less (`docs/benchmarks.md`). The rest of the
/// pool keeps its code estimates.
const RESCORE_PER_HIT: usize = 5;
/// At most this many by default, or `limit` if more: a search box that asks for 32 hits to group
/// them by page would otherwise fetch 160 records (a request each, mostly) for its lower pages.
const RESCORE_MOST: usize = 50;

impl Fragmented {
    /// The lexical index of the query's terms and of the words of `word_shards`, with the
    /// postings of every term whose shard is loaded.
    pub(super) fn lexical(
        &self,
        query_terms: &[String],
        word_shards: &BTreeSet<u32>,
    ) -> LexicalIndex {
        let mut words: BTreeMap<&str, &str> = BTreeMap::new();
        let mut frequencies: HashMap<&str, u32> = HashMap::new();
        for shard in word_shards.iter().filter_map(|s| self.words.get(s)) {
            for ((w, t), &f) in shard.words.iter().zip(&shard.terms).zip(&shard.frequencies) {
                words.insert(w, t);
                frequencies.insert(t, f);
            }
        }
        let mut names = order::set(words.values().copied());
        names.extend(
            query_terms
                .iter()
                .map(String::as_str)
                .filter(|t| self.has_term(t)),
        );
        let mut chunk_lengths = vec![0u32; self.documents.of_chunk.len()];
        let terms: Vec<(String, f32, f32, Postings, u32)> = names
            .iter()
            .map(|&term| {
                let loaded = self.loaded_term(term);
                let Some((_, shard, i)) = loaded else {
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
                (
                    term.to_string(),
                    shard.idf[i],
                    shard.document_idf[i],
                    postings,
                    f,
                )
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

    /// The term shards that likely hold the terms of the words beginning with `prefix`: those
    /// beginning with it, and its stems (`prefix` cut short by up to STEM_CUT characters); none
    /// if that is more than COMPLETION_SHARDS (a short prefix completes to too many).
    fn completion_shards(&self, prefix: &str) -> BTreeSet<u32> {
        let completions = self.meta.term_shards(prefix);
        if completions.len() > COMPLETION_SHARDS {
            return BTreeSet::new();
        }
        let mut shards: BTreeSet<u32> = completions.collect();
        let cuts: Vec<usize> = prefix
            .char_indices()
            .map(|(i, _)| i)
            .skip(STEM_MIN)
            .collect();
        for &cut in cuts.iter().rev().take(STEM_CUT) {
            shards.extend(self.meta.term_shard(&prefix[..cut]));
        }
        if shards.len() > COMPLETION_SHARDS {
            shards.clear();
        }
        shards
    }

    /// `term`'s shard (its number, loaded) and its place in it.
    fn loaded_term(&self, term: &str) -> Option<(u32, &TermShard, usize)> {
        let s = self.meta.term_shard(term)?;
        let shard = self.terms.get(&s)?;
        let i = shard
            .terms
            .binary_search_by(|t| t.as_str().cmp(term))
            .ok()?;
        Some((s, shard, i))
    }

    /// The fragments of the partitions whose centroids are nearest `query`.
    fn probes(
        &self,
        query: &[f32],
        codes: &CodeQuery,
        options: &SearchOptions,
    ) -> Result<Vec<u32>> {
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
                let twice =
                    u32::try_from(search::pool(options).saturating_mul(2)).unwrap_or(u32::MAX);
                default_probes(
                    scored.iter().map(|s| centroids.sizes[s.chunk as usize]),
                    budget.max(twice),
                )
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
            for (i, (gap, code)) in p
                .chunk_gaps
                .iter()
                .zip(p.codes.chunks_exact(bytes))
                .enumerate()
            {
                chunk += gap;
                if mask.is_none_or(|m| m[chunk as usize]) {
                    scored.push((
                        codes.estimate(base, p.lengths.get(i), code),
                        chunk,
                        records,
                        i as u32,
                    ));
                }
            }
        }
        let pool = search::pool(options);
        let rescore = options.rescore.map_or_else(
            || match options.mode {
                // Fused with the lexical signal, the scan's estimates rank as well as re-scored
                // vectors do (docs/benchmarks.md), without the round their records cost.
                SearchMode::Hybrid => 0,
                _ => RESCORE_PER_HIT
                    .saturating_mul(options.limit as usize)
                    .min(RESCORE_MOST.max(options.limit as usize))
                    .min(pool),
            },
            |r| r as usize,
        );
        order::top_by(&mut scored, rescore.max(pool), |a, b| {
            b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
        });
        let rescore = rescore.min(scored.len());
        (scored, rescore)
    }

    /// An index of the `chunks` (loaded) and their documents, with those documents' links (those
    /// whose links fragment is added) and the documents at the links' other ends; and the
    /// number of each of its chunks and documents in the whole index.
    fn build_view(&self, chunks: &[u32], lexical: LexicalIndex) -> (Index, Vec<u32>, Vec<u32>) {
        // Every document the fragments read here describe, in full or as a link's other end.
        let mut known: BTreeMap<u32, Document> = BTreeMap::new();
        let mut links: Vec<DocLink> = Vec::new();
        let mut hit_docs = BTreeSet::new();
        let mut found: Vec<&Chunk> = Vec::with_capacity(chunks.len());
        for &c in chunks {
            let text = &self.text[&self.text_fragment(c)];
            let chunk = &text.chunks[(c - text.first_chunk) as usize];
            found.push(chunk);
            for (d, document) in &text.documents {
                known.insert(*d, document.clone());
            }
            if !hit_docs.insert(chunk.doc) {
                continue;
            }
            let held = self.links_fragment(chunk.doc);
            if let Some(l) = held.and_then(|f| self.links.get(&f)) {
                let doc = chunk.doc;
                links.extend(
                    l.links
                        .iter()
                        .filter(|k| k.from == doc || k.to == doc)
                        .cloned(),
                );
                for (d, linked) in &l.linked {
                    known.entry(*d).or_insert_with(|| stub(linked));
                }
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
            .map(|d| known.remove(d).unwrap_or_default())
            .collect();
        let view_chunks = found
            .into_iter()
            .map(|chunk| Chunk {
                doc: position[&chunk.doc],
                ..chunk.clone()
            })
            .collect();
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
        (index, chunks.to_vec(), wanted.into_iter().collect())
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
        need.fragments.extend(
            self.meta
                .word_shards(prefix)
                .filter(|s| !self.words.contains_key(s)),
        );
        // The round after would want the postings of what the words stand for: where few term
        // shards could hold them, they come in this round instead.
        need.fragments.extend(
            self.completion_shards(prefix)
                .into_iter()
                .filter(|s| !self.terms.contains_key(s)),
        );
    }
    /// Whether the index has `term` (its term shard loaded).
    fn has_term(&self, term: &str) -> bool {
        self.loaded_term(term).is_some()
    }

    /// By the term's number among all the index's terms, from its loaded term shard.
    fn term_weight(&self, term: &str) -> Option<(u32, f32)> {
        let (s, shard, i) = self.loaded_term(term)?;
        Some((
            self.meta.term_ids[s as usize].checked_add(i as u32)?,
            shard.idf[i],
        ))
    }
    fn lexicon(&self, terms: &[String], prefixes: &[String]) -> Held<'_, LexicalIndex> {
        let shards = order::set(prefixes.iter().flat_map(|p| self.meta.word_shards(p)));
        Held::Owned(Box::new(self.lexical(terms, &shards)))
    }
    fn want_vectors(&self, need: &mut Need) {
        if self.centroids.is_none() {
            need.fragments.push(self.meta.centroids_fragment());
        }
    }
    fn want_nearest(&self, query: &[f32], options: &SearchOptions, need: &mut Need) {
        if self.centroids.is_some() {
            if let Ok(probes) = self.probes(query, &CodeQuery::new(query), options) {
                need.fragments.extend(
                    probes
                        .into_iter()
                        .filter(|p| !self.partitions.contains_key(p)),
                );
            }
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
        need.fragments
            .extend(probes.iter().filter(|p| !self.partitions.contains_key(p)));
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
        hits.extend(
            estimated
                .iter()
                .map(|&(estimate, chunk, _, _)| ScoredChunk {
                    chunk,
                    score: estimate.min(floor),
                }),
        );
        crate::order::top_k(&mut hits, search::pool(options), |h| h.score, |h| h.chunk);
        Ok(hits)
    }
    fn want_field(&self, field: &str, need: &mut Need) {
        need.fragments.extend(
            self.meta
                .field_fragment(field)
                .filter(|n| !self.fields.contains_key(n)),
        );
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
            need.fragments.push(f);
        }
    }
    fn want_links(&self, doc: u32, need: &mut Need) {
        if let Some(f) = self
            .links_fragment(doc)
            .filter(|f| !self.links.contains_key(f))
        {
            need.fragments.push(f);
        }
    }
    /// From its added links fragment.
    fn links_from(&self, doc: u32) -> Vec<DocLink> {
        let Some(l) = self.links_fragment(doc).and_then(|f| self.links.get(&f)) else {
            return Vec::new();
        };
        let mut links: Vec<DocLink> = l.links.iter().filter(|k| k.from == doc).cloned().collect();
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

    fn view<'a>(&'a self, chunks: &[u32], lexical: Held<'a, LexicalIndex>) -> View<'a> {
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
        ..Document::default()
    }
}
