//! The model's classes for a page that embeds or reranks itself: `QueryEncoder` (the sentence
//! model alone) and `CrossEncoder` (a reranker's scores).

use super::*;

/// A cross-encoder on its own, scoring the texts a fragmented index's `{ rerank }` step asks
/// for (the full module only): its scores go to `FragmentedIndex.addRerankScores`.
#[wasm_bindgen]
pub struct CrossEncoder {
    reranker: crate::rerank::Reranker,
}

#[wasm_bindgen]
impl CrossEncoder {
    /// Loads a cross-encoder from its files' bytes (see `SearchIndex.loadReranker`).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] weights: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] config: JsValue,
    ) -> Result<CrossEncoder, JsError> {
        let files = model_files(&weights, &tokenizer, &config)?;
        Ok(CrossEncoder {
            reranker: crate::rerank::Reranker::load(files).map_err(js_error)?,
        })
    }

    /// Each text's relevance to `query`, in [0, 1].
    #[wasm_bindgen(unchecked_return_type = "Float32Array")]
    pub fn relevance(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string[]")] texts: JsValue,
    ) -> Result<JsValue, JsError> {
        use crate::search::CrossEncoder as _;
        let query = string(&query, "the query")?;
        let texts = strings(&texts, "the texts", "each text")?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let scores = self.reranker.relevance(&query, &texts).map_err(js_error)?;
        Ok(Float32Array::from(scores.as_slice()).into())
    }
}

/// The sentence model on its own, embedding queries for a fragmented index (the full module
/// only): its vector goes to `FragmentedIndex.searchWithVector`.
#[wasm_bindgen]
pub struct QueryEncoder {
    embedder: crate::embed::Embedder,
}

#[wasm_bindgen]
impl QueryEncoder {
    /// Loads the model from its files' bytes, after checking it is the one `identity` (the
    /// index's `modelIdentity`) names.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(
        #[wasm_bindgen(unchecked_param_type = "string")] identity: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] weights: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] config: JsValue,
    ) -> Result<QueryEncoder, JsError> {
        let identity: crate::index::vector::ModelIdentity =
            serde_json::from_str(&string(&identity, "the model identity")?).map_err(|e| {
                js_error(format!(
                    "the model identity is not valid ({e}); pass the index's modelIdentity"
                ))
            })?;
        let files = model_files(&weights, &tokenizer, &config)?;
        Ok(QueryEncoder {
            embedder: crate::searcher::load_checked_model(&identity, files).map_err(js_error)?,
        })
    }

    /// The 8-bit model's word rows `text` needs that are not loaded yet (see
    /// `SearchIndex.modelRows`).
    #[wasm_bindgen(unchecked_return_type = "RowRequest[]")]
    pub fn rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<JsValue, JsError> {
        respond(self.embedder.missing_rows(&string(&text, "the text")?))
    }

    /// Adds one of the 8-bit model's word rows from the bytes fetched for it, checking them.
    #[wasm_bindgen(js_name = addRow)]
    pub fn add_row(
        &self,
        row: u32,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<(), JsError> {
        let bytes = byte_array(&bytes, "the row")?;
        self.embedder.add_row(row, &bytes).map_err(js_error)
    }

    /// Adds the 8-bit model's common word rows (the model folder's `common.cairnrows`),
    /// checking them all; how many.
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<usize, JsError> {
        let bytes = byte_array(&bytes, "the common rows")?;
        self.embedder.add_rows(&bytes).map_err(js_error)
    }

    /// Embeds a text (L2-normalized); an 8-bit model needs the text's `rows` added first.
    pub fn embed(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<Vec<f32>, JsError> {
        self.embedder
            .embed(&string(&text, "the text")?)
            .map_err(js_error)
    }
}
