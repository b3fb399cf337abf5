//! The lexical index: an inverted index from analyzed terms to the chunks that contain them,
//! scored with BM25. Terms are kept sorted (binary search); a posting list stores chunk-id gaps
//! and term frequencies, which the index file writes as varints. Each term's IDFs are computed
//! once at build time and stored, so scores are bit-identical on every target.
//!
//! A chunk's score is its own BM25 plus the BM25 of its whole document (passage and document
//! evidence, as in Callan 1994): a passage of a document that is about the query outranks an
//! equal passage of one that mentions it in passing. Document statistics come from the same
//! postings (a document's chunks are numbered together), so they cost no extra postings.
//!
//! A passage's BM25 reads its chunk's length to 4 significant bits (`length_byte`), as Lucene
//! reads a document's length from its norm byte: the fragmented index then sends one small byte
//! with each posting instead of the exact length, which was half a posting's bytes, and both
//! layouts score with the same numbers. Documents' lengths stay exact.
//!
//! The index also keeps every indexed word as it was written, folded but not stemmed, with its
//! term, so a query word can stand for several terms: the words a prefix begins, or the words
//! within an edit distance (`search::expand`). Such a word scores as the best of its terms,
//! each weighted below an exact match.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.2, b: 0.75 }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Postings {
    /// Chunk ids as gaps from the previous one (the first from 0).
    pub(crate) chunk_gaps: Vec<u32>,
    pub(crate) freqs: Vec<u32>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LexicalIndex {
    pub(crate) params: Bm25Params,
    pub(crate) terms: Vec<String>,
    /// Each term's IDF over chunks, and over documents: derived from the postings and the
    /// document table when the index is built or read (`attach_documents`), not stored.
    #[serde(skip)]
    pub(crate) idf: Vec<f32>,
    #[serde(skip)]
    pub(crate) document_idf: Vec<f32>,
    pub(crate) postings: Vec<Postings>,
    /// Length of every chunk in terms.
    pub(crate) chunk_lengths: Vec<u32>,
    pub(crate) average_length: f32,
    /// Every indexed word (folded, unstemmed), sorted by bytes, and the term each one is
    /// indexed as: prefix ranges and Levenshtein automata run on them (`words_matching`).
    pub(crate) words: Vec<String>,
    pub(crate) word_terms: Vec<u32>,
    /// Which document each chunk belongs to, and the documents' lengths: derived from the
    /// index's chunks when the index is built or read, not stored twice.
    #[serde(skip)]
    pub(crate) documents: std::sync::Arc<Documents>,
    /// A partial index's chunk frequency of each term, known before its postings are loaded
    /// (empty: the postings' lengths).
    #[serde(skip)]
    frequencies: Vec<u32>,
}

#[derive(Debug, Default)]
pub(crate) struct Documents {
    pub(crate) of_chunk: Vec<u32>,
    /// Length of every document in terms (the sum of its chunks').
    pub(crate) lengths: Vec<u32>,
    pub(crate) average_length: f32,
}

impl Documents {
    fn new(of_chunk: Vec<u32>, chunk_lengths: &[u32]) -> Self {
        let mut lengths = vec![0u32; of_chunk.last().map_or(0, |&d| d as usize + 1)];
        for (&document, &length) in of_chunk.iter().zip(chunk_lengths) {
            lengths[document as usize] += length;
        }
        Documents {
            average_length: average(&lengths),
            lengths,
            of_chunk,
        }
    }
}

/// A chunk's BM25 score for a query: its passage score plus its document's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalHit {
    pub chunk: u32,
    pub score: f32,
    /// The part of `score` that is the BM25 of the chunk's whole document.
    pub document_score: f32,
}

/// One chunk's analyzed terms and the document it belongs to.
pub struct ChunkTerms {
    pub document: u32,
    pub terms: Vec<String>,
}

/// A query word, and the terms it may match with their weights (1 for the word's own term).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryWord {
    pub alternatives: Vec<(u32, f32)>,
}

impl LexicalIndex {
    /// Builds the index from each chunk's analyzed terms, in chunk order; a document's chunks
    /// come together.
    pub fn build(params: Bm25Params, chunks: impl IntoIterator<Item = ChunkTerms>) -> Self {
        let mut by_term: BTreeMap<String, Postings> = BTreeMap::new();
        let mut last_chunk: BTreeMap<String, u32> = BTreeMap::new();
        let mut chunk_lengths = Vec::new();
        let mut chunk_documents = Vec::new();
        for (chunk, ChunkTerms { document, terms }) in chunks.into_iter().enumerate() {
            let chunk = chunk as u32;
            chunk_lengths.push(terms.len() as u32);
            chunk_documents.push(document);
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            for term in terms {
                *counts.entry(term).or_default() += 1;
            }
            for (term, freq) in counts {
                let previous = last_chunk.insert(term.clone(), chunk).unwrap_or(0);
                let postings = by_term.entry(term).or_default();
                postings.chunk_gaps.push(chunk - previous);
                postings.freqs.push(freq);
            }
        }
        let documents = std::sync::Arc::new(Documents::new(chunk_documents, &chunk_lengths));
        let (terms, postings): (Vec<String>, Vec<Postings>) = by_term.into_iter().unzip();
        let (idf, document_idf) = idf_tables(&postings, &documents);
        LexicalIndex {
            params,
            terms,
            idf,
            document_idf,
            postings,
            average_length: average(&chunk_lengths),
            chunk_lengths,
            words: Vec::new(),
            word_terms: Vec::new(),
            documents,
            frequencies: Vec::new(),
        }
    }

    /// Records the words the terms were made from (word, term): each word once, with its term.
    /// A word whose term is not indexed is left out.
    pub fn set_words(&mut self, words: impl IntoIterator<Item = (String, String)>) {
        let words: BTreeMap<String, String> = words.into_iter().collect();
        self.words.clear();
        self.word_terms.clear();
        for (word, term) in words {
            if let Ok(t) = self.terms.binary_search(&term) {
                self.words.push(word);
                self.word_terms.push(t as u32);
            }
        }
    }

    /// The position of an analyzed term, if the index has it.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.terms
            .binary_search_by(|t| t.as_str().cmp(term))
            .ok()
            .map(|i| i as u32)
    }

    pub fn term(&self, id: u32) -> &str {
        &self.terms[id as usize]
    }

    /// How many chunks contain term `id`.
    pub fn chunk_frequency(&self, id: u32) -> usize {
        match self.frequencies.get(id as usize) {
            Some(&f) => f as usize,
            None => self.postings[id as usize].freqs.len(),
        }
    }

    /// The positions in `words` of the words `automaton` matches, ascending. The sorted words
    /// are walked as the trie they spell: each word runs the automaton only past the prefix it
    /// shares with the word before, and a prefix the automaton can no longer match skips every
    /// word that starts with it (a binary search). This is what an FST of the words would do,
    /// without building one at load (fst's builder also links a 16 kB CRC-32C table).
    pub fn words_matching<A: fst::Automaton>(&self, automaton: &A) -> Vec<usize> {
        let mut found = Vec::new();
        // states[i]: the automaton's state after the first i bytes of `prefix`.
        let mut states = vec![automaton.start()];
        let mut prefix: &[u8] = b"";
        let mut i = 0;
        while i < self.words.len() {
            let word = self.words[i].as_bytes();
            let shared = prefix.iter().zip(word).take_while(|(a, b)| a == b).count();
            states.truncate(shared + 1);
            let mut dead = None;
            for (at, &byte) in word.iter().enumerate().skip(shared) {
                let next = automaton.accept(&states[at], byte);
                if !automaton.can_match(&next) {
                    dead = Some(at + 1);
                    break;
                }
                states.push(next);
            }
            match dead {
                Some(length) => {
                    let hopeless = &word[..length];
                    i += self.words[i..].partition_point(|w| w.as_bytes().starts_with(hopeless));
                    prefix = &word[..length - 1];
                }
                None => {
                    if automaton.is_match(&states[word.len()]) {
                        found.push(i);
                    }
                    prefix = word;
                    i += 1;
                }
            }
        }
        found
    }

    /// The positions in `words` of the words that start with `typed`, ascending.
    pub fn words_starting(&self, typed: &str) -> std::ops::Range<usize> {
        let start = self.words.partition_point(|w| w.as_str() < typed);
        start..start + self.words[start..].partition_point(|w| w.starts_with(typed))
    }

    /// The term word `position` of `words` is indexed as.
    pub fn term_of_word(&self, position: usize) -> u32 {
        self.word_terms[position]
    }

    /// Gives an index read from a file its chunk → document table (`of_chunk[c]`: the document of
    /// chunk `c`, ascending), which the file stores once, with the chunks. Call after `validate`.
    /// Its IDF tables are derived then.
    pub fn attach_documents(&mut self, of_chunk: Vec<u32>) {
        self.documents = std::sync::Arc::new(Documents::new(of_chunk, &self.chunk_lengths));
        (self.idf, self.document_idf) = idf_tables(&self.postings, &self.documents);
    }

    /// An index of some terms only (a fragmented index's loaded shards), scoring each exactly
    /// as the whole index does: `chunk_lengths` holds the length of every chunk those terms'
    /// postings name (others 0), and `documents` the whole index's document table and averages,
    /// so every score is the same bits. Each term comes with its chunk frequency (its postings
    /// may not be loaded yet, when only a word names it), and `words` (sorted) name terms by
    /// position.
    pub(crate) fn partial(
        params: Bm25Params,
        terms: Vec<(String, f32, f32, Postings, u32)>,
        words: Vec<(String, u32)>,
        chunk_lengths: Vec<u32>,
        average_length: f32,
        documents: std::sync::Arc<Documents>,
    ) -> Self {
        let n = terms.len();
        let (mut idf, mut document_idf) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut postings, mut frequencies) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let terms = terms
            .into_iter()
            .map(|(term, i, d, p, f)| {
                idf.push(i);
                document_idf.push(d);
                postings.push(p);
                frequencies.push(f);
                term
            })
            .collect();
        let (words, word_terms) = words.into_iter().unzip();
        LexicalIndex {
            params,
            terms,
            idf,
            document_idf,
            postings,
            chunk_lengths,
            average_length,
            words,
            word_terms,
            documents,
            frequencies,
        }
    }

    pub fn chunk_count(&self) -> usize {
        self.chunk_lengths.len()
    }

    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    pub fn params(&self) -> Bm25Params {
        self.params
    }

    /// Checks what the file format cannot: that every array agrees with the others.
    pub fn validate(&self, chunk_count: usize) -> Result<(), String> {
        if self.chunk_lengths.len() != chunk_count {
            return Err(format!(
                "lexical index covers {} chunks, the index has {chunk_count}",
                self.chunk_lengths.len()
            ));
        }
        if self.postings.len() != self.terms.len() {
            return Err("lexical index term tables differ in length".into());
        }
        for postings in &self.postings {
            if postings.freqs.len() != postings.chunk_gaps.len() {
                return Err("a posting list's chunk ids and frequencies differ in length".into());
            }
            let last: u64 = postings.chunk_gaps.iter().map(|&g| g as u64).sum();
            if !postings.chunk_gaps.is_empty() && last >= chunk_count as u64 {
                return Err("a posting list points past the last chunk".into());
            }
        }
        if self.words.len() != self.word_terms.len()
            || self.words.windows(2).any(|w| w[0] >= w[1])
            || self
                .word_terms
                .iter()
                .any(|&t| t as usize >= self.terms.len())
        {
            return Err(
                "the lexical index's word list is not sorted, or names a term it does not have"
                    .into(),
            );
        }
        Ok(())
    }

    /// The stored IDF of an analyzed term, if the index has it.
    pub fn idf(&self, term: &str) -> Option<f32> {
        self.term_id(term).map(|i| self.idf[i as usize])
    }

    /// The `limit` best chunks for the analyzed query terms, best first; ties go to the lower
    /// chunk id. A chunk scores when it contains a query term; its score is its passage BM25 plus
    /// its document's BM25. A query term that repeats counts once per occurrence, as in Lucene.
    /// With `allowed`, only chunks marked true are returned (a document's score still counts all
    /// of its chunks).
    pub fn search(
        &self,
        query_terms: &[String],
        limit: usize,
        allowed: Option<&[bool]>,
    ) -> Vec<LexicalHit> {
        let words: Vec<QueryWord> = query_terms
            .iter()
            .filter_map(|t| self.term_id(t))
            .map(|t| QueryWord {
                alternatives: vec![(t, 1.0)],
            })
            .collect();
        self.search_words(&words, limit, allowed)
    }

    /// [`search`](Self::search) for query words that may stand for several terms: a word adds,
    /// to each chunk and document, the best of its weighted terms' BM25s (with one term of
    /// weight 1, exactly that term's BM25).
    pub fn search_words(
        &self,
        query: &[QueryWord],
        limit: usize,
        allowed: Option<&[bool]>,
    ) -> Vec<LexicalHit> {
        let mut passage_scores = vec![0f32; self.chunk_lengths.len()];
        let mut document_scores = vec![0f32; self.documents.lengths.len()];
        let mut touched = Vec::new();
        // One word's best term score per chunk and per document, merged into the totals after.
        let mut word_passage = vec![0f32; self.chunk_lengths.len()];
        let mut word_document = vec![0f32; self.documents.lengths.len()];
        let (mut word_chunks, mut word_documents) = (Vec::new(), Vec::new());
        // A passage's BM25 length term for each length byte, as Lucene caches its norms.
        let norms: [f32; 256] = std::array::from_fn(|byte| {
            self.length_norm(byte_length(byte as u8), self.average_length)
        });
        for word in query {
            for &(t, weight) in &word.alternatives {
                let t = t as usize;
                let postings = &self.postings[t];
                // The term's frequency in the document whose chunks are being read.
                let mut document: Option<(u32, u32)> = None;
                let mut add_document = |document: Option<(u32, u32)>| {
                    if let Some((d, freq)) = document {
                        let length = self.documents.lengths[d as usize] as f32;
                        let score = weight
                            * self.bm25(
                                self.document_idf[t],
                                freq,
                                length,
                                self.documents.average_length,
                            );
                        let slot = &mut word_document[d as usize];
                        if *slot == 0.0 {
                            word_documents.push(d);
                        }
                        *slot = slot.max(score);
                    }
                };
                for (chunk, freq) in postings.chunks().zip(postings.freqs.iter().copied()) {
                    let d = self.documents.of_chunk[chunk as usize];
                    match &mut document {
                        Some((current, total)) if *current == d => *total += freq,
                        _ => add_document(document.replace((d, freq))),
                    }
                    if allowed.is_some_and(|a| !a[chunk as usize]) {
                        continue;
                    }
                    let norm = norms[length_byte(self.chunk_lengths[chunk as usize]) as usize];
                    let slot = &mut word_passage[chunk as usize];
                    if *slot == 0.0 {
                        word_chunks.push(chunk);
                    }
                    *slot = slot.max(weight * self.saturate(self.idf[t], freq, norm));
                }
                add_document(document);
            }
            for chunk in word_chunks.drain(..) {
                let slot = &mut passage_scores[chunk as usize];
                if *slot == 0.0 {
                    touched.push(chunk);
                }
                *slot += std::mem::take(&mut word_passage[chunk as usize]);
            }
            for d in word_documents.drain(..) {
                document_scores[d as usize] += std::mem::take(&mut word_document[d as usize]);
            }
        }
        let mut hits: Vec<LexicalHit> = touched
            .into_iter()
            .map(|chunk| {
                let document_score =
                    document_scores[self.documents.of_chunk[chunk as usize] as usize];
                LexicalHit {
                    chunk,
                    score: passage_scores[chunk as usize] + document_score,
                    document_score,
                }
            })
            .collect();
        crate::order::top_k(&mut hits, limit, |h| h.score, |h| h.chunk);
        hits
    }

    /// One term's BM25 in a text of `length` terms.
    fn bm25(&self, idf: f32, freq: u32, length: f32, average_length: f32) -> f32 {
        self.saturate(idf, freq, self.length_norm(length, average_length))
    }

    /// BM25's length term for a text of `length` terms: `k1 (1 - b + b length / average)`.
    fn length_norm(&self, length: f32, average_length: f32) -> f32 {
        let Bm25Params { k1, b } = self.params;
        k1 * (1.0 - b + b * length / average_length)
    }

    /// One term's BM25 from its IDF, its frequency and the text's `length_norm`.
    fn saturate(&self, idf: f32, freq: u32, norm: f32) -> f32 {
        let tf = freq as f32;
        idf * (tf * (self.params.k1 + 1.0)) / (tf + norm)
    }
}

impl Postings {
    /// The chunk ids, ascending.
    pub(crate) fn chunks(&self) -> impl Iterator<Item = u32> + '_ {
        self.chunk_gaps.iter().scan(0u32, |chunk, &gap| {
            *chunk += gap;
            Some(*chunk)
        })
    }
}

/// Significant bits a chunk's length keeps (`length_byte`).
const LENGTH_BITS: u32 = 4;

/// A chunk's length in a byte: exact below 2^`LENGTH_BITS`, above it its octave and the
/// `LENGTH_BITS` highest bits (steps of at most an eighth of the length; every u32 has a byte below 240).
/// Ascending with the length.
pub fn length_byte(length: u32) -> u8 {
    if length < 1 << LENGTH_BITS {
        return length as u8;
    }
    let octave = 32 - length.leading_zeros() - LENGTH_BITS;
    ((octave << (LENGTH_BITS - 1)) + (length >> octave)) as u8
}

/// The length BM25 reads for a `length_byte`: the middle of the lengths that have it.
pub fn byte_length(byte: u8) -> f32 {
    let (code, half) = (byte as u32, 1 << (LENGTH_BITS - 1));
    if code < 1 << LENGTH_BITS {
        return code as f32;
    }
    let octave = (code >> (LENGTH_BITS - 1)) - 1;
    let mantissa = code - (octave << (LENGTH_BITS - 1));
    debug_assert!(mantissa >= half);
    (mantissa as f32 + 0.5) * (1u64 << octave) as f32 - 0.5
}

/// The least length with `byte` as its `length_byte`: what a fragmented index, which holds the
/// byte, puts where the length goes.
pub fn least_length(byte: u8) -> u32 {
    let code = byte as u32;
    if code < 1 << LENGTH_BITS {
        return code;
    }
    let octave = (code >> (LENGTH_BITS - 1)) - 1;
    (code - (octave << (LENGTH_BITS - 1))) << octave
}

/// Each term's IDF over chunks (`bm25_idf` of how many chunks hold it) and over documents (of
/// how many documents do; a term's postings are in chunk order, and a document's chunks are
/// numbered together).
fn idf_tables(postings: &[Postings], documents: &Documents) -> (Vec<f32>, Vec<f32>) {
    postings
        .iter()
        .map(|p| term_idfs(p.chunks(), documents))
        .unzip()
}

/// A term's IDF over chunks and over documents, from its chunks (ascending).
pub(crate) fn term_idfs(chunks: impl Iterator<Item = u32>, documents: &Documents) -> (f32, f32) {
    let (mut in_chunks, mut in_documents) = (0, 0);
    let mut previous = None;
    for chunk in chunks {
        in_chunks += 1;
        let document = documents.of_chunk.get(chunk as usize).copied();
        if document != previous {
            in_documents += 1;
            previous = document;
        }
    }
    (
        bm25_idf(documents.of_chunk.len(), in_chunks),
        bm25_idf(documents.lengths.len(), in_documents),
    )
}

/// Lucene's BM25 IDF (never negative) of a term found in `found` of `count` units, with libm's
/// logarithm so that every target computes the same bits.
fn bm25_idf(count: usize, found: usize) -> f32 {
    let (count, found) = (count as f64, found as f64);
    libm::log(1.0 + (count - found + 0.5) / (found + 0.5)) as f32
}

fn average(lengths: &[u32]) -> f32 {
    let total: u64 = lengths.iter().map(|&l| l as u64).sum();
    if lengths.is_empty() {
        0.0
    } else {
        (total as f64 / lengths.len() as f64) as f32
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_length_byte_keeps_four_significant_bits() {
        let mut last = 0;
        for length in (0..70_000).chain([u32::MAX / 3, u32::MAX]) {
            let byte = length_byte(length);
            assert!(byte >= last && byte < 240, "{length}");
            last = byte;
            assert_eq!(length_byte(least_length(byte)), byte);
            assert!(least_length(byte) <= length);
            let read = byte_length(byte) as f64;
            assert!(
                (read - length as f64).abs() <= length as f64 / 16.0 + 0.5,
                "{length} read as {read}"
            );
        }
        assert_eq!(
            (
                length_byte(15),
                length_byte(16),
                length_byte(17),
                length_byte(18)
            ),
            (15, 16, 16, 17)
        );
    }

    use super::*;

    fn chunks(documents: &[(u32, &str)]) -> Vec<ChunkTerms> {
        documents
            .iter()
            .map(|(document, text)| ChunkTerms {
                document: *document,
                terms: text.split_whitespace().map(String::from).collect(),
            })
            .collect()
    }

    fn query(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// The trie walk over the sorted words finds what running the automaton over each word
    /// finds, for prefixes and typo distances 1 and 2, on words with shared prefixes, accents
    /// and multi-byte characters.
    #[test]
    fn words_matching_is_the_automaton_run_on_every_word() {
        use fst::Automaton;
        let mut words: Vec<String> = Vec::new();
        let mut seed = 7u64;
        let alphabet = ["a", "b", "c", "d", "e", "é", "ß", "東", "ab", "ca"];
        for _ in 0..3000 {
            let mut word = String::new();
            let mut n = seed % 9 + 1;
            while n > 0 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                word.push_str(alphabet[(seed >> 33) as usize % alphabet.len()]);
                n -= 1;
            }
            words.push(word);
        }
        words.sort();
        words.dedup();
        let mut index = LexicalIndex::build(Bm25Params::default(), chunks(&[(0, "x")]));
        index.terms = vec!["x".into()];
        index.words = words.clone();
        index.word_terms = vec![0; words.len()];
        let run = |a: &fst::automaton::Levenshtein, w: &str| {
            let mut state = a.start();
            for &b in w.as_bytes() {
                state = a.accept(&state, b);
            }
            a.is_match(&state)
        };
        for probe in ["abc", "cab", "éa", "東b", "ddd", "a"] {
            for distance in 1..=2 {
                let automaton = fst::automaton::Levenshtein::new(probe, distance).unwrap();
                let brute: Vec<usize> = (0..words.len())
                    .filter(|&i| run(&automaton, &words[i]))
                    .collect();
                assert_eq!(
                    index.words_matching(&automaton),
                    brute,
                    "{probe} within {distance}"
                );
            }
            let prefixed: Vec<usize> = (0..words.len())
                .filter(|&i| words[i].starts_with(probe))
                .collect();
            assert_eq!(
                index.words_starting(probe).collect::<Vec<_>>(),
                prefixed,
                "{probe}"
            );
        }
    }

    #[test]
    fn ranks_by_bm25() {
        let index = LexicalIndex::build(
            Bm25Params::default(),
            chunks(&[
                (0, "apple banana"),
                (1, "apple apple apple cherry"),
                (2, "cherry date"),
            ]),
        );
        let hits = index.search(&query("apple"), 10, None);
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![1, 0]);
        // idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)); with one chunk a document, the document's
        // BM25 equals the passage's, so the score is twice it.
        let idf = libm::log(1.0f64 + 1.5 / 2.5) as f32;
        let avg = 8.0 / 3.0;
        let expected = 2.0 * idf * 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * 2.0 / avg));
        assert!(
            (hits[1].score - expected).abs() < 1e-5,
            "{} vs {expected}",
            hits[1].score
        );
        assert!(index.search(&query("zebra"), 10, None).is_empty());
        assert_eq!(
            index
                .search(&query("apple"), 10, Some(&[true, false, true]))
                .len(),
            1
        );
        assert!(index.validate(3).is_ok());
        assert!(index.validate(2).is_err());
    }

    #[test]
    fn a_passage_of_a_document_about_the_query_ranks_first() {
        // Chunks 1 and 2 are the same text; chunk 1's document is about apples throughout.
        let index = LexicalIndex::build(
            Bm25Params::default(),
            chunks(&[
                (0, "apple orchard harvest apple"),
                (0, "apple pie recipe with cinnamon"),
                (1, "apple pie recipe with cinnamon"),
                (1, "train timetable station platform"),
            ]),
        );
        let hits = index.search(&query("apple pie"), 10, None);
        assert_eq!(
            hits.iter().map(|h| h.chunk).collect::<Vec<_>>(),
            vec![1, 2, 0]
        );
        // Chunk 3 has no query term: its document's score alone does not make it a hit.
        assert!(hits.iter().all(|h| h.chunk != 3));
        // Filtering chunk 1 out returns the others without changing their scores.
        let filtered = index.search(&query("apple pie"), 10, Some(&[true, false, true, true]));
        assert_eq!(
            filtered.iter().map(|h| h.chunk).collect::<Vec<_>>(),
            vec![2, 0]
        );
        assert_eq!(filtered[0].score, hits[1].score);
    }

    #[test]
    fn a_stored_index_scores_the_same_once_its_documents_are_attached() {
        let built = LexicalIndex::build(
            Bm25Params::default(),
            chunks(&[
                (0, "apple orchard"),
                (0, "apple pie"),
                (1, "apple pie"),
                (2, "pear"),
            ]),
        );
        let mut read: LexicalIndex =
            postcard::from_bytes(&postcard::to_allocvec(&built).unwrap()).unwrap();
        read.attach_documents(vec![0, 0, 1, 2]);
        assert_eq!(
            read.search(&query("apple pie"), 10, None),
            built.search(&query("apple pie"), 10, None)
        );
    }
}
