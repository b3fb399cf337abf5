// cairn's Web Worker: loads the index and the model and answers searches off the main thread.
// Spoken to by client.js: requests { id, method, args } → replies { id, result } or
// { id, error }; progress and model readiness are posted as { event, ... }.
import { answering, openIndex, prepareQuery, prepareRerank, webModules } from "./fetch.js";

let opened = null;
const post = (message) => self.postMessage(message);

const methods = {
  async open({ indexUrl, modelUrl, fetchTimeout }) {
    const result = await openIndex(webModules, indexUrl, modelUrl, post, { fetchTimeout });
    opened = result.opened;
    return result.info;
  },
  async create(options) {
    const { openMutable } = await import("./mutable.js");
    const result = await openMutable(webModules, options, post);
    opened = result.opened;
    return result.info;
  },
  edit: (documents, remove, replace) => opened.edit(documents, remove, replace),
  export: () => opened.export(),
  // A search with `rerank` first loads the cross-encoder it names (once). While searches run,
  // the model's download waits (`answering`).
  search: (query, options) => answering(opened, async () => (await prepareRerank(opened, options), await prepareQuery(opened, query, options), opened.index.search(query, options))),
  searchWithVector: (query, vector, options) => answering(opened, async () => (await prepareRerank(opened, options), opened.index.searchWithVector(query, vector, options))),
  fragmentStats: async () => opened.index.stats ?? opened.rows?.stats ?? null,
  searchDocuments: (query, options) => answering(opened, async () => (await prepareRerank(opened, options), await prepareQuery(opened, query, options, false), opened.index.searchDocuments(query, options))),
  buildContext: (query, options) => answering(opened, async () => (await prepareRerank(opened, options), await prepareQuery(opened, query, options, false), opened.index.buildContext(query, options))),
};

self.onmessage = async ({ data: { id, method, args } }) => {
  try {
    post({ id, result: await methods[method](...args) });
  } catch (e) {
    post({ id, error: e?.message ?? String(e) });
  }
};
