// The loader of a fragmented index (`meta.cairn` and packs of fragments under `p/`): it asks the
// wasm `FragmentedIndex` what a search needs, fetches exactly that, and asks again, so a query
// costs at most five rounds of requests (terms and centroids; the static rows of its terms,
// while the model is not in; typo words and vector partitions; expansions and the vector
// records of its best candidates; its hits' text).
// Fragments come by HTTP range requests into the packs, adjacent ones joined into one request;
// a host that ignores `Range` (a 200 with the whole pack) is noticed on the first answer, and
// whole packs are fetched from then on. Each fragment is gzipped by `cairn index` and undone
// here with DecompressionStream; fetched ones are kept in memory (in the index) and, once the
// index has checked and taken them, in the Cache API under the index's content hash, so a new
// build invalidates them and a second visit costs nothing.

const CACHE_PREFIX = "cairn-fragments-";
/** Rounds one search may take before it is an error: a plain query needs at most five;
 * `related` adds one a hop, document search one each time it grows its pool, `rerank` two (its
 * candidates' text, and their scores). */
const MAX_ROUNDS = 18;

/** `bytes` with gzip undone. */
export async function gunzip(bytes, what) {
  try {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (e) {
    throw new Error(`${what} is damaged (not valid gzip: ${e?.message ?? e}); build the index again and upload all of it`);
  }
}

/** A fragment's gzip bytes out of its slot: the slot's last two bytes (little-endian) count the
 * bytes after them, these two included (`cairn::fragment::unslot`). */
function unslot(bytes, what) {
  const tail = bytes.length < 2 ? 0 : bytes[bytes.length - 2] | (bytes[bytes.length - 1] << 8);
  if (tail < 2 || tail > bytes.length) throw new Error(`${what} is damaged (its slot does not end as it should); build the index again and upload all of it`);
  return bytes.subarray(0, bytes.length - tail);
}

/** Whether `bytes` start as a gzip stream does: a fragmented index's meta file. */
export function isFragmentedMeta(bytes) {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

async function openCache(hash) {
  try {
    if (typeof caches === "undefined") return null;
    // Fragments of other builds of this index are never read again.
    for (const name of await caches.keys()) if (name.startsWith(CACHE_PREFIX) && name !== CACHE_PREFIX + hash) caches.delete(name).catch(() => {});
    return await caches.open(CACHE_PREFIX + hash);
  } catch {
    return null;
  }
}

/**
 * Fetches records and fragments out of the packs under `base` (a URL ending in `p/`): by range
 * requests, adjacent ones joined into one, or whole packs once the host shows it ignores
 * `Range`; through `cache` (a Cache API cache, or null). `load(requests)` fetches each request
 * ({ pack, offset, length, ... }) not already fetched or in flight, hands its bytes to
 * `add(request, bytes)` and, once that accepted them, stores them in the cache. `key(r)` names
 * a request, `cacheKey(r)` its cache entry, `describe(run)` a run of them in errors. `stats`
 * counts requests and bytes.
 */
export function packLoader({ base, cache, stats, key, cacheKey, add, describe }) {
  let ranges; // undefined until a pack answers; then whether the host honours Range
  const packs = new Map(); // pack name → Promise<Uint8Array>, when the host sends whole packs
  const inflight = new Map(); // key → Promise, so parallel searches share one fetch

  async function wholePack(name) {
    let pending = packs.get(name);
    if (!pending) {
      pending = fetch(new URL(name, base)).then(async (response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
        const bytes = new Uint8Array(await response.arrayBuffer());
        stats.requests += 1;
        stats.bytes += bytes.length;
        return bytes;
      });
      packs.set(name, pending);
      pending.catch(() => packs.delete(name));
    }
    return pending;
  }

  /** Fetches a run of adjacent requests of one pack: a map key → its bytes. */
  async function fetchRun(run) {
    const start = run[0].offset;
    const end = run[run.length - 1].offset + run[run.length - 1].length;
    let bytes;
    if (ranges !== false) {
      const response = await fetch(new URL(run[0].pack, base), { headers: { Range: `bytes=${start}-${end - 1}` } });
      if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
      const body = new Uint8Array(await response.arrayBuffer());
      stats.requests += 1;
      stats.bytes += body.length;
      if (response.status === 206) {
        ranges = true;
        bytes = body;
      } else {
        // The whole pack: this host does not serve ranges.
        ranges = false;
        packs.set(run[0].pack, Promise.resolve(body));
        bytes = body.subarray(start, end);
      }
    } else {
      bytes = (await wholePack(run[0].pack)).subarray(start, end);
    }
    if (bytes.length !== end - start) throw new Error(`the server sent ${bytes.length} bytes for a range of ${end - start}`);
    return new Map(run.map((r) => [key(r), bytes.slice(r.offset - start, r.offset - start + r.length)]));
  }

  /** Every request's bytes, and whether they came over the network: from the cache, else in
   * joined runs. */
  async function fetchAll(requests) {
    const got = new Map();
    const missing = [];
    const cached = await Promise.all(
      requests.map(async (r) => {
        const hit = cache && (await cache.match(cacheKey(r)).catch(() => undefined));
        return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
      }),
    );
    requests.forEach((r, i) => {
      if (cached[i]) {
        got.set(key(r), { bytes: cached[i], fetched: false });
        stats.fromCache += 1;
      } else missing.push(r);
    });
    missing.sort((a, b) => (a.pack < b.pack ? -1 : a.pack > b.pack ? 1 : a.offset - b.offset));
    const runs = [];
    for (const r of missing) {
      const last = runs.at(-1)?.at(-1);
      if (last && last.pack === r.pack && last.offset + last.length === r.offset) runs.at(-1).push(r);
      else runs.push([r]);
    }
    const fetched = await Promise.all(
      runs.map((run) =>
        fetchRun(run).catch((e) => {
          throw new Error(`cannot fetch ${describe(run)} of ${new URL(run[0].pack, base)}: ${e?.message ?? e}; the index answers other queries, and this one once the file is there`);
        }),
      ),
    );
    for (const map of fetched) for (const [k, bytes] of map) got.set(k, { bytes, fetched: true });
    return got;
  }

  return async function load(requests) {
    const mine = requests.filter((r) => !inflight.has(key(r)));
    if (mine.length) {
      const all = fetchAll(mine);
      for (const r of mine) {
        const one = all.then(async (got) => {
          const { bytes, fetched } = got.get(key(r));
          await add(r, bytes);
          // Kept for the next visit only once the index has checked and taken it.
          if (fetched) cache?.put(cacheKey(r), new Response(bytes)).catch(() => {});
        });
        inflight.set(key(r), one);
        // A failed request is forgotten, so the next search that needs it tries again.
        one.catch(() => inflight.delete(key(r)));
      }
    }
    await Promise.all(requests.map((r) => inflight.get(key(r))));
  };
}

/**
 * Opens the fragmented index whose meta file's bytes (as fetched) are `metaBytes`, at
 * `metaUrl`, with the wasm class `FragmentedIndex`. Returns { index, search(query, options,
 * vector), searchDocuments(...), buildContext(...), stats }: `search` fetches what the query
 * needs and answers with SearchHit[], `searchDocuments` with a DocumentSearchResponse,
 * `buildContext` with a ContextResponse; `stats` counts requests and bytes (as sent over the
 * network, gzip). `score(model, query, texts)`, for `rerank`: the cross-encoder `model`'s
 * relevance of each text to the query (a Float32Array). `onFetched(stats)`, if given, is called
 * after each round of fragments a search fetched, with `stats` as they then stand.
 */
export async function openFragments(FragmentedIndex, metaUrl, metaBytes, score, onFetched) {
  const index = FragmentedIndex.fromMeta(await gunzip(metaBytes, "the meta file"));
  const base = new URL("p/", metaUrl);
  const cache = await openCache(index.hash);
  const stats = { requests: 1, bytes: metaBytes.length, fromCache: 0 };
  const load = packLoader({
    base,
    cache,
    stats,
    key: (r) => (r.row !== undefined ? `row/${r.row}` : r.record === undefined ? `${r.fragment}` : `${r.fragment}/${r.record}`),
    cacheKey: (r) => new URL(r.row !== undefined ? `${r.pack}?row=${r.row}` : `${r.pack}?fragment=${r.fragment}${r.record === undefined ? "" : `&record=${r.record}`}`, base).href,
    describe: (run) => {
      if (run[0].row !== undefined) return `static row${run.length > 1 ? "s" : ""} ${run.map((r) => r.row).join(", ")}`;
      const names = [...new Set(run.map((r) => r.fragment))];
      return `fragment${names.length > 1 ? "s" : ""} ${names.join(", ")}`;
    },
    add: async (r, bytes) => {
      if (r.row !== undefined) index.addStaticRow(r.row, bytes);
      else if (r.record !== undefined) index.addRecord(r.fragment, r.record, bytes);
      else {
        const what = `fragment ${r.fragment} of ${new URL(r.pack, base)}`;
        index.addFragment(r.fragment, await gunzip(unslot(bytes, what), what));
      }
    },
  });

  /** Takes `step()`s, fetching what each needs, until one answers. */
  async function settle(step) {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const got = step();
      if (got.rerank) {
        const { model, query, chunks, texts } = got.rerank;
        if (!score) throw new Error(`rerank needs a cross-encoder, and this index was opened without one; open it with the Cairn client, which loads ${model}`);
        index.addRerankScores(model, query, chunks, await score(model, query, texts));
      } else if (got.need) {
        await load(got.need);
        onFetched?.({ ...stats });
      } else return got;
    }
    throw new Error(`the search did not settle after ${MAX_ROUNDS} rounds of fragments; the index is inconsistent, build it again`);
  }

  // `vector`: the page's model's embedding of the query; `given`: the caller's instead.
  const search = async (query, options, vector, given = false) =>
    (await settle(() => (given ? index.searchWithVector(query, vector, options) : index.search(query, options, vector ?? undefined)))).hits;
  const buildContext = async (query, options, vector) =>
    (await settle(() => index.buildContext(query, options, vector ?? undefined))).context;
  const searchDocuments = async (query, options, vector) =>
    (await settle(() => index.searchDocuments(query, options, vector ?? undefined))).documents;

  return { index, search, searchDocuments, buildContext, stats };
}
