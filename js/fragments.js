// The loader of a fragmented index (`meta.cairn` and packs of fragments under `p/`): it asks the
// wasm `FragmentedIndex` what a search needs, fetches exactly that, and asks again, so a query
// costs at most five rounds of requests (terms and centroids, with the static rows of the
// terms' buckets while the model is not in, and the vector partitions once the centroids are in
// and the query's vector is known; typo words and vector partitions; expansions' terms and
// rows; the vector records of its best candidates; its hits' text). A round's ranges of one pack that lie close together are
// joined into fewer requests (`fewer`): over HTTP/1.1 every six requests cost a round trip.
// Fragments come by HTTP range requests into the packs, those of a pack at most CLOSE_BYTES
// apart joined into one request.
// Nothing a host sends is taken on trust, since one bad answer must cost one search, not the
// page: a 206 must say (Content-Range) that it is exactly the range asked, a body is read only
// up to the length expected (the rest is never downloaded), and every request is given up after
// a timeout, so a search always settles. A host that ignores `Range` is recognised by evidence
// only: a 200 whose body is the whole pack, as long as the request says (`packLength`) and,
// where crypto.subtle exists, with the SHA-256 the pack's name begins with; whole packs are
// fetched from then on. A fallback page or a truncated file is an error for the search that got
// it, kept nowhere, and the next search asks again. The wasm undoes each fragment's slot and gzip (bounded by the sizes the
// meta states) and checks it; fetched bytes are kept in memory (in the index) and, once the
// index has checked and taken them, in the Cache API under the index's content hash, so a new
// build invalidates them and a second visit costs nothing.

const CACHE_PREFIX = "cairn-fragments-";
/** Rounds one search may take before it is an error: a plain query needs at most five;
 * `related` adds one a hop, document search one each time it grows its pool, `rerank` two (its
 * candidates' text, and their scores). */
const MAX_ROUNDS = 18;
/** How long one request may take, its headers and its whole body, before it is given up (ms). */
export const FETCH_TIMEOUT = 30_000;
/** With `joinGap`, a load with more runs than this in one pack (the model's word rows for a
 * mutable index's batch of documents, never a query's) joins that pack's runs less than
 * `joinGap` bytes apart: a few bytes more, and far fewer requests. */
const MANY_RUNS = 32;
/** A search's fragments of one pack at most this many bytes apart are fetched as one, on
 * every protocol: the text fragments of one page's hits, a kilobyte or so apart, come in one
 * request (each request costs the host and the browser some time, HTTP/2's too). */
const CLOSE_BYTES = 4096;
/** A browser has at most six requests to a host in flight over HTTP/1.1, so each six more in a
 * round cost another round trip; a round trip is worth ROUND_TRIP_BYTES, what a 10 Mbit/s link
 * carries in 40 ms. While a round has more than ROUND_REQUESTS, its ranges of a pack nearest
 * each other are joined until it needs a round trip fewer, as long as the bytes between them
 * come to at most that, to at most ROUND_SPARE_BYTES in all (a semantic search's scattered
 * vector records would otherwise cost hundreds of kB to save their rounds), and never take the
 * round past ROUND_BYTES: two thirds of a later query's budget of 150 kB, the rest for the
 * rounds after it (the hits' text), so that joining never spends what the budget keeps (`fewer`).
 * Over HTTP/2 and HTTP/3 a round's requests all go at once: only ranges at most CLOSE_BYTES
 * apart are joined. */
const ROUND_REQUESTS = 6;
const ROUND_TRIP_BYTES = 48 * 1024;
const ROUND_SPARE_BYTES = 64 * 1024;
const ROUND_BYTES = 100 * 1024;
/** The most requests a loader has in flight: a browser fails requests past a few thousand. */
const IN_FLIGHT = 64;

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

/** Whether `bytes` are the pack named `name` (`<20 hex digits of its SHA-256>.<kind>`); true
 * where crypto.subtle is missing (an insecure origin), where only the length can be checked. */
async function isPack(name, bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return true;
  const digest = new Uint8Array(await subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest.subarray(0, 10), (b) => b.toString(16).padStart(2, "0")).join("");
  return name.startsWith(`${hex}.`);
}

/**
 * GETs `url` (with `range`, [start, end), a range request), given up after `timeout` ms.
 * `limitOf(response)` checks the response's status and headers (throwing to refuse it) and
 * returns the most body bytes it may have; the body is read up to that and refused beyond it,
 * the rest never downloaded. Returns { status, bytes }; counts into `stats`.
 */
async function get(url, range, timeout, stats, limitOf) {
  const controller = new AbortController();
  let timedOut = false;
  let received = 0;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeout);
  try {
    // `no-store`: past the browser's HTTP cache, which lets one request at a time read or write
    // a URL (Chromium's cache lock), so a round's range requests into one pack went one after
    // another, a round trip each. The loader keeps what it fetched itself (in memory, and in
    // the Cache API for the next visit).
    const response = await fetch(url, { signal: controller.signal, cache: "no-store", ...(range && { headers: { Range: `bytes=${range[0]}-${range[1] - 1}` } }) });
    stats.requests += 1;
    if (response.status !== 200 && response.status !== 206) throw new Error(`HTTP ${response.status} ${response.statusText}`.trimEnd());
    const limit = limitOf(response);
    const parts = [];
    const reader = response.body?.getReader();
    for (;;) {
      const { done, value } = reader
        ? await reader.read().catch((e) => {
            if (timedOut) throw e;
            throw new Error(`the answer broke off after ${received} bytes (${e?.message ?? e})`);
          })
        : { done: true };
      if (done) break;
      received += value.length;
      stats.bytes += value.length;
      if (received > limit) {
        reader.cancel().catch(() => {});
        throw new Error(`the server sent more than the ${limit} bytes expected (${received} came before cairn stopped reading)`);
      }
      parts.push(value);
    }
    const bytes = new Uint8Array(received);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.length;
    }
    return { status: response.status, bytes };
  } catch (e) {
    if (timedOut) throw new Error(`the host did not answer in ${timeout / 1000} s (${received} bytes came)`);
    throw e;
  } finally {
    clearTimeout(timer);
    // Ends the request if it is still going (a refused answer): a no-op once the body is read.
    controller.abort();
  }
}

/**
 * Fetches records and fragments out of the packs under `base` (a URL ending in `p/`): by range
 * requests, adjacent ones joined into one, or whole packs once the host shows it ignores
 * `Range`, at most IN_FLIGHT at once; through `cache` (a Cache API cache, or null). `load(requests)` fetches each request
 * ({ pack, offset, length, packLength, ... }) not already fetched or in flight, hands its bytes
 * to `add(request, bytes)` and, once that accepted them, stores them in the cache. `key(r)`
 * names a request, `cacheKey(r)` its cache entry, `describe(run)` a run of them in errors.
 * `stats` counts requests and bytes. `timeout`: how long a request may take (ms). `joinGap`: see
 * MANY_RUNS. `closeBytes`: ranges at most this far apart are fetched as one. `joinClose`: a
 * round's close ranges joined into fewer requests (`fewer`).
 */
export function packLoader({ base, cache, stats, key, cacheKey, add, describe, timeout = FETCH_TIMEOUT, joinGap = 0, closeBytes = 0, joinClose = false }) {
  if (!(timeout > 0 && timeout <= 2 ** 31 - 1)) throw new Error(`the fetch timeout must be a number of milliseconds from 1 to 2147483647, not ${timeout}`);
  let ranges; // undefined until the host shows whether it honours Range: a 206, or a whole pack that checks
  const packs = new Map(); // pack name → Promise<Uint8Array> of a whole pack (resolved only once checked)
  const inflight = new Map(); // key → Promise, so parallel searches share one fetch
  // What the cache holds, listed once in the background: once listed, a request it lacks (every
  // one, on a first visit) costs no lookup (each costs this thread a fraction of a millisecond);
  // until then, and where it cannot list, each is looked up.
  let held = null;
  if (cache) Promise.resolve().then(() => cache.keys()).then((keys) => (held = new Set(keys.map((k) => k.url))), () => {});

  /** Refuses `bytes` unless they are the pack `name` of `length` bytes; `answer` says what came. */
  async function checkPack(name, length, bytes, answer) {
    if (bytes.length !== length) throw new Error(`${answer} with ${bytes.length} bytes, not the pack's ${length} (a fallback page or a truncated file?)`);
    if (!(await isPack(name, bytes))) throw new Error(`${answer} with ${bytes.length} bytes that are not the pack (their SHA-256 does not match its name)`);
  }

  /** A whole pack, fetched once and kept (once checked) while the host sends no ranges. */
  function wholePack(name, length) {
    let pending = packs.get(name);
    if (!pending) {
      const limitOf = (response) => {
        if (response.status !== 200) throw new Error(`asked for the whole file, the server answered ${response.status}`);
        return length;
      };
      pending = get(new URL(name, base), null, timeout, stats, limitOf).then(async ({ bytes }) => {
        await checkPack(name, length, bytes, "asked for the whole file, the server answered 200");
        return bytes;
      });
      packs.set(name, pending);
      // A failed fetch is forgotten, so the next search that needs the pack tries again.
      pending.catch(() => packs.get(name) === pending && packs.delete(name));
    }
    return pending;
  }

  /** Bytes [start, end) of pack `name` by a range request. A whole pack that checks instead (a
   * host without ranges) is kept, and tells the loader to fetch whole packs from then on. */
  async function range(name, start, end, length) {
    const asked = `bytes ${start}-${end - 1}/${length ?? "*"}`;
    const limitOf = (response) => {
      if (response.status === 200) {
        if (length === undefined) throw new Error(`asked for ${asked}, the server answered with the whole file (200), and the pack's length is not known to check it`);
        return length;
      }
      const said = response.headers.get("content-range");
      const m = said?.match(/^bytes (\d+)-(\d+)\/(\d+|\*)$/);
      if (!said) throw new Error(`asked for ${asked}, the server answered 206 without a Content-Range${response.type === "cors" ? " (a host on another origin must list it in Access-Control-Expose-Headers)" : ""}`);
      if (!m || Number(m[1]) !== start || Number(m[2]) !== end - 1 || (length !== undefined && m[3] !== String(length))) throw new Error(`asked for ${asked}, the server answered 206 with Content-Range: ${said}`);
      return end - start;
    };
    const { status, bytes } = await get(new URL(name, base), [start, end], timeout, stats, limitOf);
    if (status === 206) {
      if (bytes.length !== end - start) throw new Error(`asked for ${asked}, the server sent ${bytes.length} bytes for a range of ${end - start}`);
      ranges ??= true;
      return bytes;
    }
    await checkPack(name, length, bytes, `asked for ${asked}, the server answered 200`);
    // The whole pack, and it checks: this host does not serve ranges.
    packs.set(name, Promise.resolve(bytes));
    ranges ??= false;
    return bytes.subarray(start, end);
  }

  /** Fetches a run of adjacent requests of one pack: a map key → its bytes. */
  async function fetchRun(run) {
    const { pack, packLength } = run[0];
    const start = run[0].offset;
    const end = run[run.length - 1].offset + run[run.length - 1].length;
    const whole = packs.has(pack) || (ranges === false && packLength !== undefined);
    const bytes = whole ? (await wholePack(pack, packLength)).subarray(start, end) : await range(pack, start, end, packLength);
    if (bytes.length !== end - start) throw new Error(`the pack has ${bytes.length} bytes from ${start}, not the ${end - start} asked`);
    return new Map(run.map((r) => [key(r), bytes.slice(r.offset - start, r.offset - start + r.length)]));
  }

  /** Every request's bytes, and whether they came over the network: from the cache, else in
   * joined runs. */
  async function fetchAll(requests) {
    const got = new Map();
    const missing = [];
    const cached = await Promise.all(
      requests.map(async (r) => {
        const hit = cache && (!held || held.has(cacheKey(r))) && (await cache.match(cacheKey(r)).catch(() => undefined));
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
    const join = (requests, gap) => {
      const runs = [];
      for (const r of requests) {
        const last = runs.at(-1)?.at(-1);
        if (last && last.pack === r.pack && r.offset - (last.offset + last.length) <= gap) runs.at(-1).push(r);
        else runs.push([r]);
      }
      return runs;
    };
    const runs = [];
    for (const of_pack of join(missing, Infinity)) {
      runs.push(...join(of_pack, joinGap && join(of_pack, 0).length > MANY_RUNS ? joinGap : closeBytes));
    }
    if (joinClose) fewer(runs);
    const fetched = await inTurns(runs, IN_FLIGHT, (run) =>
      fetchRun(run).catch((e) => {
        throw new Error(`cannot fetch ${describe(run)} of ${new URL(run[0].pack, base)}: ${e?.message ?? e}; the index answers other queries, and the next search that needs ${run.length > 1 ? "these" : "it"} asks again`);
      }),
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
          try {
            await add(r, bytes);
          } catch (e) {
            // What the index refuses is dropped, so the next search fetches it anew: a cached
            // copy (damaged on disk), or a whole pack kept in memory (checked by its length
            // alone where crypto.subtle is missing).
            if (!fetched) cache?.delete(cacheKey(r)).catch(() => {});
            packs.delete(r.pack);
            throw e;
          }
          // Kept for the next visit only once the index has checked and taken it, and after the
          // search has answered (a put costs about half a millisecond of this thread).
          if (fetched && cache) setTimeout(() => cache.put(cacheKey(r), new Response(bytes)).catch(() => {}));
        });
        inflight.set(key(r), one);
        // A failed request is forgotten, so the next search that needs it tries again.
        one.catch(() => inflight.delete(key(r)));
      }
    }
    await Promise.all(requests.map((r) => inflight.get(key(r))));
  };
}

/** Joins runs of one pack nearest each other (`runs` in pack and offset order) while a round
 * trip fewer (ROUND_REQUESTS fewer requests) costs at most ROUND_TRIP_BYTES between them, and
 * the round at most ROUND_SPARE_BYTES in all and ROUND_BYTES with what it needs. */
function fewer(runs) {
  // What the round fetches already, the bytes between its close ranges included.
  const needed = runs.reduce((n, run) => n + run.at(-1).offset + run.at(-1).length - run[0].offset, 0);
  let spare = Math.min(ROUND_SPARE_BYTES, ROUND_BYTES - needed);
  while (runs.length > ROUND_REQUESTS) {
    const trial = runs.slice();
    const gap = (i) => (trial[i][0].pack === trial[i + 1][0].pack ? trial[i + 1][0].offset - (trial[i].at(-1).offset + trial[i].at(-1).length) : Infinity);
    const target = (Math.ceil(runs.length / ROUND_REQUESTS) - 1) * ROUND_REQUESTS;
    let cost = 0;
    while (trial.length > target) {
      let best = 0;
      for (let i = 1; i + 1 < trial.length; i++) if (gap(i) < gap(best)) best = i;
      cost += gap(best);
      if (cost > Math.min(ROUND_TRIP_BYTES, spare)) return;
      trial.splice(best, 2, trial[best].concat(trial[best + 1]));
    }
    spare -= cost;
    runs.splice(0, runs.length, ...trial);
  }
}

/** `fn` of each item, at most `limit` running at once; the results in item order. */
async function inTurns(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Opens the fragmented index whose meta file's bytes (as fetched) are `metaBytes`, at
 * `metaUrl`, with the wasm class `FragmentedIndex`. Returns { index, search(query, options,
 * vector), searchDocuments(...), buildContext(...), stats }: `search` fetches what the query
 * needs and answers with SearchHit[], `searchDocuments` with a DocumentSearchResponse,
 * `buildContext` with a ContextResponse; `stats` counts requests and bytes (as sent over the
 * network, gzip). `score(model, query, texts)`, for `rerank`: the cross-encoder `model`'s
 * relevance of each text to the query (a Float32Array). `onFetched(stats)`, if given, is called
 * after each round of fragments a search fetched, with `stats` as they then stand. `timeout`:
 * how long one request for fragments may take (ms; FETCH_TIMEOUT by default).
 */
export async function openFragments(FragmentedIndex, metaUrl, metaBytes, score, onFetched, { timeout } = {}) {
  const index = FragmentedIndex.fromMeta(metaBytes);
  const base = new URL("p/", metaUrl);
  const cache = await openCache(index.hash);
  const stats = { requests: 1, bytes: metaBytes.length, fromCache: 0 };
  // Over HTTP/2 and HTTP/3 a round's requests all go at once: only close ranges are joined
  // (ROUND_REQUESTS, CLOSE_BYTES).
  const protocol = globalThis.performance?.getEntriesByName?.(String(metaUrl))?.at(-1)?.nextHopProtocol ?? "";
  const load = packLoader({
    base,
    cache,
    stats,
    timeout,
    joinClose: !/^h[23]/.test(protocol),
    closeBytes: CLOSE_BYTES,
    key: (r) => (r.row !== undefined ? `row/${r.row}` : r.record === undefined ? `${r.fragment}` : `${r.fragment}/${r.record}`),
    cacheKey: (r) => new URL(r.row !== undefined ? `${r.pack}?row=${r.row}` : `${r.pack}?fragment=${r.fragment}${r.record === undefined ? "" : `&record=${r.record}`}`, base).href,
    describe: (run) => {
      if (run[0].row !== undefined) return `static row${run.length > 1 ? "s" : ""} ${run.map((r) => r.row).join(", ")}`;
      const names = [...new Set(run.map((r) => r.fragment))];
      return `${run[0].record !== undefined ? "vector records of " : ""}fragment${names.length > 1 ? "s" : ""} ${names.join(", ")}`;
    },
    // Each as fetched: the wasm undoes a fragment's slot and gzip itself.
    add: (r, bytes) => {
      if (r.row !== undefined) index.addStaticRow(r.row, bytes);
      else if (r.record !== undefined) index.addRecord(r.fragment, r.record, bytes);
      else index.addFragment(r.fragment, bytes);
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
