//! `Searcher`: a loaded index and, once it arrives, the model that embeds queries for it. Both
//! shells (the CLI and the wasm bindings) search through this one type. Without the `model`
//! feature (the lean wasm core) it has no model: it answers lexically, and semantically with a
//! query vector computed elsewhere (`search_with_vector`).

use std::sync::Arc;

#[cfg(feature = "model")]
use crate::embed::{Embedder, ModelFiles};
#[cfg(feature = "model")]
use crate::error::Error;
use crate::error::Result;
use crate::hit::{
    ContextOptions, ContextResponse, DocumentSearchOptions, DocumentSearchResponse, Encoder,
    SearchHit, SearchMode, SearchOptions,
};
use crate::index::{format, Index};
#[cfg(feature = "model")]
use crate::rerank::Reranker;
use crate::search::expand::{expand, Expanded};
use crate::search::{self, answer, now_ms, Query, QueryContext, Step, Whole};
use crate::store::rows::{RowRequest, StaticTable};

/// Cheap to clone (the index and the model are shared), so a shell can attach a model to a copy
/// and swap it in whole: no caller ever sees a half-attached model.
#[derive(Clone)]
pub struct Searcher {
    index: Arc<Index>,
    /// The static tier, with the rows loaded so far (none until a shell adds them).
    statics: Option<Arc<StaticTable>>,
    #[cfg(feature = "model")]
    embedder: Option<Arc<Embedder>>,
    /// The cross-encoder `rerank` uses, with the name (folder or URL) it was loaded from.
    #[cfg(feature = "model")]
    reranker: Option<(String, Arc<Reranker>)>,
}

impl Searcher {
    /// Loads an index from the bytes of an index file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let index = format::read(bytes)?;
        Ok(Searcher {
            statics: index
                .statics
                .clone()
                .map(|rows| Arc::new(StaticTable::new(rows))),
            index: Arc::new(index),
            #[cfg(feature = "model")]
            embedder: None,
            #[cfg(feature = "model")]
            reranker: None,
        })
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    /// An empty index to add documents to (`edit`): lexical only, or with the model whose files
    /// are given (a model folder `cairn index` wrote, its weights named `weights_file`) embedding
    /// them, and recorded as the model they were embedded with.
    #[cfg(all(feature = "model", any(not(browser), feature = "edit")))]
    pub fn empty(model: Option<(&ModelFiles, &str)>) -> Result<Self> {
        let (index, embedder) = match model {
            None => (crate::live::empty(None), None),
            Some((files, weights_file)) => {
                let embedder = Embedder::load(files.clone())?;
                let index = crate::live::empty(Some((&embedder, files, weights_file)));
                (index, Some(Arc::new(embedder)))
            }
        };
        Ok(Searcher {
            index: Arc::new(index),
            statics: None,
            embedder,
            reranker: None,
        })
    }

    /// This searcher with its index edited (`live::edit`: records added or replacing those of
    /// their ids, documents removed by id), and what the edit did. The model and cross-encoder
    /// stay; the static tier goes (its rows are the old index's terms, and the model that embeds
    /// the edits answers by meaning).
    #[cfg(all(feature = "model", any(not(browser), feature = "edit")))]
    pub fn edit(
        &self,
        records: &str,
        remove: &[String],
        replace: bool,
    ) -> Result<(Searcher, crate::live::EditReport)> {
        let (index, report) = crate::live::edit(
            &self.index,
            self.embedder.as_deref(),
            records,
            remove,
            replace,
        )?;
        let searcher = Searcher {
            index: Arc::new(index),
            statics: None,
            ..self.clone()
        };
        Ok((searcher, report))
    }

    /// The 8-bit model's word rows that an edit adding `records` would embed with and that are
    /// not loaded yet (none without a model: the edit then says to load it).
    #[cfg(all(feature = "model", any(not(browser), feature = "edit")))]
    pub fn edit_rows_needed(&self, records: &str) -> Result<Vec<RowRequest>> {
        match &self.embedder {
            Some(embedder) => crate::live::rows_needed(&self.index, embedder, records),
            None => Ok(Vec::new()),
        }
    }

    /// The index as the bytes of an index file (what `cairn search` and every client read).
    #[cfg(any(not(browser), feature = "edit"))]
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        format::write(&self.index)
    }

    /// Whether the index has embeddings (and so can use a model).
    pub fn has_vectors(&self) -> bool {
        self.index.vectors.is_some()
    }

    pub fn model_ready(&self) -> bool {
        #[cfg(feature = "model")]
        return self.embedder.is_some();
        #[cfg(not(feature = "model"))]
        false
    }

    /// Loads the model that embeds queries, after checking it is the one the index was built with.
    #[cfg(feature = "model")]
    pub fn load_model(&mut self, files: ModelFiles) -> Result<()> {
        let Some(vectors) = &self.index.vectors else {
            return Err(Error::Model(
                "this index has no embeddings (it was built with --no-embed), so it has no use for a model".into(),
            ));
        };
        let embedder = load_checked_model(&vectors.model, files)?;
        self.embedder = Some(Arc::new(embedder));
        Ok(())
    }

    /// Loads the cross-encoder that `rerank: { model: name }` names (a folder or URL).
    #[cfg(feature = "model")]
    pub fn load_reranker(&mut self, name: &str, files: ModelFiles) -> Result<()> {
        self.reranker = Some((
            search::canonical_model(name),
            Arc::new(Reranker::load(files)?),
        ));
        Ok(())
    }

    /// The name of the loaded cross-encoder, if any.
    #[cfg(feature = "model")]
    pub fn reranker_name(&self) -> Option<&str> {
        self.reranker.as_ref().map(|(name, _)| name.as_str())
    }

    /// Embeds a query with the loaded model (none without the `model` feature, or when the
    /// 8-bit model's word rows for the query are not all in: `model_rows_needed` says which).
    pub fn embed_query(&self, query: &str) -> Result<Option<Vec<f32>>> {
        #[cfg(feature = "model")]
        return match &self.embedder {
            Some(e) if e.missing_rows(query)?.is_empty() => e.embed(query).map(Some),
            _ => Ok(None),
        };
        #[cfg(not(feature = "model"))]
        {
            let _ = query;
            Ok(None)
        }
    }

    /// Embeds a text with the loaded model: an error without one, or when the 8-bit model's
    /// word rows for it are not all in.
    #[cfg(feature = "model")]
    pub fn embed_text(&self, text: &str) -> Result<Vec<f32>> {
        match &self.embedder {
            Some(embedder) => embedder.embed(text),
            None => Err(Error::Model(
                "no model is loaded; call loadModel first".into(),
            )),
        }
    }

    /// The static tier, when the index has one.
    pub fn statics(&self) -> Option<&StaticTable> {
        self.statics.as_deref()
    }

    /// The static rows a search of `query` would use that are not loaded yet: what a shell
    /// fetches (by range) and adds with `add_static_row` before searching, while the model is not
    /// there. Empty when the model answers the search, or the index has no static tier.
    pub fn static_rows_needed(&self, query: &str, options: &SearchOptions) -> Vec<RowRequest> {
        match &self.statics {
            Some(table) if self.wants_static(options) => match self.query(query) {
                Ok(query) => table.missing(&self.static_terms(&query)),
                // The search says what is wrong with the query.
                Err(_) => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// Adds a static row from its record's bytes (as `static_rows_needed` located them).
    pub fn add_static_row(&mut self, row: u32, bytes: &[u8]) -> Result<()> {
        let Some(table) = &mut self.statics else {
            return Err(crate::Error::InvalidInput(
                "this index has no static tier, so it takes no static rows".into(),
            ));
        };
        Arc::make_mut(table).add(row, bytes)
    }

    /// The 8-bit model's word rows a search of `query` would embed with that are not loaded
    /// yet: what a shell fetches (by range, from the `p/` beside the model) and adds with
    /// `add_model_row` before searching. Empty when the model does not embed this search.
    #[cfg(feature = "model")]
    pub fn model_rows_needed(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<RowRequest>> {
        match &self.embedder {
            Some(embedder)
                if options.mode != SearchMode::Lexical
                    && self.has_vectors()
                    && !self.wants_static(options) =>
            {
                let query = self.query(query)?;
                embedder.missing_rows(&model_text(
                    query.text,
                    self.expansion(&query, options).as_ref(),
                ))
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Adds one of the 8-bit model's word rows from its record's bytes.
    #[cfg(feature = "model")]
    pub fn add_model_row(&self, row: u32, bytes: &[u8]) -> Result<()> {
        self.loaded_model()?.add_row(row, bytes)
    }

    /// Adds the model's common word rows (`Embedder::add_rows`); how many.
    #[cfg(feature = "model")]
    pub fn add_model_rows(&self, bytes: &[u8]) -> Result<usize> {
        self.loaded_model()?.add_rows(bytes)
    }

    /// The loaded model, which word rows are added to.
    #[cfg(feature = "model")]
    fn loaded_model(&self) -> Result<&Embedder> {
        self.embedder
            .as_deref()
            .ok_or_else(|| Error::Model("no model is loaded; load it before its word rows".into()))
    }

    /// Gives the static tier every row at once (native: read from the index's packs).
    pub fn set_statics(&mut self, table: StaticTable) {
        self.statics = Some(Arc::new(table));
    }

    /// Whether a search with these options embeds the query with the static tier.
    fn wants_static(&self, options: &SearchOptions) -> bool {
        options.mode != SearchMode::Lexical
            && self.has_vectors()
            && match options.encoder {
                Some(Encoder::Static) => true,
                Some(_) => false,
                None => !self.model_ready() && self.statics.is_some(),
            }
    }

    /// The query's terms as the static tier weighs them.
    fn static_terms<'a>(&self, query: &'a Query) -> Vec<crate::store::rows::Weighted<'a>> {
        let lexical = &self.index.lexical;
        crate::statics::weigh_query(&query.terms, |term| {
            let t = lexical.term_id(term)?;
            Some((t, lexical.idf[t as usize]))
        })
    }

    /// The query's expansion, made before the search when the model reads the query corrected
    /// (`fuzzy`, a search by meaning, the model and not the static tier).
    fn expansion(&self, query: &Query, options: &SearchOptions) -> Option<Expanded> {
        (options.fuzzy.is_on()
            && options.mode != SearchMode::Lexical
            && self.has_vectors()
            && !self.wants_static(options))
        .then(|| expand(&self.index.lexical, query, options))
    }

    /// `context` with the sentence model, and the cross-encoder when it is the one the options
    /// name.
    fn with_models<'a>(
        &'a self,
        context: QueryContext<'a>,
        options: &SearchOptions,
    ) -> QueryContext<'a> {
        #[cfg(feature = "model")]
        {
            let reranker = match (&self.reranker, &options.rerank) {
                (Some((name, reranker)), Some(asked))
                    if *name == search::canonical_model(&asked.model) =>
                {
                    Some(reranker.as_ref() as &dyn search::CrossEncoder)
                }
                _ => None,
            };
            let embedder = self
                .embedder
                .as_deref()
                .map(|e| e as &dyn search::SentenceEncoder);
            context.with_models(embedder, reranker)
        }
        #[cfg(not(feature = "model"))]
        {
            let _ = options;
            context
        }
    }

    /// The index as the search engine reads it.
    fn source(&self) -> Whole<'_> {
        Whole {
            index: &self.index,
            statics: self.statics.as_deref(),
        }
    }

    /// Runs a search. A semantic or hybrid search embeds the query with the model when it is
    /// loaded, else with the static tier; until either can, a hybrid search answers lexically.
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
        self.answer(query, options, |source, query, context| {
            answer::search(source, query, context, options)
        })
    }

    /// Runs a search with a query embedding the caller computed (normalized, of the index's
    /// model); `query` still drives the lexical signal and the highlights.
    pub fn search_with_vector(
        &self,
        query: &str,
        vector: &[f32],
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit>> {
        let query = self.query(query)?;
        let context = self.with_models(QueryContext::given(vector, options), options);
        search::answered(answer::search(&self.source(), &query, context, options)?)
    }

    /// Searches and groups the hits by document.
    pub fn search_documents(
        &self,
        query: &str,
        options: &DocumentSearchOptions,
    ) -> Result<DocumentSearchResponse> {
        self.answer(query, &options.search, |source, query, context| {
            answer::search_documents(source, query, context, options, now_ms)
        })
    }

    /// The best chunks for a query that fit a token budget, as a prompt, with every candidate
    /// considered.
    pub fn build_context(&self, query: &str, options: &ContextOptions) -> Result<ContextResponse> {
        self.answer(query, &options.search, |source, query, context| {
            answer::build_context(source, query, context, options)
        })
    }

    /// `query` analyzed with the index's analyzer.
    fn query<'q>(&self, query: &'q str) -> Result<Query<'q>> {
        Query::new(&self.index.analyzer(), query)
    }

    /// One answer: the query analyzed once, its expansion made here when the model reads it
    /// corrected (`fuzzy`), the model's embedding of it when the model embeds it (the mode
    /// wants one, the static tier is not the search's choice and the query has something to
    /// search), then `run` against the index.
    fn answer<T>(
        &self,
        query: &str,
        options: &SearchOptions,
        run: impl FnOnce(&Whole<'_>, &Query, QueryContext<'_>) -> Result<Step<T>>,
    ) -> Result<T> {
        let query = self.query(query)?;
        let expanded = self.expansion(&query, options);
        let embeds = options.mode != SearchMode::Lexical
            && self.has_vectors()
            && (options.prefix || !query.terms.is_empty())
            && !self.wants_static(options);
        let vector = match embeds {
            true => self.embed_query(&model_text(query.text, expanded.as_ref()))?,
            false => None,
        };
        let context = QueryContext {
            expanded: expanded.as_ref(),
            ..self.with_models(QueryContext::new(vector.as_deref(), options), options)
        };
        search::answered(run(&self.source(), &query, context)?)
    }
}

/// The text the model reads for a query: with its typos corrected when it was expanded.
fn model_text<'a>(query: &'a str, expanded: Option<&Expanded>) -> std::borrow::Cow<'a, str> {
    expanded
        .and_then(|e| e.corrected(query))
        .map_or(std::borrow::Cow::Borrowed(query), std::borrow::Cow::Owned)
}

/// Loads the model that embeds queries for an index embedded by `expected`, after checking it is
/// that model (its config, tokenizer, dimension and weights).
#[cfg(feature = "model")]
pub fn load_checked_model(
    expected: &crate::index::vector::ModelIdentity,
    files: ModelFiles,
) -> Result<Embedder> {
    use crate::store::pack::sha256_hex;
    let given = [
        ("config.json", &files.config, &expected.config_sha256),
        (
            "tokenizer.json",
            &files.tokenizer,
            &expected.tokenizer_sha256,
        ),
    ];
    for (name, bytes, want) in given {
        let sha = sha256_hex(bytes);
        if sha != *want {
            return Err(Error::Model(format!(
                "this model's {name} does not match the index: the index was embedded with a {name} of sha256 {want}, the one given has sha256 {sha}; load the model files written beside the index"
            )));
        }
    }
    // Checked before anything parses the weights: only the files written beside the index are
    // ever read.
    let sha = sha256_hex(&files.weights);
    if sha != expected.web_weights_sha256 && sha != expected.source_weights_sha256 {
        return Err(Error::Model(format!(
            "this model does not match the index: the index was embedded with {} (weights sha256 {}), the weights given have sha256 {sha}; load the model files written beside the index",
            expected.name, expected.web_weights_sha256
        )));
    }
    let embedder = Embedder::load(files)?;
    if embedder.dimension() != expected.dimension as usize {
        return Err(Error::Model(format!(
            "this model does not match the index: the index was embedded with {} ({} dimensions, weights sha256 {}), the model given has {} dimensions and weights sha256 {sha}; load the model files written beside the index",
            expected.name,
            expected.dimension,
            expected.web_weights_sha256,
            embedder.dimension()
        )));
    }
    Ok(embedder)
}
