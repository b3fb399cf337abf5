// cairn's Web Worker: loads the index and the model and answers searches off the main thread.
// Spoken to by client.js: requests { id, method, args } → replies { id, result } or
// { id, error }; progress and model readiness are posted as { event, ... }.
import init, { SearchIndex } from "./web/cairn.js";
import { fetchWithProgress, loadModelFiles } from "./fetch.js";

let index = null;
const post = (message) => self.postMessage(message);

const methods = {
  async open({ indexUrl, modelUrl, wasmUrl }) {
    await init(wasmUrl ? { module_or_path: wasmUrl } : undefined);
    const { bytes } = await fetchWithProgress(indexUrl, null, (loaded, total) => post({ event: "progress", what: "index", loaded, total }));
    index = SearchIndex.fromBytes(bytes);
    const info = { documentCount: index.documentCount, chunkCount: index.chunkCount, hasVectors: index.hasVectors };
    if (index.hasVectors && modelUrl) {
      // In the background: lexical answers start now.
      loadModelFiles(modelUrl, (loaded, total, fromCache) => post({ event: "progress", what: "model", loaded, total, fromCache }))
        .then(({ files, fromCache }) => {
          index.loadModelFromBytes(files.weights, files.tokenizer, files.config);
          post({ event: "model", ready: true, fromCache });
        })
        .catch((e) => post({ event: "model", ready: false, error: e.message }));
    }
    return info;
  },
  search: (query, options) => index.search(query, options),
  searchDocuments: (query, options) => index.searchDocuments(query, options),
  buildContext: (query, options) => index.buildContext(query, options),
};

self.onmessage = async ({ data: { id, method, args } }) => {
  try {
    post({ id, result: await methods[method](...args) });
  } catch (e) {
    post({ id, error: e?.message ?? String(e) });
  }
};
