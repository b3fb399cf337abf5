// cairn in the browser: one async API whether the work runs in a Web Worker (the default where
// Workers exist) or on the main thread (where they do not, or with `worker: false`).
//
//   const cairn = await Cairn.open({ index: "/search/index.cairn", model: "/search/model" });
//   const hits = await cairn.search("query", { limit: 10, highlight: true });
//
// The index answers lexical queries as soon as it is open, from the lean module of its layout
// (web-core for an index file, web-fragments for a fragmented one); the full
// module and the model load in the background (progress through onProgress, then
// onModelReady), and hybrid answers start when they are in.
// The loader (fetch.js) runs where the index does: in the worker, or imported here only on the
// main-thread path, so a page with a worker does not download it twice.

/**
 * `url` (a hit's citation.url: indexed data) resolved against `base`, if it is safe to follow:
 * http: or https: (so relative URLs on a web page), or file: on a file: page; otherwise null,
 * so javascript:, data:, vbscript: and the like are never followed, however they are spelled.
 */
export function safeUrl(url, base = globalThis.location?.href) {
  try {
    const { protocol, href } = new URL(url, base);
    return protocol === "http:" || protocol === "https:" || (protocol === "file:" && new URL(base).protocol === "file:") ? href : null;
  } catch {
    return null;
  }
}

/** `url` resolved against the page (the worker, elsewhere, must fetch it), if given. */
function absolute(url) {
  return url ? new URL(url, location.href).href : undefined;
}

/** Options with `rerank.model` as an absolute URL, as the worker (elsewhere) must fetch it. */
function resolved(options) {
  const model = options?.rerank?.model;
  return model ? { ...options, rerank: { ...options.rerank, model: new URL(model, location.href).href } } : options;
}

export class Cairn {
  #call;
  #close;
  #mutable = false;
  /** Whether the model is loaded (hybrid and semantic searches use it). */
  modelReady = false;
  /** documentCount, chunkCount, hasVectors. */
  info;
  /** "worker" or "main thread". */
  mode;

  /**
   * Opens an index. Options: index (URL of index.cairn or meta.cairn, or of the folder that holds one), model (URL of its model folder; leave
   * out for lexical only), worker (default: true where Worker exists), onProgress({ what,
   * loaded, total, fromCache }, or on a fragmented index after each round of fragments a search
   * fetched { what: "fragments", loaded, total, requests }), onModelReady({ ready, fromCache, error }),
   * fetchTimeout (ms a request for fragments or rows may take before its search fails: 30000),
   * language (for a folder `cairn index` wrote one index a language into: the language whose
   * index to open; by default the page's `<html lang>`, else the site's most common language).
   */
  static async open(options) {
    const cairn = await Cairn.#connect(options);
    const language = options.language ?? globalThis.document?.documentElement?.lang;
    cairn.info = await cairn.#call("open", { indexUrl: absolute(options.index), modelUrl: absolute(options.model), fetchTimeout: options.fetchTimeout, language });
    return cairn;
  }

  /**
   * A mutable index, to add, update and remove documents in the page: searchable at once, and
   * with `store` kept in the browser (OPFS, else IndexedDB) and found again on the next visit.
   * Options: model (URL of a model folder `cairn index` wrote: documents are embedded in the
   * worker, and searches are hybrid; leave out for lexical only), store (a name to keep the
   * index under), index (URL of an index.cairn to start from when nothing is stored), and
   * worker, onProgress, onModelReady, fetchTimeout as for `open`. The model loads before this
   * resolves.
   */
  static async create(options = {}) {
    const cairn = await Cairn.#connect(options);
    const { store, weightsFile, fetchTimeout } = options;
    cairn.#mutable = true;
    cairn.info = await cairn.#call("create", { indexUrl: absolute(options.index), modelUrl: absolute(options.model), store, weightsFile, fetchTimeout });
    return cairn;
  }

  /** Removes the mutable index kept under `store` in this origin's storage (see `create`). */
  static async forget(store) {
    await (await import("./mutable.js")).storage.remove(store);
  }

  /** Adds documents ({ id, title, text, url?, metadata?, created?, updated?, author? }); an id already in the index is an error (see `update`). */
  add(documents) {
    return this.#edit(documents, [], false);
  }

  /** Adds documents, each replacing the one of its id if there is one. */
  update(documents) {
    return this.#edit(documents, [], true);
  }

  /** Removes the documents with these ids (ids not in the index are ignored). */
  remove(ids) {
    return this.#edit([], ids, false);
  }

  /** The index as the bytes of an index.cairn file (what `cairn search` and `Cairn.open` read). */
  export() {
    return this.#mutable ? this.#call("export") : Promise.reject(Cairn.#readOnly());
  }

  async #edit(documents, remove, replace) {
    if (!this.#mutable) throw Cairn.#readOnly();
    const report = await this.#call("edit", documents, remove, replace);
    this.info = { ...this.info, documentCount: report.documentCount, chunkCount: report.chunkCount };
    return report;
  }

  static #readOnly() {
    return new Error("this index was opened with Cairn.open, which only searches; to add or remove documents, open it with Cairn.create({ index, model })");
  }

  /** A client whose calls run in a worker, or on this thread (see `open`). */
  static async #connect(options) {
    const cairn = new Cairn();
    const useWorker = (options.worker ?? true) && typeof Worker !== "undefined";
    const onEvent = (event) => {
      if (event.event === "progress") options.onProgress?.(event);
      if (event.event === "model") {
        cairn.modelReady = event.ready;
        options.onModelReady?.(event);
      }
    };
    if (useWorker) {
      const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
      const pending = new Map();
      let next = 0;
      worker.onmessage = ({ data }) => {
        if (data.event) return onEvent(data);
        const { resolve, reject } = pending.get(data.id);
        pending.delete(data.id);
        data.error === undefined ? resolve(data.result) : reject(new Error(data.error));
      };
      cairn.#call = (method, ...args) =>
        new Promise((resolve, reject) => {
          pending.set(++next, { resolve, reject });
          worker.postMessage({ id: next, method, args });
        });
      cairn.#close = () => worker.terminate();
      cairn.mode = "worker";
    } else {
      const methods = (await import("./fetch.js")).methods(onEvent);
      cairn.#call = async (method, ...args) => methods[method](...args);
      cairn.#close = methods.close;
      cairn.mode = "main thread";
    }
    return cairn;
  }

  /**
   * SearchHit[] for a query; see SearchOptions. With `rerank: { model }` the cross-encoder at
   * that URL is loaded (and cached) on first use.
   */
  search(query, options) {
    return this.#call("search", query, resolved(options));
  }

  /** SearchHit[] for a query embedding computed elsewhere (L2-normalized, by the index's model). */
  searchWithVector(query, vector, options) {
    return this.#call("searchWithVector", query, Array.from(vector), resolved(options));
  }

  /**
   * On a fragmented index, { requests, bytes, fromCache } its fragments have cost so far; on a
   * single file with a static tier, what its static rows have cost; else null.
   */
  fragmentStats() {
    return this.#call("fragmentStats");
  }

  /** Hits grouped by document; see DocumentSearchOptions. */
  searchDocuments(query, options) {
    return this.#call("searchDocuments", query, resolved(options));
  }

  /** A prompt under a token budget; see ContextOptions. */
  buildContext(query, options) {
    return this.#call("buildContext", query, resolved(options));
  }

  close() {
    this.#close();
  }
}
