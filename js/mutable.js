// The mutable index: documents added, replaced and removed in the page, as MiniSearch and
// Orama take them, searchable at once. The edit module's SearchIndex (pkg/web-edit: the full
// module with the build path) does the work: its `edit` builds as `cairn index` builds JSONL
// records, embedding only new chunks with the model of the model folder given. This file
// fetches the model and its word rows, turns documents into records, runs one edit at a time,
// and keeps the index in the browser's storage (the Origin Private File System, else IndexedDB)
// when a `store` name is given, saved after every edit so that a reload finds it as it was left.
// Shared by the worker and the main-thread fallback.
import { stemFor } from "./stem.js";
import { addCommonRows, attachModel, fetchWithProgress, modelRows } from "./fetch.js";

/** The weights file of a model folder `cairn index` wrote (its 8-bit model). */
const WEIGHTS = "model.gguf";

/**
 * Opens a mutable index: the one saved under `store` if there is one, else the index file at
 * `indexUrl` if given, else an empty one; with `modelUrl` (a model folder `cairn index` wrote)
 * its documents are embedded, and searches are hybrid. Returns { opened, info } as `openIndex`
 * does, `opened.edit(documents, removeIds, replace)` and `opened.export()` besides.
 */
export async function openMutable(modules, { indexUrl, modelUrl, store, weightsFile, fetchTimeout }, emit) {
  if (store !== undefined && !(typeof store === "string" && /^[\w.-]{1,100}$/.test(store))) {
    throw new Error(`store must be a name of 1 to 100 letters, digits, '.', '-' or '_', not ${JSON.stringify(store)}`);
  }
  const edit = await modules.edit();
  const { SearchIndex } = edit;
  let index = null;
  const kept = store ? await storage.read(store) : null;
  if (kept) {
    try {
      index = SearchIndex.fromBytes(kept);
    } catch (e) {
      // A damaged copy must not keep the store unusable for good: say how to drop it.
      throw new Error(`the index kept under "${store}" cannot be read (${e?.message ?? e}); Cairn.forget("${store}") removes it, and the next create starts anew`);
    }
  } else if (indexUrl) {
    index = SearchIndex.fromBytes((await fetchWithProgress(indexUrl, null, (loaded, total) => emit({ event: "progress", what: "index", loaded, total }))).bytes);
  }
  const weights = index?.modelWeightsFile ?? weightsFile ?? WEIGHTS;
  let rows = null;
  if (modelUrl && (!index || index.hasVectors)) {
    const onProgress = (loaded, total, fromCache) => emit({ event: "progress", what: "model", loaded, total, fromCache });
    const load = (files) => {
      if (index) index.loadModelFromBytes(files.weights, files.tokenizer, files.config);
      else index = SearchIndex.empty(files.weights, files.tokenizer, files.config, weights);
      addCommonRows((rows) => index.addModelRows(rows), files);
    };
    const { fromCache, keep } = await attachModel(null, modelUrl, onProgress, load, weights);
    keep();
    rows = await modelRows(modelUrl, (row, bytes) => index.addModelRow(row, bytes), fetchTimeout);
    emit({ event: "model", ready: true, fromCache });
  }
  index ??= SearchIndex.empty();
  await stemFor(edit, index);
  let queue = Promise.resolve(); // one edit at a time, saved in the order made
  const opened = {
    index,
    modelRows: rows,
    full: async () => index,
    edit(documents, remove, replace) {
      const run = queue.then(async () => {
        const jsonl = records(documents);
        if (rows && jsonl) {
          const need = index.editRows(jsonl);
          if (need.length) await rows(need);
        }
        const report = index.edit(jsonl, ids(remove), replace);
        if (store) {
          await storage.write(store, index.toBytes()).catch((e) => {
            throw new Error(`the edit is made and searchable, but the index could not be saved under "${store}" (${e?.message ?? e}); the next edit saves it whole again`);
          });
        }
        return report;
      });
      queue = run.catch(() => {});
      return run;
    },
    export: () => queue.then(() => index.toBytes()),
  };
  const info = { documentCount: index.documentCount, chunkCount: index.chunkCount, hasVectors: index.hasVectors };
  return { opened, info };
}

/** Documents ({ id, title, text, url?, metadata?, created?, updated?, author? }) as JSONL. */
function records(documents) {
  if (!Array.isArray(documents)) throw new Error(`documents must be an array of objects, not ${typeof documents}`);
  return documents
    .map((d, i) => {
      if (d === null || typeof d !== "object" || Array.isArray(d)) throw new Error(`document ${i} must be an object with an id, a title and a text`);
      const id = d._id ?? d.id; // as in a JSONL record, `_id` first
      if (typeof id !== "string" && typeof id !== "number") throw new Error(`document ${i} must have an id (a string or a number)`);
      return JSON.stringify(d);
    })
    .join("\n");
}

/** Ids to remove as strings (a record's id 42 and "42" are one id). */
function ids(remove) {
  if (!Array.isArray(remove)) throw new Error(`the ids to remove must be an array, not ${typeof remove}`);
  return remove.map((id, i) => {
    if (typeof id !== "string" && typeof id !== "number") throw new Error(`id ${i} to remove must be a string or a number`);
    return String(id);
  });
}

/**
 * Where a mutable index is kept: a file `cairn/<name>.cairn` in the Origin Private File System
 * (written through a swap file that replaces the old one only when complete), else a record in
 * IndexedDB where OPFS or its writable streams are missing (or refused, as in some private
 * windows).
 */
export const storage = {
  async read(name) {
    try {
      const file = await (await opfs()).getFileHandle(`${name}.cairn`);
      return new Uint8Array(await (await file.getFile()).arrayBuffer());
    } catch (e) {
      if (e?.name !== "NotFoundError" && !(e instanceof NoOpfs)) throw e;
    }
    return idb("readonly", (s) => s.get(name)).then((bytes) => bytes ?? null);
  },
  /** Removes what is kept under `name`, wherever it is (nothing there is not an error). */
  async remove(name) {
    try {
      await (await opfs()).removeEntry(`${name}.cairn`);
    } catch (e) {
      if (e?.name !== "NotFoundError" && !(e instanceof NoOpfs)) throw e;
    }
    if (typeof indexedDB !== "undefined") await idb("readwrite", (s) => s.delete(name));
  },
  async write(name, bytes) {
    let file = null;
    try {
      file = await (await opfs()).getFileHandle(`${name}.cairn`, { create: true });
    } catch (e) {
      if (!(e instanceof NoOpfs)) throw e;
    }
    if (!file) return idb("readwrite", (s) => s.put(bytes, name));
    const writable = await file.createWritable();
    try {
      await writable.write(bytes);
      await writable.close();
    } catch (e) {
      await writable.abort().catch(() => {});
      throw new Error(`cannot save the index ${name}: ${e?.message ?? e}`);
    }
  },
};

class NoOpfs extends Error {}

/** The OPFS folder, if this browser can write files there (Safari before 17 cannot). */
async function opfs() {
  const writable = globalThis.FileSystemFileHandle && "createWritable" in FileSystemFileHandle.prototype;
  if (!writable || !globalThis.navigator?.storage?.getDirectory) throw new NoOpfs("no writable Origin Private File System here");
  // Refused (a private window): IndexedDB instead.
  const root = await navigator.storage.getDirectory().catch((e) => {
    throw new NoOpfs(e?.message ?? String(e));
  });
  return root.getDirectoryHandle("cairn", { create: true });
}

/** Runs `request(objectStore)` in a transaction on the "indexes" store of the "cairn" database. */
function idb(mode, request) {
  if (typeof indexedDB === "undefined") return Promise.reject(new Error("this browser has neither the Origin Private File System nor IndexedDB to keep the index in; leave out store"));
  return new Promise((resolve, reject) => {
    const open = indexedDB.open("cairn", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("indexes");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction("indexes", mode);
      const req = request(tx.objectStore("indexes"));
      tx.oncomplete = () => (db.close(), resolve(req.result));
      tx.onerror = tx.onabort = () => (db.close(), reject(tx.error ?? req.error));
    };
  });
}
