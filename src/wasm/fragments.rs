//! `FragmentedIndex`: a fragmented index in the browser, fed the fragments, records and rows
//! the JavaScript loader fetches for each step of a search.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::fragment::load::{Fragmented, Step};
use crate::fragment::FragmentStep;
use crate::hit::{ContextOptions, DocumentSearchOptions, SearchOptions};
use crate::search::{answer, now_ms, Query, QueryContext, Source};

use super::*;

/// A fragmented index (`meta.cairn`): it holds the fragments added so far and says which a
/// search still needs. `js/fragments.js` drives it: search, fetch what it names (range requests
/// into the packs, each slot as fetched: its gzip is inflated here), `addFragment` each (or, for a
/// `{ rerank }` step, score the texts and `addRerankScores`), search again.
#[wasm_bindgen]
pub struct FragmentedIndex {
    index: RefCell<Fragmented>,
}

#[wasm_bindgen]
impl FragmentedIndex {
    /// Opens a fragmented index from its meta file's bytes as fetched (gzip, inflated here to at
    /// most 64 times its size and a megabyte).
    #[wasm_bindgen(js_name = fromMeta)]
    pub fn from_meta(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<FragmentedIndex, JsError> {
        let bytes = byte_array(&bytes, "the meta file")?;
        Ok(FragmentedIndex {
            index: RefCell::new(Fragmented::open(&bytes).map_err(js_error)?),
        })
    }

    /// Searches with the fragments added so far: `{ hits }`; or `{ need }`, the fragments to
    /// fetch and add, or `{ rerank }`, the texts to score, before searching again.
    /// `vector`: the model's embedding of the query, when the page's model made one (hits then
    /// say `encoder: "model"`, as the single file's do).
    #[wasm_bindgen(unchecked_return_type = "FragmentStep")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
        #[wasm_bindgen(unchecked_optional_param_type = "Float32Array | number[]")] vector: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsError> {
        let (query, options) = query_and_options(&query, options)?;
        let vector = optional_vector(vector)?;
        let context = QueryContext::new(vector.as_deref(), &options);
        self.answer(
            &query,
            |index, query| answer::search(index, query, context, &options),
            |hits| FragmentStep {
                hits: Some(hits),
                ..Default::default()
            },
        )
    }

    /// [`search`](Self::search) with a query embedding computed elsewhere (L2-normalized, by
    /// the index's model).
    #[wasm_bindgen(js_name = searchWithVector, unchecked_return_type = "FragmentStep")]
    pub fn search_with_vector(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Float32Array | number[]")] vector: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let (query, vector) = (
            string(&query, "the query")?,
            float_array(&vector, "the vector")?,
        );
        let options: SearchOptions = parse_options(options)?;
        let context = QueryContext::given(&vector, &options);
        self.answer(
            &query,
            |index, query| answer::search(index, query, context, &options),
            |hits| FragmentStep {
                hits: Some(hits),
                ..Default::default()
            },
        )
    }

    /// Document search as `SearchIndex.searchDocuments` answers it: `{ documents }`, or
    /// `{ need }` or `{ rerank }` as `search` gives them. `vector`: the query's embedding, if the page has one.
    #[wasm_bindgen(js_name = searchDocuments, unchecked_return_type = "FragmentStep")]
    pub fn search_documents(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DocumentSearchOptions")] options: Option<
            JsValue,
        >,
        #[wasm_bindgen(unchecked_optional_param_type = "Float32Array | number[]")] vector: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsError> {
        let query = string(&query, "the query")?;
        let options: DocumentSearchOptions = parse_options(options)?;
        let vector = optional_vector(vector)?;
        let context = QueryContext::new(vector.as_deref(), &options.search);
        self.answer(
            &query,
            |index, query| answer::search_documents(index, query, context, &options, now_ms),
            |documents| FragmentStep {
                documents: Some(documents),
                ..Default::default()
            },
        )
    }

    /// A prompt's context as `SearchIndex.buildContext` builds it: `{ context }`, or `{ need }`
    /// or `{ rerank }` as `search` gives them. `vector`: the query's embedding, if the page has one.
    #[wasm_bindgen(js_name = buildContext, unchecked_return_type = "FragmentStep")]
    pub fn build_context(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ContextOptions")] options: Option<JsValue>,
        #[wasm_bindgen(unchecked_optional_param_type = "Float32Array | number[]")] vector: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsError> {
        let query = string(&query, "the query")?;
        let options: ContextOptions = parse_options(options)?;
        let vector = optional_vector(vector)?;
        let context = QueryContext::new(vector.as_deref(), &options.search);
        self.answer(
            &query,
            |index, query| answer::build_context(index, query, context, &options),
            |context| FragmentStep {
                context: Some(context),
                ..Default::default()
            },
        )
    }

    /// Adds fragment `fragment` from its slot's bytes as fetched (the `need` entry's range; its
    /// gzip is inflated here, to at most the size the meta states). A fragment that is damaged,
    /// or is not the one asked for, is an error and is not added; the index keeps answering.
    #[wasm_bindgen(js_name = addFragment)]
    pub fn add_fragment(
        &self,
        fragment: u32,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<(), JsError> {
        let bytes = byte_array(&bytes, "the fragment")?;
        self.borrow_mut()?
            .add_slot(fragment, &bytes)
            .map_err(js_error)
    }

    /// Adds vector record `record` of records fragment `fragment` (a `need` entry with a
    /// `record`) from its bytes, as fetched. A damaged record is an error and is not added.
    #[wasm_bindgen(js_name = addRecord)]
    pub fn add_record(
        &self,
        fragment: u32,
        record: u32,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<(), JsError> {
        let bytes = byte_array(&bytes, "the vector record")?;
        self.borrow_mut()?
            .add_record(fragment, record, &bytes)
            .map_err(js_error)
    }

    /// Adds static row `row` (a `need` entry with a `row`) from its bytes, as fetched. A
    /// damaged row is an error and is not added.
    #[wasm_bindgen(js_name = addStaticRow)]
    pub fn add_static_row(
        &self,
        row: u32,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<(), JsError> {
        let bytes = byte_array(&bytes, "the static row")?;
        self.borrow_mut()?
            .add_static_row(row, &bytes)
            .map_err(js_error)
    }

    /// Adds the cross-encoder's scores of the texts a `{ rerank }` step asked for: its `model`,
    /// `query` and `chunks`, and a score a text, in order. Scores that do not match are an
    /// error and are not added.
    #[wasm_bindgen(js_name = addRerankScores)]
    pub fn add_rerank_scores(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] model: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint32Array | number[]")] chunks: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Float32Array | number[]")] scores: JsValue,
    ) -> Result<(), JsError> {
        let (model, query) = (string(&model, "the model")?, string(&query, "the query")?);
        let chunks = u32_array(&chunks, "the chunks")?;
        let scores = float_array(&scores, "the scores")?;
        self.borrow_mut()?
            .add_rerank_scores(&model, &query, &chunks, &scores)
            .map_err(js_error)
    }

    /// The index's content hash: what a cache of its fragments is keyed by.
    #[wasm_bindgen(getter)]
    pub fn hash(&self) -> Result<String, JsError> {
        Ok(self.borrow()?.meta().hash.clone())
    }

    #[wasm_bindgen(getter, js_name = documentCount)]
    pub fn document_count(&self) -> Result<usize, JsError> {
        Ok(self.borrow()?.document_count())
    }

    /// The language the index was analyzed as (`cairn index --language`): "en", "de", …
    #[wasm_bindgen(getter)]
    pub fn language(&self) -> Result<String, JsError> {
        Ok(self.borrow()?.meta().settings.analyzer.language.clone())
    }

    #[wasm_bindgen(getter, js_name = chunkCount)]
    pub fn chunk_count(&self) -> Result<usize, JsError> {
        Ok(self.borrow()?.chunk_count())
    }

    #[wasm_bindgen(getter, js_name = hasVectors)]
    pub fn has_vectors(&self) -> Result<bool, JsError> {
        Ok(self.borrow()?.has_vectors())
    }

    /// How many fragments are loaded.
    #[wasm_bindgen(getter)]
    pub fn loaded(&self) -> Result<usize, JsError> {
        Ok(self.borrow()?.loaded())
    }

    /// The model the index was embedded with, as JSON (for `QueryEncoder.fromBytes`), or
    /// undefined for a lexical index.
    #[wasm_bindgen(getter, js_name = modelIdentity)]
    pub fn model_identity(&self) -> Result<Option<String>, JsError> {
        let index = self.borrow()?;
        index
            .meta()
            .vectors
            .as_ref()
            .map(|v| serde_json::to_string(&v.model).map_err(js_error))
            .transpose()
    }
}

impl FragmentedIndex {
    fn borrow(&self) -> Result<std::cell::Ref<'_, Fragmented>, JsError> {
        self.index
            .try_borrow()
            .map_err(|_| js_error("the index is busy"))
    }

    fn borrow_mut(&self) -> Result<std::cell::RefMut<'_, Fragmented>, JsError> {
        self.index
            .try_borrow_mut()
            .map_err(|_| js_error("the index is busy"))
    }

    /// A step of a search, as the JavaScript loader reads it (`wrap` puts the answer in).
    fn answer<T>(
        &self,
        query: &str,
        step: impl FnOnce(&Fragmented, &Query) -> crate::Result<Step<T>>,
        wrap: impl FnOnce(T) -> FragmentStep,
    ) -> Result<JsValue, JsError> {
        let index = self.borrow()?;
        let query = Query::new(&index.analyzer(), query).map_err(js_error)?;
        let step = step(&index, &query).map_err(js_error)?;
        to_js(&index.step(step.map(wrap)))
    }
}

/// A query vector that may be left out (undefined or null).
fn optional_vector(vector: Option<JsValue>) -> Result<Option<Vec<f32>>, JsError> {
    vector
        .filter(|v| !v.is_undefined() && !v.is_null())
        .map(|v| float_array(&v, "the vector"))
        .transpose()
}
