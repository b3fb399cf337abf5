// Opening an index in the browser: fetching with progress, and the model through the Cache
// API, so a second visit reads the model from the cache instead of the network. Without the
// Cache API (or when it refuses, e.g. on an insecure origin), the model is simply fetched. Model files are cached only once the model
// loaded from them, and a cached model that fails to load (a stale or damaged copy) is fetched
// anew. A body may be at most MAX_BYTES; its Content-Length only reports progress.
import { isFragmentedMeta, openFragments, packLoader } from "./fragments.js";
import { stemFor } from "./stem.js";

const CACHE = "cairn-model-v1";
/** The weights file of a model folder unless the index names another (`model.gguf`, 8-bit). */
const WEIGHTS = "model.safetensors";
/** The largest index or model file read: 1 GiB, as in the wasm module. */
export const MAX_BYTES = 2 ** 30;

async function openCache() {
  try {
    return typeof caches === "undefined" ? null : await caches.open(CACHE);
  } catch {
    return null;
  }
}

/**
 * Searches in flight. What loads in the background (the model) yields to them: it is fetched at
 * low priority, and its body is not read while a search runs (so, as TCP's flow control stops the
 * sender, it stops taking the link), so it never delays an answer.
 */
const searches = { running: 0, waiting: [] };

/** Runs a search (`run`), the background downloads paused meanwhile; then `opened.answered()`. */
export async function answering(opened, run) {
  searches.running++;
  try {
    return await run();
  } finally {
    if (--searches.running === 0) searches.waiting.splice(0).forEach((go) => go());
    opened?.answered?.();
  }
}

const noSearch = () => (searches.running === 0 ? null : new Promise((go) => searches.waiting.push(go)));

/** The body of `url` as bytes, reporting (loaded, total); from `cache` when it has it. With
 * `background`, fetched at low priority and paused while a search runs. */
export async function fetchWithProgress(url, cache, onProgress, background = false) {
  let response = cache ? await cache.match(url).catch(() => undefined) : undefined;
  const fromCache = Boolean(response);
  if (!response) {
    if (background) await noSearch();
    response = await fetch(url, background ? { priority: "low" } : undefined);
    if (!response.ok) throw Object.assign(new Error(`cannot fetch ${url}: HTTP ${response.status} ${response.statusText}`), { status: response.status });
  }
  const header = response.headers.get("content-length")?.trim() ?? "";
  const total = /^\d+$/.test(header) ? Number(header) : 0;
  const tooBig = (what) => new Error(`cannot fetch ${url}: ${what}, over the ${MAX_BYTES / 2 ** 30} GiB cairn reads`);
  if (total > MAX_BYTES) {
    response.body?.cancel().catch(() => {});
    throw tooBig(`its Content-Length says ${header} bytes`);
  }
  if (!response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > MAX_BYTES) throw tooBig(`its body is ${bytes.length} bytes`);
    return { bytes, fromCache };
  }
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    if (background) await noSearch();
    const { done, value } = await reader.read().catch((e) => {
      throw new Error(`cannot fetch ${url}: the download broke off after ${loaded} bytes (${e?.message ?? e})`);
    });
    if (done) break;
    loaded += value.length;
    if (loaded > MAX_BYTES) {
      reader.cancel().catch(() => {});
      throw tooBig(`its body is more than ${loaded} bytes`);
    }
    parts.push(value);
    onProgress?.(loaded, total, fromCache);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return { bytes, fromCache };
}

/**
 * The three model files from `baseUrl` (the weights named `weights`), through the cache (past
 * it with `fresh`), and an 8-bit model's common word rows if the folder has them (`common`, or
 * null). `keep()` stores the downloaded ones in the cache: call it once the model has loaded
 * from them; `dropCommon()` forgets common rows the model refused. The other word rows are not
 * among them: `modelRows` fetches a query's.
 */
export async function loadModelFiles(baseUrl, onProgress, fresh = false, weights = WEIGHTS, background = false) {
  const cache = await openCache();
  const base = baseUrl.replace(/\/$/, "");
  const got = {};
  const downloaded = [];
  let cached = 0;
  const files = ["config.json", "tokenizer.json", weights];
  for (const name of files) {
    const url = `${base}/${name}`;
    const { bytes, fromCache } = await fetchWithProgress(url, fresh ? null : cache, name === weights ? onProgress : null, background);
    got[name] = bytes;
    if (fromCache) cached++;
    else downloaded.push([url, bytes]);
  }
  // The 8-bit model's word rows of the tokens the index's text uses most, when the index wrote
  // them: without them (an older index, a failed fetch) each query fetches its own.
  got.common = null;
  const commonUrl = `${base}/common.cairnrows`;
  if (weights.endsWith(".gguf")) {
    try {
      const { bytes, fromCache } = await fetchWithProgress(commonUrl, fresh ? null : cache, null, background);
      got.common = bytes;
      if (!fromCache) downloaded.push([commonUrl, bytes]);
    } catch {}
  }
  const dropCommon = () => {
    const at = downloaded.findIndex(([url]) => url === commonUrl);
    if (at >= 0) downloaded.splice(at, 1);
    else cache?.delete(commonUrl).catch(() => {});
  };
  const keep = async () => {
    for (const [url, bytes] of downloaded) {
      // A full or unavailable cache only costs the next visit a download.
      await cache?.put(url, new Response(bytes, { headers: { "content-length": String(bytes.length) } })).catch(() => {});
    }
  };
  return {
    files: { weights: got[weights], tokenizer: got["tokenizer.json"], config: got["config.json"], common: got.common },
    fromCache: downloaded.length === 0,
    anyCached: cached > 0,
    keep,
    dropCommon,
  };
}

/**
 * Adds the 8-bit model's common word rows (`files.common`) with `add`, if the folder has them.
 * Rows that do not fit the model (a stale or damaged copy) are left out, and marked so that
 * `attachModel` neither caches nor keeps them: queries then fetch their own.
 */
export function addCommonRows(add, files) {
  if (!files.common) return;
  try {
    add(files.common);
  } catch {
    files.commonRefused = true;
  }
}

/**
 * Loads a model folder's files (weights named `weights`) with `load` (the embedder's by
 * default, with its common word rows), a cached copy that fails fetched anew once:
 * { fromCache, keep }. With `background`, the download yields to searches
 * (`fetchWithProgress`).
 */
export async function attachModel(
  index,
  modelUrl,
  onProgress,
  load = (files) => {
    index.loadModelFromBytes(files.weights, files.tokenizer, files.config);
    addCommonRows((rows) => index.addModelRows(rows), files);
  },
  weights = WEIGHTS,
  background = false,
) {
  let model = await loadModelFiles(modelUrl, onProgress, false, weights, background);
  try {
    load(model.files);
  } catch (e) {
    if (!model.anyCached) throw e;
    model = await loadModelFiles(modelUrl, onProgress, true, weights, background);
    load(model.files);
  }
  if (model.files.commonRefused) model.dropCommon();
  return model;
}

/**
 * The 8-bit model's word rows, fetched as queries need them: by range from the packs in the
 * model folder's `p/`, through the Cache API (the packs are named by their content), each
 * handed to `add(row, bytes)`. Returns `load(requests)` (the model's `modelRows`/`rows`) with
 * `stats` of the bytes and requests. `timeout`: how long a request may take (ms).
 */
export async function modelRows(modelUrl, add, timeout) {
  let cache = null;
  try {
    cache = typeof caches === "undefined" ? null : await caches.open("cairn-model-rows");
  } catch {}
  const stats = { requests: 0, bytes: 0, fromCache: 0 };
  const base = new URL("p/", modelUrl.replace(/\/*$/, "/"));
  const load = packLoader({
    base,
    cache,
    stats,
    timeout,
    key: (r) => `${r.row}`,
    cacheKey: (r) => new URL(`${r.pack}?row=${r.row}`, base).href,
    describe: (run) => `the model's word row${run.length > 1 ? "s" : ""} ${run.map((r) => r.row).join(", ")}`,
    add: (r, bytes) => add(r.row, bytes),
    // A mutable index's batch of documents may need thousands of rows: gaps of up to ten
    // rows are fetched with them rather than asked for apart.
    joinGap: 4096,
  });
  load.stats = stats;
  return load;
}

/**
 * The wasm modules for a web page or worker, each fetched and instantiated once: `core()` gives
 * the lean module for an index file (`web-core/`: SearchIndex, lexical search, fusion and hits,
 * no model), `fragments()` the lean module for a fragmented index (`web-fragments/`:
 * FragmentedIndex), `full()` the full module (`web/`: both classes, the model, QueryEncoder and
 * CrossEncoder), `edit()` the full module with the mutable index (`web-edit/`: SearchIndex.empty,
 * edit, toBytes; what `Cairn.create` loads). Each resolves to the module's exports; a page
 * downloads only those it uses.
 */
const loaded = {};
function once(name, load) {
  return () =>
    (loaded[name] ??= load().then(async (module) => {
      await module.default();
      return module;
    }));
}
export const webModules = {
  core: once("core", () => import("./web-core/cairn.js")),
  fragments: once("fragments", () => import("./web-fragments/cairn.js")),
  full: once("full", () => import("./web/cairn.js")),
  edit: once("edit", () => import("./web-edit/cairn.js")),
};

/**
 * Loads the cross-encoder that `options.rerank.model` names (a URL) into the opened index,
 * through the cache, unless it is the one loaded already; the full module comes first if it is
 * not in yet. Shared by the worker and the main-thread fallback.
 */
const rerankers = new WeakMap(); // index → { model, loading }: one download at a time
export async function prepareRerank(opened, options) {
  const model = options?.rerank?.model?.replace(/\/+$/, "");
  if (!model) return;
  if (opened.loadReranker) return opened.loadReranker(model);
  const index = await opened.full();
  if (index.rerankerModel === model) return;
  let pending = rerankers.get(index);
  if (pending?.model !== model) {
    const loading = attachModel(index, model, null, ({ weights, tokenizer, config }) => index.loadRerankerFromBytes(model, weights, tokenizer, config));
    pending = { model, loading };
    rerankers.set(index, pending);
    // A failed load is forgotten, so the next search tries again.
    loading.then(({ keep }) => keep(), () => rerankers.get(index) === pending && rerankers.delete(index));
  }
  await pending.loading;
}

/**
 * The index at `url`, and the URL of its file: an index folder's URL (ending in "/", as
 * "/search/") names its `meta.cairn` (fragments), or its `index.cairn` where there is none, or,
 * for a site in several languages, the index of `language` (else the site's default) among the
 * folders its `languages.json` lists; then `folder` is that index's folder.
 */
async function fetchIndex(url, onProgress, language) {
  if (!new URL(url).pathname.endsWith("/")) return { url, ...(await fetchWithProgress(url, null, onProgress)) };
  for (const name of ["meta.cairn", "index.cairn"]) {
    const file = new URL(name, url).href;
    try {
      return { url: file, ...(await fetchWithProgress(file, null, onProgress)) };
    } catch (e) {
      if (e.status !== 404) throw e;
    }
  }
  const manifest = await fetchWithProgress(new URL("languages.json", url).href, null, () => {}).catch((e) => {
    if (e.status !== 404) throw e;
  });
  if (manifest) {
    const folder = new URL(chooseLanguage(manifest.bytes, url, language), url).href;
    return { ...(await fetchIndex(folder, onProgress)), folder };
  }
  throw new Error(`cannot find an index in ${url}: it has neither meta.cairn, index.cairn nor languages.json (HTTP 404); give the folder \`cairn index --out\` wrote, or its file`);
}

/** The folder (relative to the manifest) of the index in `language` that `languages.json`
 * (`bytes`, at `url`) lists, else of its default language. A folder is one plain name: a
 * manifest cannot send the client elsewhere. */
function chooseLanguage(bytes, url, language) {
  let manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(bytes));
  } catch {}
  const entries = Array.isArray(manifest?.languages) ? manifest.languages : [];
  const valid = manifest?.format === "cairn-languages" && entries.length > 0 && entries.every((e) => typeof e?.language === "string" && /^[a-z0-9-]{1,16}\/$/.test(e.path));
  if (!valid) throw new Error(`${url}languages.json is not a list of cairn indexes by language; build the folder again with cairn index`);
  const primary = (language ?? "").toLowerCase().split("-")[0];
  const entry = entries.find((e) => e.language === primary) ?? entries.find((e) => e.language === manifest.default) ?? entries[0];
  return entry.path;
}

/**
 * Opens an index (a file's URL, or its folder's): fetches it (progress as { event: "progress", what: "index" }) and opens it
 * with the lean core module (`modules.core()`; `webModules` on a page), which answers at once.
 * When the index has vectors and a model URL is given, the full module and the model follow in
 * the background ({ what: "model" } progress, then { event: "model", ready }): the index is
 * opened in the full module and takes over from the core one. A lexical index never fetches
 * the full module unless a search asks for a cross-encoder (so its bytes are kept for that).
 * A fragmented index (`meta.cairn`) is opened with the lean fragments module
 * (`modules.fragments()`) and searched through `fragments.js` ({ what: "fragments" } progress,
 * the bytes and requests so far, after each round of fragments a search fetched); its model is
 * the full module's QueryEncoder.
 * Returns `opened` (`opened.index` is the index to search now, `opened.full()` the full
 * module's, opened once) and the counts. Shared by the worker and the main-thread fallback.
 * `fetchTimeout`: how long a request for fragments or rows may take (ms; 30 s by default).
 */
export async function openIndex(modules, indexUrl, modelUrl, emit, { fetchTimeout, language } = {}) {
  let bytes, folder;
  const given = indexUrl;
  ({ url: indexUrl, bytes, folder } = await fetchIndex(indexUrl, (loaded, total) => emit({ event: "progress", what: "index", loaded, total }), language));
  // One index a language: a model under the folder given ("/search/model") is the chosen
  // language's ("/search/de/model").
  if (folder && modelUrl?.startsWith(given)) modelUrl = folder + modelUrl.slice(given.length);
  if (isFragmentedMeta(bytes)) return openFragmented(modules, indexUrl, bytes, modelUrl, emit, fetchTimeout);
  const core = await modules.core();
  const opened = { index: core.SearchIndex.fromBytes(bytes) };
  await stemFor(core, opened.index);
  let upgrading = null;
  opened.full = () =>
    (upgrading ??= modules.full().then(
      async (full) => {
        const index = full.SearchIndex.fromBytes(bytes);
        await stemFor(full, index).catch((e) => {
          index.free();
          throw e;
        });
        bytes = null;
        opened.index.free();
        opened.index = index;
        return index;
      },
      (e) => {
        upgrading = null;
        throw e;
      },
    ));
  const { documentCount, chunkCount, hasVectors, hasStatic } = opened.index;
  if (hasStatic) opened.rows = await staticRows(opened, indexUrl, fetchTimeout);
  if (hasVectors && modelUrl) {
    const weights = opened.index.modelWeightsFile;
    inBackground(opened, () =>
      opened
        .full()
        .then((index) => attachModel(index, modelUrl, (loaded, total, fromCache) => emit({ event: "progress", what: "model", loaded, total, fromCache }), undefined, weights, true))
        .then(async ({ fromCache, keep }) => {
          opened.modelRows = await modelRows(modelUrl, (row, bytes) => opened.index.addModelRow(row, bytes), fetchTimeout);
          emit({ event: "model", ready: true, fromCache });
          return keep();
        })
        .catch((e) => emit({ event: "model", ready: false, error: e?.message ?? String(e) })),
    );
  }
  return { opened, info: { documentCount, chunkCount, hasVectors, hasStatic } };
}

/** How long after an index opens its model starts loading if no search has answered before. */
const MODEL_AFTER = 1500;

/**
 * Starts `load` (the full module and the model) after the index's first answer
 * (`opened.answered`, which `answering` calls), or MODEL_AFTER ms after it opened if no search
 * has begun by then: the first answer never waits behind the model's megabytes.
 */
function inBackground(opened, load) {
  const start = () => {
    clearTimeout(timer);
    opened.answered = null;
    load();
  };
  const timer = setTimeout(() => searches.running === 0 && start(), MODEL_AFTER);
  opened.answered = start;
}

/**
 * What the client calls, by name, where the index lives (the worker, or the main thread):
 * `open` or `create` the index, then search it, edit it (a mutable one) and ask what it has
 * cost. `emit(event)` hears progress and the model's readiness.
 */
export function methods(emit) {
  let opened = null;
  // A search with `rerank` first loads the cross-encoder it names (once); while searches run,
  // the model's download waits (`answering`).
  const search = (method, statics) => (query, ...rest) =>
    answering(opened, async () => {
      const options = rest.at(-1);
      await prepareRerank(opened, options);
      if (statics !== null) await prepareQuery(opened, query, options, statics);
      return opened.index[method](query, ...rest);
    });
  return {
    async open({ indexUrl, modelUrl, fetchTimeout, language }) {
      const result = await openIndex(webModules, indexUrl, modelUrl, emit, { fetchTimeout, language });
      opened = result.opened;
      return result.info;
    },
    async create(options) {
      const result = await (await import("./mutable.js")).openMutable(webModules, options, emit);
      opened = result.opened;
      return result.info;
    },
    edit: (documents, remove, replace) => opened.edit(documents, remove, replace),
    export: () => opened.export(),
    search: search("search", true),
    searchWithVector: search("searchWithVector", null),
    searchDocuments: search("searchDocuments", false),
    buildContext: search("buildContext", false),
    fragmentStats: async () => opened.index.stats ?? opened.rows?.stats ?? null,
    close: () => opened?.index.free(),
  };
}

/**
 * The static tier's rows for a single-file index at `indexUrl`: fetched from the packs in `p/`
 * beside it (by range, through the Cache API: the packs are named by their content), kept in
 * memory by row so that the full module's copy of the index gets them too.
 */
async function staticRows(opened, indexUrl, timeout) {
  let cache = null;
  try {
    cache = typeof caches === "undefined" ? null : await caches.open("cairn-static-rows");
  } catch {}
  const rows = { bytes: new Map(), stats: { requests: 0, bytes: 0, fromCache: 0 } };
  const base = new URL("p/", indexUrl);
  rows.load = packLoader({
    base,
    cache,
    stats: rows.stats,
    timeout,
    key: (r) => `${r.row}`,
    cacheKey: (r) => new URL(`${r.pack}?row=${r.row}`, base).href,
    describe: (run) => `static row${run.length > 1 ? "s" : ""} ${run.map((r) => r.row).join(", ")}`,
    add: (r, bytes) => {
      opened.index.addStaticRow(r.row, bytes);
      rows.bytes.set(r.row, bytes);
    },
  });
  return rows;
}

/**
 * Before a search of a single-file index: the 8-bit model's word rows for the query, once the
 * model is in; with `statics`, and while the model is not in, the static tier's rows (below).
 *
 * The static tier's part, for an index with one while the model is not in: the
 * static rows the query's terms need, added from memory or fetched, so the search answers by
 * meaning with the static tier at once. A row that cannot be fetched leaves the search as it
 * would be without the tier (hybrid answers lexically), and `opened.rows.error` says why.
 */
export async function prepareQuery(opened, query, options, statics = true) {
  await prepareModel(opened, query, options);
  if (statics) await prepareStatic(opened, query, options);
}

/**
 * Before a search with the 8-bit model in: its word rows for the query's tokens, fetched. A row
 * that cannot be fetched leaves the search as it would be without a model (hybrid answers
 * lexically), and `opened.modelRows.error` says why.
 */
async function prepareModel(opened, query, options) {
  const load = opened.modelRows;
  if (!load || typeof query !== "string") return;
  let need;
  try {
    need = opened.index.modelRows(query, options);
  } catch {
    try {
      need = opened.index.modelRows(query); // the options of searchDocuments or buildContext
    } catch {
      return; // the search itself says what is wrong
    }
  }
  if (!need.length) return;
  try {
    await load(need);
  } catch (e) {
    load.error = e?.message ?? String(e);
  }
}

async function prepareStatic(opened, query, options) {
  const rows = opened.rows;
  if (!rows || typeof query !== "string") return;
  for (let round = 0; round < 2; round++) {
    let need;
    try {
      need = opened.index.staticRows(query, options);
    } catch {
      return; // bad options: the search itself says what is wrong
    }
    if (!need.length) return;
    const fresh = [];
    for (const r of need) {
      const bytes = rows.bytes.get(r.row);
      if (bytes) opened.index.addStaticRow(r.row, bytes);
      else fresh.push(r);
    }
    if (!fresh.length) continue;
    try {
      await rows.load(fresh);
    } catch (e) {
      rows.error = e?.message ?? String(e);
      return;
    }
  }
}

/** `openIndex` for a fragmented index: the loader over the lean fragments module's FragmentedIndex. */
async function openFragmented(modules, metaUrl, metaBytes, modelUrl, emit, timeout) {
  // The cross-encoder `rerank` names: the full module's CrossEncoder, loaded (once) before a
  // search that asks for it (`prepareRerank`).
  let reranker = null; // { model, loading: Promise<CrossEncoder> }
  const score = async (model, query, texts) => {
    if (reranker?.model !== model) throw new Error(`the cross-encoder ${JSON.stringify(model)} is not loaded, so rerank cannot run; search through the Cairn client, which loads it`);
    return (await reranker.loading).relevance(query, texts);
  };
  const lean = await modules.fragments();
  const fragments = await openFragments(
    lean.FragmentedIndex,
    metaUrl,
    metaBytes,
    score,
    ({ requests, bytes }) => emit({ event: "progress", what: "fragments", loaded: bytes, total: bytes, requests }),
    { timeout },
  );
  const { index } = fragments;
  await stemFor(lean, index).catch((e) => {
    index.free();
    throw e;
  });
  let encoder = null;
  const opened = {
    index: {
      // Until the model is in (or with encoder: "static"), the index embeds the query with its
      // static tier, if it has one; so it does when the model's rows for it cannot be fetched.
      search: async (query, options) => fragments.search(query, options, await modelVector(query, options)),
      searchWithVector: (query, vector, options) => fragments.search(query, options, Float32Array.from(vector), true),
      searchDocuments: async (query, options) => fragments.searchDocuments(query, options, await modelVector(query, options)),
      buildContext: async (query, options) => fragments.buildContext(query, options, await modelVector(query, options)),
      stats: fragments.stats,
      free: () => {
        index.free();
        reranker?.loading.then((crossEncoder) => crossEncoder.free(), () => {});
      },
    },
    loadReranker(model) {
      if (reranker?.model !== model) {
        const loading = modules.full().then(async ({ CrossEncoder }) => {
          let crossEncoder;
          const { keep } = await attachModel(null, model, null, ({ weights, tokenizer, config }) => {
            crossEncoder = CrossEncoder.fromBytes(weights, tokenizer, config);
          });
          keep();
          return crossEncoder;
        });
        const pending = { model, loading };
        // The one it replaces is freed once the new one is in (a search may still be using it).
        const replaced = reranker;
        loading.then(() => replaced?.loading.then((old) => old.free(), () => {}), () => {});
        reranker = pending;
        // A failed load is forgotten, so the next search tries again.
        loading.catch(() => reranker === pending && (reranker = null));
      }
      return reranker.loading;
    },
  };
  let rows = null; // the model's word rows, once the model is in
  // The model's embedding of the query, when the model is in and the options want it.
  const modelVector = async (query, options) =>
    encoder && options?.mode !== "lexical" && options?.encoder !== "static" ? await embed(query) : null;
  const embed = async (query) => {
    if (!rows) return null;
    try {
      await rows(encoder.rows(query));
      return encoder.embed(query);
    } catch (e) {
      rows.error = e?.message ?? String(e);
      return null;
    }
  };
  const info = { documentCount: index.documentCount, chunkCount: index.chunkCount, hasVectors: index.hasVectors, fragmented: true };
  if (info.hasVectors && modelUrl) {
    const identity = index.modelIdentity;
    inBackground(opened, () =>
      modules
        .full()
        .then(({ QueryEncoder }) =>
          attachModel(
            null,
            modelUrl,
            (loaded, total, fromCache) => emit({ event: "progress", what: "model", loaded, total, fromCache }),
            (files) => {
              encoder = QueryEncoder.fromBytes(identity, files.weights, files.tokenizer, files.config);
              addCommonRows((rows) => encoder.addRows(rows), files);
            },
            JSON.parse(identity).web_weights_file,
            true,
          ),
        )
        .then(async ({ fromCache, keep }) => {
          rows = await modelRows(modelUrl, (row, bytes) => encoder.addRow(row, bytes), timeout);
          emit({ event: "model", ready: true, fromCache });
          return keep();
        })
        .catch((e) => emit({ event: "model", ready: false, error: e?.message ?? String(e) })),
    );
  }
  return { opened, info };
}
