//! The mutable index's methods of `SearchIndex` (the `edit` feature's module, pkg/web-edit,
//! only): an empty index, edits of JSONL records and ids (`live`), and its bytes to save.

use super::*;

#[wasm_bindgen]
impl SearchIndex {
    /// An empty index to add documents to with `edit`. Given a model's three files (from the
    /// `model/` folder `cairn index` wrote, the weights under the name `weightsFile` there, e.g.
    /// `model.gguf`), its documents are embedded by that model in this module; without them it
    /// is lexical only.
    pub fn empty(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | undefined")] weights: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | undefined")] tokenizer: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | undefined")] config: JsValue,
        #[wasm_bindgen(js_name = weightsFile, unchecked_param_type = "string | undefined")]
        weights_file: JsValue,
    ) -> Result<SearchIndex, JsError> {
        let model = if weights.is_undefined() {
            None
        } else {
            let name = string(&weights_file, "the weights file's name")?;
            Some((model_files(&weights, &tokenizer, &config)?, name))
        };
        let searcher =
            Searcher::empty(model.as_ref().map(|(f, n)| (f, n.as_str()))).map_err(js_error)?;
        Ok(SearchIndex {
            searcher: Rc::new(RefCell::new(searcher)),
        })
    }

    /// The 8-bit model's word rows that `edit` would embed `records` with and that are not
    /// loaded yet: fetch and add each with `addModelRow` first (see `modelRows`).
    #[wasm_bindgen(js_name = editRows, unchecked_return_type = "RowRequest[]")]
    pub fn edit_rows(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] records: JsValue,
    ) -> Result<JsValue, JsError> {
        let records = string(&records, "the records")?;
        respond(self.searcher().edit_rows_needed(&records))
    }

    /// Changes the index: `records` (JSONL, one `{ id, title, text, url?, metadata?, ... }` a
    /// line, as `cairn index` reads them) are added, and the documents whose ids `remove` lists
    /// are removed. With `replace`, a record replaces the document of its id; without, an id
    /// already in the index is an error. Searchable at once; only new chunks are embedded. A
    /// failed edit changes nothing.
    #[wasm_bindgen(unchecked_return_type = "EditReport")]
    pub fn edit(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] records: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string[]")] remove: JsValue,
        replace: bool,
    ) -> Result<JsValue, JsError> {
        let records = string(&records, "the records")?;
        let remove = strings(&remove, "the ids to remove", "each id to remove")?;
        let (edited, report) = self
            .searcher()
            .edit(&records, &remove, replace)
            .map_err(js_error)?;
        *self
            .searcher
            .try_borrow_mut()
            .map_err(|_| js_error("the index is busy"))? = edited;
        to_js(&report)
    }

    /// The index as the bytes of an `index.cairn` file: to save, or for `cairn search` and every
    /// client to read.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Vec<u8>, JsError> {
        self.searcher().to_bytes().map_err(js_error)
    }
}
