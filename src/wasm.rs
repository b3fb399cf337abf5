//! The wasm bindings: `SearchIndex` for JavaScript, a thin shell over `Searcher`. Every error
//! becomes a `JsError` whose message says what was wrong and what to do; options and hits cross
//! the boundary as plain objects typed by the declarations generated from `hit.rs`.
//!
//! The index answers lexical queries as soon as it is loaded; `loadModel` fetches the model in
//! the background and hybrid answers start when it is ready (until then a hybrid search answers
//! lexically, and a semantic search is an error that says so).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use crate::embed::ModelFiles;
use crate::hit::SearchOptions;
use crate::Searcher;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// A loaded cairn index, ready to search.
#[wasm_bindgen]
pub struct SearchIndex {
    inner: Rc<RefCell<Searcher>>,
}

fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

#[wasm_bindgen]
impl SearchIndex {
    /// Loads an index from the bytes of an `index.cairn` file.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8]) -> Result<SearchIndex, JsError> {
        let searcher = Searcher::from_bytes(bytes).map_err(js_error)?;
        Ok(SearchIndex { inner: Rc::new(RefCell::new(searcher)) })
    }

    /// Fetches an `index.cairn` file and loads it. `onProgress(loaded, total)` reports bytes
    /// (total is 0 when the server does not say).
    pub async fn load(url: String, #[wasm_bindgen(js_name = onProgress)] on_progress: Option<Function>) -> Result<SearchIndex, JsError> {
        let bytes = fetch_bytes(&url, on_progress.as_ref()).await?;
        Self::from_bytes(&bytes)
    }

    /// Searches the index. `options` may be omitted; see `SearchOptions` for the defaults.
    #[wasm_bindgen(unchecked_return_type = "SearchHit[]")]
    pub fn search(
        &self,
        query: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let options: SearchOptions = parse_options(options)?;
        let hits = self.searcher()?.search(query, &options).map_err(js_error)?;
        to_js(&hits)
    }

    /// Searches with a query embedding computed elsewhere (L2-normalized, by the index's model);
    /// `query` still drives keyword matching and highlights.
    #[wasm_bindgen(js_name = searchWithVector, unchecked_return_type = "SearchHit[]")]
    pub fn search_with_vector(
        &self,
        query: &str,
        vector: Vec<f32>,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let options: SearchOptions = parse_options(options)?;
        let hits = self.searcher()?.search_with_vector(query, &vector, &options).map_err(js_error)?;
        to_js(&hits)
    }

    /// Searches and groups the hits by document: each document's score, its chunks with their
    /// own scores and `isRelevant`, optional full text, facet counts, `timing` and `total`.
    #[wasm_bindgen(js_name = searchDocuments, unchecked_return_type = "DocumentSearchResponse")]
    pub fn search_documents(
        &self,
        query: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "DocumentSearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let options = parse_options(options)?;
        to_js(&self.searcher()?.search_documents(query, &options).map_err(js_error)?)
    }

    /// The best chunks that fit a token budget, as a prompt, with every candidate considered:
    /// its rank, whether it was admitted, its prompt position and fragment, or why not.
    #[wasm_bindgen(js_name = buildContext, unchecked_return_type = "ContextResponse")]
    pub fn build_context(
        &self,
        query: &str,
        #[wasm_bindgen(unchecked_optional_param_type = "ContextOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let options = parse_options(options)?;
        to_js(&self.searcher()?.build_context(query, &options).map_err(js_error)?)
    }

    /// Fetches the model files from `baseUrl` (the `model/` folder `cairn index` wrote beside
    /// the index) and attaches the model, so hybrid and semantic searches can run.
    /// `onProgress(loaded, total)` reports bytes across all three files.
    #[wasm_bindgen(js_name = loadModel, unchecked_return_type = "Promise<void>")]
    pub fn load_model(&self, #[wasm_bindgen(js_name = baseUrl)] base_url: String, #[wasm_bindgen(js_name = onProgress)] on_progress: Option<Function>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let base = base_url.trim_end_matches('/').to_string();
            let url = |name: &str| format!("{base}/{name}");
            let config = fetch_bytes(&url(ModelFiles::CONFIG), None).await?;
            let tokenizer = fetch_bytes(&url(ModelFiles::TOKENIZER), None).await?;
            let weights = fetch_bytes(&url(ModelFiles::WEIGHTS), on_progress.as_ref()).await?;
            inner
                .try_borrow_mut()
                .map_err(|_| js_error("the index is in use; load the model again"))?
                .load_model(ModelFiles { weights, tokenizer, config })
                .map_err(js_error)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Attaches the model from its files' bytes (for callers that fetch or cache them themselves).
    #[wasm_bindgen(js_name = loadModelFromBytes)]
    pub fn load_model_from_bytes(&self, weights: Vec<u8>, tokenizer: Vec<u8>, config: Vec<u8>) -> Result<(), JsError> {
        self.inner
            .try_borrow_mut()
            .map_err(|_| js_error("the index is in use; load the model again"))?
            .load_model(ModelFiles { weights, tokenizer, config })
            .map_err(js_error)
    }

    /// Embeds a text with the loaded model (L2-normalized), e.g. to compare targets.
    #[wasm_bindgen(js_name = embed)]
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, JsError> {
        self.searcher()?
            .embed_query(text)
            .map_err(js_error)?
            .ok_or_else(|| js_error("no model is loaded; call loadModel first"))
    }

    /// How many documents the index holds.
    #[wasm_bindgen(getter, js_name = documentCount)]
    pub fn document_count(&self) -> usize {
        self.inner.borrow().index().documents.len()
    }

    /// How many chunks the index holds.
    #[wasm_bindgen(getter, js_name = chunkCount)]
    pub fn chunk_count(&self) -> usize {
        self.inner.borrow().index().chunks.len()
    }

    /// Whether the index has embeddings (and so can search semantically once its model loads).
    #[wasm_bindgen(getter, js_name = hasVectors)]
    pub fn has_vectors(&self) -> bool {
        self.inner.borrow().has_vectors()
    }

    /// Whether the model is loaded, so hybrid and semantic searches use it.
    #[wasm_bindgen(getter, js_name = modelReady)]
    pub fn model_ready(&self) -> bool {
        self.inner.borrow().model_ready()
    }
}

impl SearchIndex {
    fn searcher(&self) -> Result<std::cell::Ref<'_, Searcher>, JsError> {
        self.inner.try_borrow().map_err(|_| js_error("the index is busy attaching its model; search again in a moment"))
    }
}

fn parse_options<T: serde::de::DeserializeOwned + Default>(options: Option<JsValue>) -> Result<T, JsError> {
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(T::default());
    };
    // Through JSON, so that a misspelled option is an error (serde-wasm-bindgen skips unknown keys).
    let json: String = js_sys::JSON::stringify(&options)
        .map_err(|_| js_error("invalid search options: they cannot be read as JSON"))?
        .into();
    serde_json::from_str(&json).map_err(|e| js_error(format!("invalid search options: {e}")))
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let serializer = serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true);
    value.serialize(&serializer).map_err(|e| js_error(format!("cannot convert the result: {e}")))
}

/// Fetches a URL's body with the global `fetch` (window, worker or Node), reporting progress.
async fn fetch_bytes(url: &str, on_progress: Option<&Function>) -> Result<Vec<u8>, JsError> {
    let failed = |what: &str| js_error(format!("cannot fetch {url}: {what}"));
    let global = js_sys::global();
    let fetch: Function = Reflect::get(&global, &"fetch".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| failed("this JavaScript environment has no fetch"))?;
    let response = JsFuture::from(
        fetch.call1(&global, &url.into()).map_err(|e| failed(&describe(&e)))?.dyn_into::<Promise>().map_err(|_| failed("fetch did not return a promise"))?,
    )
    .await
    .map_err(|e| failed(&describe(&e)))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| failed("not a Response"))?;
    if !response.ok() {
        return Err(failed(&format!("HTTP {} {}", response.status(), response.status_text())));
    }
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    let Some(body) = response.body() else {
        let buffer = JsFuture::from(response.array_buffer().map_err(|e| failed(&describe(&e)))?)
            .await
            .map_err(|e| failed(&describe(&e)))?;
        return Ok(Uint8Array::new(&buffer).to_vec());
    };
    let reader: web_sys::ReadableStreamDefaultReader =
        body.get_reader().dyn_into().map_err(|_| failed("the body cannot be read"))?;
    let mut bytes = Vec::with_capacity(total as usize);
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(|e| failed(&describe(&e)))?;
        let done = Reflect::get(&chunk, &"done".into()).map(|d| d.is_truthy()).unwrap_or(true);
        if done {
            break;
        }
        let value: Uint8Array =
            Reflect::get(&chunk, &"value".into()).ok().and_then(|v| v.dyn_into().ok()).ok_or_else(|| failed("a body chunk is not bytes"))?;
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        if let Some(callback) = on_progress {
            let _ = callback.call2(&JsValue::NULL, &(bytes.len() as f64).into(), &total.into());
        }
    }
    Ok(bytes)
}

fn describe(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}
