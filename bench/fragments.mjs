// What a fragmented index costs a browser per query: requests, bytes over the network and
// latency, locally and on a simulated network (a round trip per round of requests, and the
// round's bytes at a given bandwidth), against a local HTTP server that counts every byte it
// sends. The first query starts from a cold cache and includes the page's wasm and JavaScript
// (gzip, as a static host serves them); later queries reuse what earlier ones fetched. It also
// checks that each query's top 10 are the single-file index's (when one is given), and the share
// of the single file's top 10 found in any order.
//
//   node bench/fragments.mjs FRAGMENTS_DIR QUERIES_TXT [--single INDEX_DIR] [--vectors VECTORS.f32]
//        [--rtt-ms 40] [--mbit 10] [--no-ranges] [--probes N] [--options JSON] [--node-module]
//
// FRAGMENTS_DIR is a folder `cairn index --layout fragments` wrote. VECTORS.f32 holds one
// query vector a query (384 little-endian f32 each, in QUERIES_TXT's order): the queries then
// search hybrid with them (`searchWithVector`), as a page whose model is loaded would.
// Needs `scripts/build-pkg.sh` (pkg/web-fragments: the module the index runs in and the bytes a
// page downloads; pkg/node for the single file of `--single`, and with `--node-module`).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : args[i + 1];
};
const positional = [];
for (let i = 0; i < args.length; i++) {
  if (args[i].startsWith("--")) i += args[i] === "--no-ranges" || args[i] === "--node-module" ? 0 : 1;
  else positional.push(args[i]);
}
const [dir, queriesFile] = positional;
const rttMs = Number(flag("--rtt-ms", 40));
const mbit = Number(flag("--mbit", 10));
const ranges = !args.includes("--no-ranges");
const probes = flag("--probes") ? Number(flag("--probes")) : undefined;
const extra = JSON.parse(flag("--options", "{}"));
const root = resolve(new URL("..", import.meta.url).pathname);
const require = createRequire(import.meta.url);
const node = require(join(root, "pkg/node/cairn.js"));
const { SearchIndex } = node;
// The index searches in the page's own module (pkg/web-fragments, as a browser runs it), or with
// `--node-module` in the Node build's (opt-level 3).
let { FragmentedIndex } = node;
if (!process.argv.includes("--node-module")) {
  const web = await import(pathToFileURL(join(root, "pkg/web-fragments/cairn.js")).href);
  web.initSync({ module: readFileSync(join(root, "pkg/web-fragments/cairn_bg.wasm")) });
  ({ FragmentedIndex } = web);
}
const { openFragments } = await import(pathToFileURL(join(root, "js/fragments.js")).href);
const { serve } = await import(pathToFileURL(join(root, "scripts/serve.mjs")).href);

const queries = readFileSync(queriesFile, "utf8").split("\n").map((q) => q.trim()).filter(Boolean);
const vectorsFile = flag("--vectors");
const vectors = vectorsFile ? new Float32Array(readFileSync(vectorsFile).buffer.slice(0)) : null;
const dim = 384;
const kb = (b) => (b / 1000).toFixed(1);

// The server: the fragments under /search/, the page's module and scripts under /pkg/ (gzip).
let round = 0;
const page = ["pkg/web-fragments/cairn_bg.wasm", "pkg/web-fragments/cairn.js", "pkg/fetch.js", "pkg/fragments.js", "pkg/client.js", "pkg/worker.js"];
const server = await serve(0, [["/search/", resolve(dir)]], { ranges, gzip: true });
const log = server.log;
const push = log.push.bind(log);
log.push = (entry) => push({ ...entry, round });
const base = `http://127.0.0.1:${server.address().port}`;
for (const file of page) await (await fetch(`${base}/${file}`)).arrayBuffer();
const pageBytes = log.reduce((n, r) => n + r.bytes, 0);
const metaBytes = new Uint8Array(await (await fetch(`${base}/search/meta.cairn`)).arrayBuffer());
const fragments = await openFragments(FragmentedIndex, `${base}/search/meta.cairn`, metaBytes);
// Each call into the index starts a round: its requests go out together.
for (const method of ["search", "searchWithVector"]) {
  const call = FragmentedIndex.prototype[method];
  fragments.index[method] = (...a) => {
    round += 1;
    return call.apply(fragments.index, a);
  };
}
const single = flag("--single") ? SearchIndex.fromBytes(readFileSync(join(flag("--single"), "index.cairn"))) : null;

const rows = [];
const recall = [];
let identical = 0;
const overlap = [];
for (const [i, query] of queries.entries()) {
  const before = log.length;
  const vector = vectors ? vectors.subarray(i * dim, (i + 1) * dim) : null;
  const options = { limit: 10, mode: vector ? "hybrid" : "lexical", probes, ...extra };
  const started = performance.now();
  const hits = await fragments.search(query, options, vector, Boolean(vector));
  const ms = performance.now() - started;
  const requests = log.slice(before);
  const byRound = new Map();
  for (const r of requests) byRound.set(r.round, (byRound.get(r.round) ?? 0) + r.bytes);
  let bytes = requests.reduce((n, r) => n + r.bytes, 0);
  let count = requests.length;
  let rounds = byRound.size;
  let simulated = [...byRound.values()].reduce((t, b) => t + rttMs + (b * 8) / (mbit * 1000), 0);
  if (i === 0) {
    // The page's module and scripts, then the meta file: two more rounds before the first query.
    bytes += pageBytes + metaBytes.length;
    count += page.length + 1;
    rounds += 2;
    simulated += 2 * rttMs + ((pageBytes + metaBytes.length) * 8) / (mbit * 1000);
  }
  if (single) {
    const expected = vector ? single.searchWithVector(query, vector, options) : single.search(query, options);
    const same = JSON.stringify(expected.map((h) => h.id)) === JSON.stringify(hits.map((h) => h.id));
    identical += same;
    const ids = new Set(expected.map((h) => h.id));
    overlap.push(ids.size ? hits.filter((h) => ids.has(h.id)).length / ids.size : Number(hits.length === 0));
    if (!same && !vector) console.error(`top 10 differ for ${JSON.stringify(query)}`);
    if (vector) {
      // Recall@10 of the vector side against the single file's exact scan (bytes not counted).
      const semantic = { ...options, mode: "semantic" };
      const exact = new Set(single.searchWithVector(query, vector, semantic).map((h) => h.id));
      const before = log.length;
      const found = await fragments.search(query, semantic, vector, Boolean(vector));
      log.length = before;
      recall.push(found.filter((h) => exact.has(h.id)).length / Math.max(1, exact.size));
    }
  }
  const split = [...byRound.values()].map((b) => kb(b)).join(" + ");
  rows.push({ query, requests: count, rounds, bytes, split, ms, simulated, first: hits[0]?.id });
}
// Each later query again, its fragments all held: the module's own time (median of three runs).
const warm = [];
for (const [i, query] of queries.entries()) {
  if (i === 0) continue;
  const vector = vectors ? vectors.subarray(i * dim, (i + 1) * dim) : null;
  const options = { limit: 10, mode: vector ? "hybrid" : "lexical", probes, ...extra };
  const times = [];
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    await fragments.search(query, options, vector, Boolean(vector));
    times.push(performance.now() - started);
  }
  warm.push(times.sort((a, b) => a - b)[1]);
}
server.close();

console.log(`| query | requests | rounds | kB | kB a round | local ms | simulated ms (${rttMs} ms RTT, ${mbit} Mbit/s) |`);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.query} | ${r.requests} | ${r.rounds} | ${kb(r.bytes)} | ${r.split} | ${r.ms.toFixed(1)} | ${r.simulated.toFixed(0)} |`);
const later = rows.slice(1);
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const pct = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))];
console.log();
console.log(`page (wasm + JS, gzip): ${kb(pageBytes)} kB; meta: ${kb(metaBytes.length)} kB; ranges: ${ranges}`);
console.log(`first query: ${kb(rows[0].bytes)} kB in ${rows[0].requests} requests, ${rows[0].simulated.toFixed(0)} ms simulated`);
const laterBytes = later.map((r) => r.bytes);
console.log(`later queries: median ${kb(pct(laterBytes, 0.5))} kB (${laterBytes.filter((b) => b > 150_000).length} of ${laterBytes.length} over 150 kB), p95 ${kb(pct(laterBytes, 0.95))} kB, max ${kb(Math.max(...laterBytes))} kB; median ${pct(later.map((r) => r.requests), 0.5)} requests; simulated median ${pct(later.map((r) => r.simulated), 0.5).toFixed(0)} ms, p95 ${pct(later.map((r) => r.simulated), 0.95).toFixed(0)} ms; local median ${pct(later.map((r) => r.ms), 0.5).toFixed(1)} ms`);
console.log(`warm (every fragment held): median ${pct(warm, 0.5).toFixed(2)} ms, p95 ${pct(warm, 0.95).toFixed(2)} ms, in the ${process.argv.includes("--node-module") ? "Node build's module" : "page's module (pkg/web-fragments)"}`);
if (single) console.log(`top 10 identical to the single file: ${identical} of ${rows.length}; their hits in any order: ${(overlap.reduce((a, b) => a + b, 0) / overlap.length).toFixed(3)} on average`);
if (recall.length) console.log(`semantic recall@10 against the single file's exact scan: ${(recall.reduce((a, b) => a + b, 0) / recall.length).toFixed(3)} over ${recall.length} queries (probes ${probes ?? "default"})`);
