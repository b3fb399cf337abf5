// Opening an index in the browser: fetching with progress, and the model through the Cache
// API, so a second visit reads the model from the cache instead of the network. Without the Cache API (or when it refuses, e.g. on an
// insecure origin), the model is simply fetched.
const CACHE = "cairn-model-v1";
const FILES = ["config.json", "tokenizer.json", "model.safetensors"];

async function openCache() {
  try {
    return typeof caches === "undefined" ? null : await caches.open(CACHE);
  } catch {
    return null;
  }
}

/** The body of `url` as bytes, reporting (loaded, total); from `cache` when it has it. */
export async function fetchWithProgress(url, cache, onProgress) {
  let response = cache ? await cache.match(url) : undefined;
  const fromCache = Boolean(response);
  if (!response) {
    response = await fetch(url);
    if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status} ${response.statusText}`);
    if (cache) {
      try {
        await cache.put(url, response.clone());
      } catch {
        // A full or unavailable cache only costs the next visit a download.
      }
    }
  }
  const total = Number(response.headers.get("content-length")) || 0;
  if (!response.body) return { bytes: new Uint8Array(await response.arrayBuffer()), fromCache };
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
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

/** The three model files from `baseUrl`, through the cache. */
export async function loadModelFiles(baseUrl, onProgress) {
  const cache = await openCache();
  const base = baseUrl.replace(/\/$/, "");
  const got = {};
  let allCached = true;
  for (const name of FILES) {
    const { bytes, fromCache } = await fetchWithProgress(`${base}/${name}`, cache, name === "model.safetensors" ? onProgress : null);
    got[name] = bytes;
    allCached &&= fromCache;
  }
  return {
    files: { weights: got["model.safetensors"], tokenizer: got["tokenizer.json"], config: got["config.json"] },
    fromCache: allCached,
  };
}

/**
 * Opens an index with the wasm module's SearchIndex: fetches it (progress as
 * { event: "progress", what: "index" }), then, when it has vectors and a model URL is given,
 * loads the model in the background ({ what: "model" } progress, then { event: "model", ready })
 * so lexical answers start at once. Returns the index and its counts. Shared by the worker and
 * the main-thread fallback.
 */
export async function openIndex(SearchIndex, indexUrl, modelUrl, emit) {
  const { bytes } = await fetchWithProgress(indexUrl, null, (loaded, total) => emit({ event: "progress", what: "index", loaded, total }));
  const index = SearchIndex.fromBytes(bytes);
  if (index.hasVectors && modelUrl) {
    loadModelFiles(modelUrl, (loaded, total, fromCache) => emit({ event: "progress", what: "model", loaded, total, fromCache }))
      .then(({ files, fromCache }) => {
        index.loadModelFromBytes(files.weights, files.tokenizer, files.config);
        emit({ event: "model", ready: true, fromCache });
      })
      .catch((e) => emit({ event: "model", ready: false, error: e.message }));
  }
  return { index, info: { documentCount: index.documentCount, chunkCount: index.chunkCount, hasVectors: index.hasVectors } };
}
