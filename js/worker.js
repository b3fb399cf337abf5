// cairn's Web Worker: loads the index and the model and answers searches off the main thread.
// Spoken to by client.js: requests { id, method, args } → replies { id, result } or
// { id, error }; progress and model readiness are posted as { event, ... }.
import init, { SearchIndex } from "./web/cairn.js";
import { openIndex } from "./fetch.js";

let index = null;
const post = (message) => self.postMessage(message);

const methods = {
  async open({ indexUrl, modelUrl }) {
    await init();
    const opened = await openIndex(SearchIndex, indexUrl, modelUrl, post);
    index = opened.index;
    return opened.info;
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
