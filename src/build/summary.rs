//! Document summaries (native, at build time): a few of a document's own sentences that say
//! what it is about, extractive, never generated. With chunk vectors, the sentences closest in
//! meaning to the document's centroid (the normalized mean of its chunk vectors), taken from
//! its most central chunks; without, the sentences with the most BM25 weight for the words of
//! its title and headings. Either way, at most `MAX_SENTENCES` sentences and about
//! `MAX_CHARS` bytes, in the order the document has them.

use std::collections::HashMap;

use unicode_segmentation::UnicodeSegmentation;

use super::chunk_embedder::{embed_all, ChunkEmbedder};
use crate::analyze::Analyzer;
use crate::error::Result;
use crate::index::lexical::LexicalIndex;
use crate::index::{folded_text, Chunk, Document};

/// The most sentences in a summary.
pub const MAX_SENTENCES: usize = 3;
/// About how long a summary may be, in bytes of UTF-8 (320 letters of English, about 100 of
/// Chinese): sentences are added while they fit (the best always is, cut at a word boundary).
pub const MAX_CHARS: usize = crate::index::summary_chars::MAX;
/// How many of a document's most central chunks offer sentences to the model, and how many
/// sentences at most: a summary costs about one more chunk's worth of model time a document.
const CENTRAL_CHUNKS: usize = 2;
const CANDIDATES: usize = 8;
/// Sentences the lexical method reads from a document.
const LEXICAL_SENTENCES: usize = 200;

/// A sentence of a chunk: which chunk, where in its text, and the text.
struct Sentence<'a> {
    chunk: usize,
    at: usize,
    text: &'a str,
}

fn sentences_of(chunks: &[Chunk], ids: impl Iterator<Item = usize>) -> Vec<Sentence<'_>> {
    ids.flat_map(|chunk| {
        chunks[chunk]
            .text
            .split_sentence_bound_indices()
            .map(move |(at, text)| Sentence {
                chunk,
                at,
                text: text.trim(),
            })
    })
    .filter(|s| s.text.chars().any(char::is_alphanumeric))
    .collect()
}

/// The chosen sentences (by score, best first), put back in document order and joined.
fn compose(chosen: Vec<&Sentence<'_>>) -> Option<String> {
    // Taken best first while they fit (the best always, cut at a word, or a character, if it
    // must be), then put in document order.
    let mut kept: Vec<(&Sentence, &str)> = Vec::new();
    let mut used = 0;
    for sentence in chosen {
        let room = MAX_CHARS.saturating_sub(used + 1);
        let text = if sentence.text.len() <= room {
            sentence.text
        } else if kept.is_empty() {
            let words = sentence
                .text
                .unicode_word_indices()
                .map(|(i, w)| i + w.len());
            let chars = sentence.text.char_indices().map(|(i, c)| i + c.len_utf8());
            let cut = words.take_while(|&end| end <= room).last();
            let cut = cut
                .or_else(|| chars.take_while(|&end| end <= room).last())
                .unwrap_or(0);
            &sentence.text[..cut]
        } else {
            continue;
        };
        used += text.len() + 1;
        kept.push((sentence, text));
    }
    kept.sort_by_key(|(s, _)| (s.chunk, s.at));
    let mut summary = String::new();
    for (sentence, text) in kept {
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str(text);
        if text.len() < sentence.text.len() {
            summary.push('…');
        }
    }
    (!summary.trim().is_empty()).then_some(summary)
}

/// The `MAX_SENTENCES` best of `sentences` by `score`, ties to the earlier.
fn best<'s, 'a>(
    sentences: &'s [Sentence<'a>],
    score: impl Fn(usize) -> f32,
) -> Vec<&'s Sentence<'a>> {
    let scores: Vec<f32> = (0..sentences.len()).map(score).collect();
    let mut order: Vec<usize> = (0..sentences.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .take(MAX_SENTENCES)
        .map(|i| &sentences[i])
        .collect()
}

/// Each document's chunk ids (a document's chunks are stored together).
fn chunks_by_document(documents: &[Document], chunks: &[Chunk]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = vec![0..0; documents.len()];
    let mut start = 0;
    while start < chunks.len() {
        let doc = chunks[start].doc as usize;
        let end = start
            + chunks[start..]
                .iter()
                .take_while(|c| c.doc as usize == doc)
                .count();
        ranges[doc] = start..end;
        start = end;
    }
    ranges
}

/// Summaries by BM25 against each document's title and headings.
pub fn lexical(
    documents: &[Document],
    chunks: &[Chunk],
    lexical: &LexicalIndex,
    analyzer: &Analyzer,
) -> Vec<Option<String>> {
    let ranges = chunks_by_document(documents, chunks);
    documents
        .iter()
        .zip(ranges)
        .map(|(document, range)| {
            let mut about = document.title.clone();
            for heading in range.clone().flat_map(|c| &chunks[c].heading_path) {
                about.push('\n');
                about.push_str(heading);
            }
            let mut query = analyzer.terms(&about);
            query.sort_unstable();
            query.dedup();
            let sentences: Vec<Sentence> = sentences_of(chunks, range)
                .into_iter()
                .take(LEXICAL_SENTENCES)
                .collect();
            let terms: Vec<Vec<String>> =
                sentences.iter().map(|s| analyzer.terms(s.text)).collect();
            let average =
                terms.iter().map(Vec::len).sum::<usize>().max(1) as f32 / terms.len().max(1) as f32;
            let params = lexical.params();
            let score = |i: usize| {
                let length = terms[i].len() as f32;
                query
                    .iter()
                    .filter_map(|q| {
                        let tf = terms[i].iter().filter(|t| *t == q).count() as f32;
                        let idf = lexical.idf(q)?;
                        (tf > 0.0).then(|| {
                            idf * tf * (params.k1 + 1.0)
                                / (tf + params.k1 * (1.0 - params.b + params.b * length / average))
                        })
                    })
                    .sum::<f32>()
            };
            // With nothing of the title in the text, the document's opening says what it is.
            let scored = (0..sentences.len()).any(|i| score(i) > 0.0);
            compose(if scored {
                best(&sentences, score)
            } else {
                sentences.iter().take(MAX_SENTENCES).collect()
            })
        })
        .collect()
}

/// Summaries by closeness to each document's centroid; `vectors` are the chunk vectors, flat.
pub fn semantic(
    documents: &[Document],
    chunks: &[Chunk],
    vectors: &[f32],
    embedder: &dyn ChunkEmbedder,
    previous: &HashMap<(String, String), Option<String>>,
) -> Result<Vec<Option<String>>> {
    let dim = embedder.dimension();
    let vector = |c: usize| &vectors[c * dim..(c + 1) * dim];
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let ranges = chunks_by_document(documents, chunks);
    let mut candidates: Vec<(Vec<Sentence>, Vec<f32>)> = Vec::with_capacity(documents.len());
    // A document an earlier build summarized, with the same text, keeps its summary.
    let mut reused: Vec<Option<Option<String>>> = Vec::with_capacity(documents.len());
    for (document, range) in documents.iter().zip(ranges) {
        let text = folded_text(&chunks[range.clone()]);
        reused.push(previous.get(&(document.id.clone(), text)).cloned());
        if reused.last().is_some_and(Option::is_some) {
            candidates.push((Vec::new(), Vec::new()));
            continue;
        }
        let mut centroid = vec![0f32; dim];
        for c in range.clone() {
            centroid
                .iter_mut()
                .zip(vector(c))
                .for_each(|(a, b)| *a += b);
        }
        let norm = dot(&centroid, &centroid).sqrt().max(f32::MIN_POSITIVE);
        centroid.iter_mut().for_each(|a| *a /= norm);
        let mut central: Vec<usize> = range.collect();
        central.sort_by(|&a, &b| {
            dot(vector(b), &centroid)
                .total_cmp(&dot(vector(a), &centroid))
                .then(a.cmp(&b))
        });
        central.truncate(CENTRAL_CHUNKS);
        central.sort_unstable();
        // As many from each central chunk (its first ones), so each has its say.
        let sentences: Vec<Sentence> = central
            .into_iter()
            .flat_map(|c| {
                sentences_of(chunks, std::iter::once(c))
                    .into_iter()
                    .take(CANDIDATES / CENTRAL_CHUNKS)
            })
            .collect();
        candidates.push((sentences, centroid));
    }
    // Documents whose candidates all fit need no model call.
    let fits = |s: &[Sentence]| {
        s.len() <= MAX_SENTENCES && s.iter().map(|s| s.text.len() + 1).sum::<usize>() <= MAX_CHARS
    };
    let texts: Vec<String> = candidates
        .iter()
        .filter(|(s, _)| !fits(s))
        .flat_map(|(s, _)| s.iter().map(|s| s.text.to_string()))
        .collect();
    let embedded = embed_all(embedder, &texts, &|_, _| {})?;
    let mut next = 0;
    Ok(candidates
        .iter()
        .zip(reused)
        .map(|((sentences, centroid), reused)| {
            if let Some(summary) = reused {
                return summary;
            }
            if fits(sentences) {
                return compose(sentences.iter().collect());
            }
            let first = next;
            next += sentences.len();
            compose(best(sentences, |i| {
                dot(
                    &embedded[(first + i) * dim..(first + i + 1) * dim],
                    centroid,
                )
            }))
        })
        .collect())
}

/// Stores each document's summary, except where it is all of the document's text: a short
/// document is its own summary (`Index::summary`), and the index does not hold its text twice.
pub fn keep(documents: &mut [Document], chunks: &[Chunk], summaries: Vec<Option<String>>) {
    let ranges = chunks_by_document(documents, chunks);
    for ((document, summary), range) in documents.iter_mut().zip(summaries).zip(ranges) {
        let whole = folded_text(&chunks[range]);
        let folded = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        document.summary = summary.filter(|s| folded(s) != whole);
    }
}
