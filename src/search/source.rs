//! The storage seam: what the search engine reads of an index, whichever way its bytes are
//! stored. The single file holds everything and never waits; a fragmented index holds what has
//! been fetched so far and names what it still needs (`Need`), so a search is a `Step`: its
//! answer, or what to add before asking again.

use std::ops::{Deref, Range};

use serde::Serialize;
use tsify::Tsify;

use crate::error::Result;
use crate::hit::SearchOptions;
use crate::index::lexical::LexicalIndex;
use crate::index::vector::ScoredChunk;
use crate::index::{DocLink, Index, IndexSettings};
use crate::store::rows::{RowRequest, StaticTable};

/// What a search gives: its answer, or what it needs first.
#[derive(Debug)]
pub enum Step<T> {
    Done(T),
    /// Fragments, vector records and static rows to add first.
    Need(Need),
    /// Texts for the cross-encoder to score first (their scores are then added to the source).
    Score(RerankRequest),
}

/// The candidates of `query` a search reranks, which the cross-encoder has not scored together
/// yet: their chunk numbers and the text it reads of each (`indexed_text`).
#[derive(Debug, Clone, Serialize, Tsify)]
pub struct RerankRequest {
    pub model: String,
    pub query: String,
    pub chunks: Vec<u32>,
    pub texts: Vec<String>,
}

/// A step that waits on something (a step of any answer, once widened).
pub(crate) type Wait = Step<std::convert::Infallible>;

impl Wait {
    pub(crate) fn widen<T>(self) -> Step<T> {
        self.map(|never| match never {})
    }
}

impl<T> Step<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Step<U> {
        match self.done() {
            Ok(t) => Step::Done(f(t)),
            Err(wait) => wait,
        }
    }

    /// The answer, or what it waits on (as a step of any answer).
    pub fn done<U>(self) -> std::result::Result<T, Step<U>> {
        match self {
            Step::Done(t) => Ok(t),
            Step::Need(need) => Err(Step::Need(need)),
            Step::Score(request) => Err(Step::Score(request)),
        }
    }
}

/// What a search found missing so far in one round: the fragments, vector records and static
/// rows to fetch.
#[derive(Debug, Default)]
pub struct Need {
    /// In any order, perhaps more than once (the step names each once, in order).
    pub fragments: Vec<u32>,
    /// Vector records: (records fragment, record).
    pub records: Vec<(u32, u32)>,
    pub rows: Vec<RowRequest>,
}

impl Need {
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty() && self.records.is_empty() && self.rows.is_empty()
    }

    /// The step that fetches what is missing, when anything is.
    pub(crate) fn wait(&mut self) -> Option<Wait> {
        (!self.is_empty()).then(|| {
            let mut need = std::mem::take(self);
            crate::order::sort(&mut need.fragments);
            need.fragments.dedup();
            Step::Need(need)
        })
    }
}

/// A value the source either holds or built for this search.
pub enum Held<'a, T> {
    Borrowed(&'a T),
    Owned(Box<T>),
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Held::Borrowed(t) => t,
            Held::Owned(t) => t,
        }
    }
}

/// The chunks a search shows as an `Index` hits are built from: the whole index, or a small one
/// of just those chunks and the documents they need, with the source's numbers of each.
pub struct View<'a> {
    pub index: Held<'a, Index>,
    /// The source's number of each of the view's chunks, in order (None: the same numbers).
    pub chunks: Option<Vec<u32>>,
    /// The source's number of each of the view's documents, in order (None: the same numbers).
    pub documents: Option<Vec<u32>>,
}

/// `n`'s position among `numbers` (sorted), if it is one of them; `n` itself without them.
fn position(numbers: &Option<Vec<u32>>, n: u32) -> Option<u32> {
    match numbers {
        Some(numbers) => numbers.binary_search(&n).ok().map(|i| i as u32),
        None => Some(n),
    }
}

impl View<'_> {
    /// Chunk `chunk`'s number in the view, if it is in it.
    pub fn chunk(&self, chunk: u32) -> Option<u32> {
        position(&self.chunks, chunk)
    }

    /// Document `doc`'s number in the view, if it is in it.
    pub fn document(&self, doc: u32) -> Option<u32> {
        position(&self.documents, doc)
    }

    /// A mask over the source's documents, as a mask over the view's.
    pub fn document_mask(&self, mask: &[bool]) -> Vec<bool> {
        match &self.documents {
            Some(documents) => documents.iter().map(|&d| mask[d as usize]).collect(),
            None => mask.to_vec(),
        }
    }
}

/// What the search engine reads of an index. Each `want_*` adds to `need` what the source must
/// fetch before the matching reader can answer; a source that holds everything adds nothing
/// (the default).
pub trait Source {
    fn settings(&self) -> &IndexSettings;
    /// The analyzer the index was built with: what a `Query` of it is made with.
    fn analyzer(&self) -> crate::analyze::Analyzer {
        crate::analyze::Analyzer::new(self.settings().analyzer.clone())
    }
    fn chunk_count(&self) -> usize;
    fn document_count(&self) -> usize;
    fn doc_of(&self, chunk: u32) -> u32;
    /// Document `doc`'s chunks (stored together, in order).
    fn chunks_of(&self, doc: u32) -> Range<u32>;
    fn has_vectors(&self) -> bool;
    /// The static tier, with the rows it holds.
    fn statics(&self) -> Option<&StaticTable>;
    /// Whether the source fetches what a search is missing (a step names it), or the search does
    /// without (the single file's static rows not added yet: the query is not embedded).
    fn fetches(&self) -> bool {
        false
    }

    /// The postings and IDFs of `terms`.
    fn want_terms<'t>(&self, _terms: &mut dyn Iterator<Item = &'t str>, _need: &mut Need) {}
    /// The indexed words that begin with `prefix`.
    fn want_words(&self, _prefix: &str, _need: &mut Need) {}
    /// Whether the index has `term` (its postings wanted before).
    fn has_term(&self, term: &str) -> bool;
    /// `term`'s number among all the index's terms and its IDF (the static tier's weights).
    fn term_weight(&self, term: &str) -> Option<(u32, f32)>;
    /// A lexical index holding the postings of `terms` and the words under `prefixes`, with
    /// every term those words stand for (their postings as far as they were wanted).
    fn lexicon(&self, terms: &[String], prefixes: &[String]) -> Held<'_, LexicalIndex>;

    /// What a vector search needs before it knows the query.
    fn want_vectors(&self, _need: &mut Need) {}
    /// What a vector search for `query` will read first, as far as the source can tell before
    /// the filter's fields are in (so it comes in the round that fetches the query's terms).
    fn want_nearest(&self, _query: &[f32], _options: &SearchOptions, _need: &mut Need) {}
    /// The chunks nearest `query` among those `mask` allows, best first, the pool
    /// (`search::pool`) of them; what it still needs goes into `need` (and the answer is then
    /// incomplete, to be asked for again).
    fn nearest(
        &self,
        query: &[f32],
        mask: Option<&[bool]>,
        options: &SearchOptions,
        need: &mut Need,
    ) -> Result<Vec<ScoredChunk>>;

    /// The values of a filterable field.
    fn want_field(&self, _field: &str, _need: &mut Need) {}
    /// Document `doc`'s value of `field` (wanted before).
    fn field_value(&self, doc: u32, field: &str) -> Option<serde_json::Value>;
    /// The documents' dates.
    fn want_dates(&self, _need: &mut Need) {}
    /// Document `doc`'s update (else creation) time, in seconds since 1970.
    fn date(&self, doc: u32) -> Option<i64>;

    /// The text of chunk `chunk` and its document.
    fn want_text(&self, _chunk: u32, _need: &mut Need) {}
    /// Document `doc`'s links out and in, and what they show of the documents at their ends.
    fn want_links(&self, _doc: u32, _need: &mut Need) {}
    /// The links out of document `doc`, sorted by target (its links wanted before).
    fn links_from(&self, doc: u32) -> Vec<DocLink>;
    /// The text a cross-encoder reads of chunk `chunk` (wanted before).
    fn indexed_text(&self, chunk: u32) -> String;
    /// The `chunks` (sorted, each once; their text wanted before) as an index to build hits from, with `lexical`.
    fn view<'a>(&'a self, chunks: &[u32], lexical: Held<'a, LexicalIndex>) -> View<'a>;
    /// The cross-encoder `model`'s scores of `chunks` for `query`, when they were added.
    fn rerank_scores(&self, _model: &str, _query: &str, _chunks: &[u32]) -> Option<&[f32]> {
        None
    }
}

/// The single file: the whole index in memory, and the static tier's rows added so far.
pub struct Whole<'a> {
    pub index: &'a Index,
    pub statics: Option<&'a StaticTable>,
}

impl Source for Whole<'_> {
    fn settings(&self) -> &IndexSettings {
        &self.index.settings
    }
    fn chunk_count(&self) -> usize {
        self.index.chunks.len()
    }
    fn document_count(&self) -> usize {
        self.index.documents.len()
    }
    fn doc_of(&self, chunk: u32) -> u32 {
        self.index.chunks[chunk as usize].doc
    }
    fn chunks_of(&self, doc: u32) -> Range<u32> {
        self.index.chunks_of(doc)
    }
    fn has_vectors(&self) -> bool {
        self.index.vectors.is_some()
    }
    fn statics(&self) -> Option<&StaticTable> {
        self.statics
    }
    fn has_term(&self, term: &str) -> bool {
        self.index.lexical.term_id(term).is_some()
    }
    fn term_weight(&self, term: &str) -> Option<(u32, f32)> {
        let t = self.index.lexical.term_id(term)?;
        Some((t, self.index.lexical.idf[t as usize]))
    }
    fn lexicon(&self, _: &[String], _: &[String]) -> Held<'_, LexicalIndex> {
        Held::Borrowed(&self.index.lexical)
    }
    fn nearest(
        &self,
        query: &[f32],
        mask: Option<&[bool]>,
        options: &SearchOptions,
        _: &mut Need,
    ) -> Result<Vec<ScoredChunk>> {
        match &self.index.vectors {
            Some(vectors) => vectors.search(query, super::pool(options), mask),
            None => Ok(Vec::new()),
        }
    }
    fn field_value(&self, doc: u32, field: &str) -> Option<serde_json::Value> {
        super::filter::field_value(self.index, doc, field)
    }
    fn date(&self, doc: u32) -> Option<i64> {
        let document = &self.index.documents[doc as usize];
        Some(
            document
                .updated
                .as_ref()
                .or(document.created.as_ref())?
                .unix_seconds,
        )
    }
    fn links_from(&self, doc: u32) -> Vec<DocLink> {
        self.index.links_from(doc).to_vec()
    }
    fn indexed_text(&self, chunk: u32) -> String {
        let c = &self.index.chunks[chunk as usize];
        crate::index::indexed_text(self.index.document_of(c), c)
    }
    fn view<'a>(&'a self, _: &[u32], _: Held<'a, LexicalIndex>) -> View<'a> {
        View {
            index: Held::Borrowed(self.index),
            chunks: None,
            documents: None,
        }
    }
}
