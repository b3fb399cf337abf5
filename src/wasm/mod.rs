//! The wasm bindings: `SearchIndex` for JavaScript, a thin shell over `Searcher`. Every error
//! becomes a `JsError` whose message says what was wrong and what to do; options and hits cross
//! the boundary as plain objects typed by the declarations generated from `hit.rs`.
//!
//! The index answers lexical queries as soon as it is loaded; `loadModel` fetches the model in
//! the background and hybrid answers start when it is ready (until then a hybrid search answers
//! lexically, and a semantic search is an error that says so).
//!
//! Built without the `model` feature this is a lean module (no candle, no tokenizer): the same
//! classes without `loadModel`, `embed` and the reranker, for lexical indexes and for the
//! first answers while the full module loads (`js/fetch.js`). The `single` feature gives the
//! `SearchIndex` class (a whole index file) and `fragments` the `FragmentedIndex` class, so a
//! page downloads the code of the one layout it searches (`pkg/web-core`, `pkg/web-fragments`).
//!
//! Arguments are checked here, before any work: a query must be a string, options a plain
//! object of finite numbers and plain data, bytes a `Uint8Array`, and no body or byte array may
//! be over [`MAX_BYTES`] (a `Content-Length` is never trusted to size a buffer).
//!
//! No borrow of our own state outlives an instant: each call works on a clone of the `Searcher`
//! (two `Arc`s), and a model is attached to a clone that is swapped in whole. So after any error
//! the index keeps answering, and `free()` works. (A trap, which a Rust panic is on wasm, or a
//! JavaScript exception thrown through a method, is worse: wasm-bindgen's own shared borrow of
//! the object stays held, so later calls still work but `free()` throws and the object's memory
//! is kept; a trap inside `loadModel`'s promise leaves only that promise pending. The instance's
//! stack and allocator are left as the trap found them, so after one it is best reloaded.)

// A module with one of the two index classes leaves some helpers unused.
#![cfg_attr(
    not(all(feature = "single", feature = "fragments")),
    allow(dead_code, unused_imports)
)]

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Float32Array, Function, Promise, Reflect, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
#[cfg(feature = "model")]
use wasm_bindgen_futures::future_to_promise;
use wasm_bindgen_futures::JsFuture;

#[cfg(feature = "model")]
use crate::embed::ModelFiles;
use crate::hit::{Options, SearchOptions};
use crate::Searcher;

/// The largest index or model file this module fetches or accepts as bytes: 1 GiB.
pub const MAX_BYTES: usize = 1 << 30;
/// A download's buffer is sized up front to its `Content-Length`, at most this, and grows after.
const PRESIZE: usize = 64 << 20;
/// How deep the options are checked for numbers that JSON would turn into `null`.
const MAX_DEPTH: u32 = 16;
/// The most numbers a query vector may have (all-MiniLM-L6-v2's have 384).
const MAX_DIMENSION: u32 = 1 << 16;

#[cfg(feature = "edit")]
mod edit;
#[cfg(feature = "fragments")]
mod fragments;
#[cfg(feature = "model")]
mod model;
#[cfg(feature = "fragments")]
pub use fragments::FragmentedIndex;
#[cfg(feature = "model")]
pub use model::{CrossEncoder, QueryEncoder};

#[wasm_bindgen]
extern "C" {
    /// `Array.isArray`, caught: it throws on a revoked Proxy, and an uncaught JavaScript exception
    /// unwinds through wasm as a trap does.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array_or_throw(value: &JsValue) -> Result<bool, JsValue>;
}

fn is_array(value: &JsValue) -> bool {
    is_array_or_throw(value).unwrap_or(false)
}

/// A typed array of type `T`; `ArrayBuffer.isView` first, as it runs no Proxy trap (`instanceof` would).
fn typed<T: JsCast>(value: &JsValue) -> Option<&T> {
    js_sys::ArrayBuffer::is_view(value)
        .then(|| value.dyn_ref::<T>())
        .flatten()
}

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// Whether this module stems `language` (an index's `language`) as the index's builder did: it
/// has no stemmer, or its stemmer is compiled in (English) or registered.
#[wasm_bindgen(js_name = canStem)]
pub fn can_stem(language: &str) -> bool {
    crate::analyze::language::can_stem(language)
}

/// Registers the stemmer of `language` for every index of this module: `stem(word)` gives the
/// stem of a folded word, as the package's `stem/<language>.wasm` does (the client loads it).
#[wasm_bindgen(js_name = registerStemmer)]
pub fn register_stemmer(language: &str, stem: Function) {
    crate::analyze::language::register_stemmer(
        language,
        std::rc::Rc::new(move |word: &str| {
            // A stemmer that throws or returns no string leaves the word as it is.
            stem.call1(&JsValue::NULL, &JsValue::from_str(word))
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_else(|| word.to_string())
        }),
    );
}

/// A loaded cairn index, ready to search.
#[cfg(feature = "single")]
#[wasm_bindgen]
pub struct SearchIndex {
    searcher: Rc<RefCell<Searcher>>,
}

fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

#[cfg(feature = "single")]
#[wasm_bindgen]
impl SearchIndex {
    /// Loads an index from the bytes of an `index.cairn` file.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<SearchIndex, JsError> {
        Self::from_vec(&byte_array(&bytes, "the index")?)
    }

    /// Fetches an `index.cairn` file and loads it. `onProgress(loaded, total)` reports bytes
    /// (total is 0 when the server does not say).
    pub async fn load(
        #[wasm_bindgen(unchecked_param_type = "string")] url: JsValue,
        #[wasm_bindgen(js_name = onProgress)] on_progress: Option<Function>,
    ) -> Result<SearchIndex, JsError> {
        let bytes = fetch_bytes(&string(&url, "the index URL")?, on_progress.as_ref()).await?;
        Self::from_vec(&bytes)
    }

    /// Searches the index. `options` may be omitted; see `SearchOptions` for the defaults.
    #[wasm_bindgen(unchecked_return_type = "SearchHit[]")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let (query, options) = query_and_options(&query, options)?;
        respond(self.searcher().search(&query, &options))
    }

    /// Searches with a query embedding computed elsewhere (L2-normalized, by the index's model);
    /// `query` still drives keyword matching and highlights.
    #[wasm_bindgen(js_name = searchWithVector, unchecked_return_type = "SearchHit[]")]
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
        respond(
            self.searcher()
                .search_with_vector(&query, &vector, &options),
        )
    }

    /// Searches and groups the hits by document: each document's score, its chunks with their
    /// own scores and `isRelevant`, optional full text, facet counts, `timing` and `total`.
    #[wasm_bindgen(js_name = searchDocuments, unchecked_return_type = "DocumentSearchResponse")]
    pub fn search_documents(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DocumentSearchOptions")] options: Option<
            JsValue,
        >,
    ) -> Result<JsValue, JsError> {
        let (query, options) = (string(&query, "the query")?, parse_options(options)?);
        respond(self.searcher().search_documents(&query, &options))
    }

    /// The best chunks that fit a token budget, as a prompt, with every candidate considered:
    /// its rank, whether it was admitted, its prompt position and fragment, or why not.
    #[wasm_bindgen(js_name = buildContext, unchecked_return_type = "ContextResponse")]
    pub fn build_context(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ContextOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let (query, options) = (string(&query, "the query")?, parse_options(options)?);
        respond(self.searcher().build_context(&query, &options))
    }

    /// How many documents the index holds.
    #[wasm_bindgen(getter, js_name = documentCount)]
    pub fn document_count(&self) -> usize {
        self.searcher().index().documents.len()
    }

    /// How many chunks the index holds.
    #[wasm_bindgen(getter, js_name = chunkCount)]
    pub fn chunk_count(&self) -> usize {
        self.searcher().index().chunks.len()
    }

    /// Whether the index has embeddings (and so can search semantically once its model loads).
    #[wasm_bindgen(getter, js_name = hasVectors)]
    pub fn has_vectors(&self) -> bool {
        self.searcher().has_vectors()
    }

    /// Whether the model is loaded, so hybrid and semantic searches use it.
    #[wasm_bindgen(getter, js_name = modelReady)]
    pub fn model_ready(&self) -> bool {
        self.searcher().model_ready()
    }

    /// The language the index was analyzed as (`cairn index --language`): "en", "de", …
    #[wasm_bindgen(getter)]
    pub fn language(&self) -> String {
        self.searcher().index().settings.analyzer.language.clone()
    }

    /// Whether the index has a static tier: a query encoder without the model, whose rows
    /// (a few hundred bytes a query term) are fetched as queries need them.
    #[wasm_bindgen(getter, js_name = hasStatic)]
    pub fn has_static(&self) -> bool {
        self.searcher().statics().is_some()
    }

    /// The static rows a search of `query` needs that are not loaded yet (none once the model
    /// is in): fetch each (`length` bytes of `p/<pack>` beside the index, from `offset`) and add
    /// it with `addStaticRow`; the search then answers by meaning with the static tier.
    #[wasm_bindgen(js_name = staticRows, unchecked_return_type = "RowRequest[]")]
    pub fn static_rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let (query, options) = query_and_options(&query, options)?;
        to_js(&self.searcher().static_rows_needed(&query, &options))
    }

    /// The name of the model's weights file in the `model/` folder beside the index
    /// (`model.gguf` for the 8-bit model), or undefined for an index without vectors.
    #[wasm_bindgen(getter, js_name = modelWeightsFile)]
    pub fn model_weights_file(&self) -> Option<String> {
        let searcher = self.searcher();
        searcher
            .index()
            .vectors
            .as_ref()
            .map(|v| v.model.web_weights_file.clone())
    }

    /// Adds static row `row` from the bytes fetched for it, checking them.
    #[wasm_bindgen(js_name = addStaticRow)]
    pub fn add_static_row(
        &self,
        row: u32,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<(), JsError> {
        let bytes = byte_array(&bytes, "the row")?;
        self.searcher
            .try_borrow_mut()
            .map_err(|_| js_error("the index is busy"))?
            .add_static_row(row, &bytes)
            .map_err(js_error)
    }
}

/// The model's methods: the full module only.
#[cfg(feature = "model")]
#[wasm_bindgen]
impl SearchIndex {
    /// Fetches the model files from `baseUrl` (the `model/` folder `cairn index` wrote beside
    /// the index) and attaches the model, so hybrid and semantic searches can run.
    /// `onProgress(loaded, total)` reports bytes across all three files.
    #[wasm_bindgen(js_name = loadModel, unchecked_return_type = "Promise<void>")]
    pub fn load_model(
        &self,
        #[wasm_bindgen(js_name = baseUrl, unchecked_param_type = "string")] base_url: JsValue,
        #[wasm_bindgen(js_name = onProgress)] on_progress: Option<Function>,
    ) -> Promise {
        let (slot, base_url) = (self.searcher.clone(), string(&base_url, "the model URL"));
        future_to_promise(async move {
            let identity = slot
                .borrow()
                .index()
                .vectors
                .as_ref()
                .map(|v| v.model.clone());
            let files = fetch_model(&base_url?, identity.as_ref(), on_progress.as_ref()).await?;
            update(&slot, |s| s.load_model(files))?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Fetches a cross-encoder (`config.json`, `tokenizer.json`, `model.safetensors` of a
    /// `BertForSequenceClassification`) from `baseUrl` and keeps it for searches whose options
    /// say `rerank: { model: baseUrl }`. It replaces any cross-encoder loaded before.
    #[wasm_bindgen(js_name = loadReranker, unchecked_return_type = "Promise<void>")]
    pub fn load_reranker(
        &self,
        #[wasm_bindgen(js_name = baseUrl, unchecked_param_type = "string")] base_url: JsValue,
        #[wasm_bindgen(js_name = onProgress)] on_progress: Option<Function>,
    ) -> Promise {
        let (slot, base_url) = (
            self.searcher.clone(),
            string(&base_url, "the cross-encoder URL"),
        );
        future_to_promise(async move {
            let base_url = base_url?;
            let files = fetch_model(&base_url, None, on_progress.as_ref()).await?;
            update(&slot, |s| s.load_reranker(&base_url, files))?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Keeps a cross-encoder from its files' bytes, under the name `rerank.model` will give.
    #[wasm_bindgen(js_name = loadRerankerFromBytes)]
    pub fn load_reranker_from_bytes(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] weights: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] config: JsValue,
    ) -> Result<(), JsError> {
        let name = string(&name, "the cross-encoder's name")?;
        let files = model_files(&weights, &tokenizer, &config)?;
        update(&self.searcher, |s| s.load_reranker(&name, files))
    }

    /// The name (URL) of the loaded cross-encoder, if any.
    #[wasm_bindgen(getter, js_name = rerankerModel)]
    pub fn reranker_model(&self) -> Option<String> {
        self.searcher().reranker_name().map(str::to_string)
    }

    /// Attaches the model from its files' bytes (for callers that fetch or cache them themselves).
    #[wasm_bindgen(js_name = loadModelFromBytes)]
    pub fn load_model_from_bytes(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] weights: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] config: JsValue,
    ) -> Result<(), JsError> {
        let files = model_files(&weights, &tokenizer, &config)?;
        update(&self.searcher, |s| s.load_model(files))
    }

    /// The 8-bit model's word rows a search of `query` embeds with that are not loaded yet:
    /// fetch each (`length` bytes of `p/<pack>` in the model folder, from `offset`) and add it
    /// with `addModelRow` before searching. Until they are in, the search answers as it would
    /// without a model (hybrid lexically).
    #[wasm_bindgen(js_name = modelRows, unchecked_return_type = "RowRequest[]")]
    pub fn model_rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let (query, options) = query_and_options(&query, options)?;
        respond(self.searcher().model_rows_needed(&query, &options))
    }

    /// Adds one of the 8-bit model's word rows from the bytes fetched for it, checking them.
    #[wasm_bindgen(js_name = addModelRow)]
    pub fn add_model_row(
        &self,
        row: u32,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<(), JsError> {
        let bytes = byte_array(&bytes, "the row")?;
        self.searcher().add_model_row(row, &bytes).map_err(js_error)
    }

    /// Adds the 8-bit model's common word rows (the model folder's `common.cairnrows`),
    /// checking them all; how many.
    #[wasm_bindgen(js_name = addModelRows)]
    pub fn add_model_rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<usize, JsError> {
        let bytes = byte_array(&bytes, "the common rows")?;
        self.searcher().add_model_rows(&bytes).map_err(js_error)
    }

    /// Embeds a text with the loaded model (L2-normalized), e.g. to compare targets.
    #[wasm_bindgen(js_name = embed)]
    pub fn embed(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<Vec<f32>, JsError> {
        self.searcher()
            .embed_text(&string(&text, "the text")?)
            .map_err(js_error)
    }
}

#[cfg(feature = "single")]
impl SearchIndex {
    fn from_vec(bytes: &[u8]) -> Result<SearchIndex, JsError> {
        Ok(SearchIndex {
            searcher: Rc::new(RefCell::new(Searcher::from_bytes(bytes).map_err(js_error)?)),
        })
    }

    /// A copy to work on: the cell is borrowed only for the clone, never while a search runs.
    fn searcher(&self) -> Searcher {
        self.searcher.borrow().clone()
    }
}

/// Changes a copy of the searcher (attaches a model) and swaps the copy in whole, so a failure
/// (or a trap) while a model loads leaves the index as it was.
#[cfg(feature = "model")]
fn update(
    slot: &RefCell<Searcher>,
    change: impl FnOnce(&mut Searcher) -> crate::Result<()>,
) -> Result<(), JsError> {
    let mut searcher = slot.borrow().clone();
    change(&mut searcher).map_err(js_error)?;
    *slot.borrow_mut() = searcher;
    Ok(())
}

/// A model's three files from the bytes a caller passed.
#[cfg(feature = "model")]
fn model_files(
    weights: &JsValue,
    tokenizer: &JsValue,
    config: &JsValue,
) -> Result<ModelFiles, JsError> {
    Ok(ModelFiles {
        weights: byte_array(weights, "the weights")?,
        tokenizer: byte_array(tokenizer, "the tokenizer")?,
        config: byte_array(config, "the config")?,
        word_packs: Vec::new(),
    })
}

/// The files of a model folder at `base`: `model.safetensors`, or the weights `index` (the
/// model the index was embedded with) names, with an 8-bit model's every word row (this
/// convenience loads the whole model, where `js/` fetches only a query's rows); `on_progress`
/// follows the weights.
#[cfg(feature = "model")]
async fn fetch_model(
    base: &str,
    index: Option<&crate::index::vector::ModelIdentity>,
    on_progress: Option<&Function>,
) -> Result<ModelFiles, JsError> {
    let base = base.trim_end_matches('/');
    let url = |name: &str| format!("{base}/{name}");
    let name = index.map_or(ModelFiles::WEIGHTS, |m| m.web_weights_file.as_str());
    let config = fetch_bytes(&url(ModelFiles::CONFIG), None).await?;
    let tokenizer = fetch_bytes(&url(ModelFiles::TOKENIZER), None).await?;
    let weights = fetch_bytes(&url(name), on_progress).await?;
    let mut word_packs = Vec::new();
    // Only the index's own weights are parsed for where their rows are.
    if index.is_some_and(|m| crate::store::pack::sha256_hex(&weights) == m.web_weights_sha256)
        && crate::embed::is_quantized(&weights)
    {
        for pack in crate::embed::word_packs(&weights).map_err(js_error)? {
            word_packs.push(
                fetch_bytes(&url(&format!("{}/{pack}", crate::fragment::PACK_DIR)), None).await?,
            );
        }
    }
    Ok(ModelFiles {
        config,
        tokenizer,
        weights,
        word_packs,
    })
}

/// What `typeof` says, for messages.
fn type_of(value: &JsValue) -> String {
    match value.js_typeof().as_string() {
        _ if value.is_null() => "null".into(),
        _ if is_array(value) => "an array".into(),
        Some(t) if t == "object" => "an object".into(),
        Some(t) if t == "undefined" => t,
        Some(t) => format!("a {t}"),
        None => "something else".into(),
    }
}

/// A search's query and `SearchOptions`, checked.
fn query_and_options(
    query: &JsValue,
    options: Option<JsValue>,
) -> Result<(String, SearchOptions), JsError> {
    Ok((string(query, "the query")?, parse_options(options)?))
}

fn string(value: &JsValue, what: &str) -> Result<String, JsError> {
    value
        .as_string()
        .ok_or_else(|| js_error(format!("{what} must be a string, not {}", type_of(value))))
}

/// An array of strings: `what` names the array, `each` an item, in messages.
fn strings(value: &JsValue, what: &str, each: &str) -> Result<Vec<String>, JsError> {
    if !is_array(value) {
        return Err(js_error(format!(
            "{what} must be an array of strings, not {}",
            type_of(value)
        )));
    }
    value
        .unchecked_ref::<Array>()
        .iter()
        .map(|item| string(&item, each))
        .collect()
}

fn byte_array(value: &JsValue, what: &str) -> Result<Vec<u8>, JsError> {
    let array = typed::<Uint8Array>(value).ok_or_else(|| {
        js_error(format!(
            "{what} must be a Uint8Array, not {}",
            type_of(value)
        ))
    })?;
    if array.length() as usize > MAX_BYTES {
        return Err(js_error(format!(
            "{what} is {} bytes, over the {} GiB this module accepts",
            array.length(),
            MAX_BYTES >> 30
        )));
    }
    Ok(array.to_vec())
}

/// A query vector from a `Float32Array` or an array of numbers, every one finite as an f32.
fn float_array(value: &JsValue, what: &str) -> Result<Vec<f32>, JsError> {
    let wrong = || {
        js_error(format!(
            "{what} must be a Float32Array or an array of at most {MAX_DIMENSION} numbers, not {}",
            type_of(value)
        ))
    };
    let array = value.unchecked_ref::<Array>();
    let vector: Vec<f32> =
        if let Some(array) = typed::<Float32Array>(value).filter(|a| a.length() <= MAX_DIMENSION) {
            array.to_vec()
        } else if is_array(value) && array.length() <= MAX_DIMENSION {
            array
                .iter()
                .map(|n| n.as_f64().map(|n| n as f32))
                .collect::<Option<_>>()
                .ok_or_else(wrong)?
        } else {
            return Err(wrong());
        };
    match vector.iter().position(|n| !n.is_finite()) {
        Some(i) => Err(js_error(format!(
            "{what} must hold finite numbers (as f32); number {i} is {}",
            crate::error::number(f64::from(vector[i]))
        ))),
        None => Ok(vector),
    }
}

/// A Uint32Array, or an array of whole numbers from 0 to 2³² − 1.
fn u32_array(value: &JsValue, what: &str) -> Result<Vec<u32>, JsError> {
    let wrong = || {
        js_error(format!(
            "{what} must be a Uint32Array or an array of whole numbers, not {}",
            type_of(value)
        ))
    };
    if let Some(array) = typed::<js_sys::Uint32Array>(value) {
        return Ok(array.to_vec());
    }
    if !is_array(value) {
        return Err(wrong());
    }
    value
        .unchecked_ref::<Array>()
        .iter()
        .map(|n| {
            n.as_f64()
                .filter(|n| n.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(n))
                .map(|n| n as u32)
        })
        .collect::<Option<_>>()
        .ok_or_else(wrong)
}

fn parse_options<T: Options>(options: Option<JsValue>) -> Result<T, JsError> {
    let Some(options) = options.filter(|o| !o.is_undefined() && !o.is_null()) else {
        return Ok(T::default());
    };
    let invalid = |e: String| js_error(format!("invalid search options: {e}"));
    if !options.is_object() || is_array(&options) {
        return Err(js_error(format!(
            "options must be an object, not {}",
            type_of(&options)
        )));
    }
    check_plain(&options, "", 0).map_err(invalid)?;
    // Through JSON, so that a misspelled option is an error (serde-wasm-bindgen skips unknown keys).
    let json: String = js_sys::JSON::stringify(&options)
        .map_err(|e| invalid(format!("they cannot be read as JSON ({})", describe(&e))))?
        .into();
    if !json.starts_with('{') {
        return Err(js_error(
            "options must be an object, not something whose JSON is not one",
        ));
    }
    let value: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| invalid(e.to_string()))?;
    T::from_json(value).map_err(|e| invalid(e.to_string()))
}

/// Refuses what JSON would silently change: a number that is not finite (JSON writes `null`),
/// and a function, symbol or BigInt; `path` names the option. Only reads (no user code runs but
/// getters, and a throwing one is an error), to a bounded depth.
fn check_plain(value: &JsValue, path: &str, depth: u32) -> Result<(), String> {
    if let Some(n) = value.as_f64() {
        if !n.is_finite() {
            return Err(format!(
                "{path} must be a finite number, not {}",
                crate::error::number(n)
            ));
        }
    } else if value.is_function() || value.is_symbol() || value.is_bigint() {
        return Err(format!("{path} must be plain data, not {}", type_of(value)));
    } else if value.is_object() && depth < MAX_DEPTH {
        let array = is_array(value);
        let keys = Reflect::own_keys(value).map_err(|e| {
            format!(
                "{} cannot be read ({})",
                if path.is_empty() { "they" } else { path },
                describe(&e)
            )
        })?;
        for key in keys.iter() {
            let Some(name) = key.as_string().filter(|k| !(array && k == "length")) else {
                continue;
            };
            let inner = match (array, path) {
                (true, _) => format!("{path}[{name}]"),
                (false, "") => name,
                (false, _) => format!("{path}.{name}"),
            };
            let child = Reflect::get(value, &key)
                .map_err(|e| format!("{inner} cannot be read ({})", describe(&e)))?;
            check_plain(&child, &inner, depth + 1)?;
        }
    }
    Ok(())
}

/// A result as a plain JavaScript value (`to_js`), or its error.
fn respond<T: Serialize>(result: crate::Result<T>) -> Result<JsValue, JsError> {
    to_js(&result.map_err(js_error)?)
}

/// A result as a plain JavaScript value, through JSON: one string crosses the boundary and
/// `JSON.parse` builds the objects (rather than a call into JavaScript for every field). An f32
/// is written as the shortest decimal that reads back as it (`Math.fround` gives the f32).
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let json = serde_json::to_string(value)
        .map_err(|e| js_error(format!("cannot convert the result: {e}")))?;
    js_sys::JSON::parse(&json)
        .map_err(|e| js_error(format!("cannot convert the result: {}", describe(&e))))
}

/// Fetches a URL's body with the global `fetch` (window, worker or Node), reporting progress.
/// The body may be at most `MAX_BYTES`; its `Content-Length` only reports progress and sizes the
/// buffer up to `PRESIZE`, so a lying header can neither abort the module nor fake a body.
async fn fetch_bytes(url: &str, on_progress: Option<&Function>) -> Result<Vec<u8>, JsError> {
    let failed = |what: &str| js_error(format!("cannot fetch {url}: {what}"));
    let too_big = |what: String| {
        failed(&format!(
            "{what}, over the {} GiB this module reads",
            MAX_BYTES >> 30
        ))
    };
    let global = js_sys::global();
    let fetch: Function = Reflect::get(&global, &"fetch".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| failed("this JavaScript environment has no fetch"))?;
    let response = JsFuture::from(
        fetch
            .call1(&global, &url.into())
            .map_err(|e| failed(&describe(&e)))?
            .dyn_into::<Promise>()
            .map_err(|_| failed("fetch did not return a promise"))?,
    )
    .await
    .map_err(|e| failed(&describe(&e)))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| failed("not a Response"))?;
    if !response.ok() {
        return Err(failed(&format!(
            "HTTP {} {}",
            response.status(),
            response.status_text()
        )));
    }
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if total > MAX_BYTES as u64 {
        if let Some(body) = response.body() {
            let _ = body.cancel();
        }
        return Err(too_big(format!("its Content-Length says {total} bytes")));
    }
    let Some(body) = response.body() else {
        let buffer = JsFuture::from(response.array_buffer().map_err(|e| failed(&describe(&e)))?)
            .await
            .map_err(|e| failed(&describe(&e)))?;
        return byte_array(&Uint8Array::new(&buffer), &format!("the body of {url}"));
    };
    let reader: web_sys::ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| failed("the body cannot be read"))?;
    let mut bytes = Vec::with_capacity((total as usize).min(PRESIZE));
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(|e| {
            failed(&format!(
                "the download broke off after {} bytes ({})",
                bytes.len(),
                describe(&e)
            ))
        })?;
        let done = Reflect::get(&chunk, &"done".into())
            .map(|d| d.is_truthy())
            .unwrap_or(true);
        if done {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .ok()
            .and_then(|v| v.dyn_into().ok())
            .ok_or_else(|| failed("a body chunk is not bytes"))?;
        let (start, length) = (bytes.len(), value.length() as usize);
        if start + length > MAX_BYTES {
            let _ = reader.cancel();
            return Err(too_big(format!(
                "its body is more than {} bytes",
                start + length
            )));
        }
        bytes.resize(start + length, 0);
        value.copy_to(&mut bytes[start..]);
        if let Some(callback) = on_progress {
            let _ = callback.call2(
                &JsValue::NULL,
                &(bytes.len() as f64).into(),
                &(total as f64).into(),
            );
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
