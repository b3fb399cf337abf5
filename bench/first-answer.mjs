// What a browser downloads before its first answer by meaning, and before the model's: Debian's
// headless Chromium opens a blank page, imports the `Cairn` client (in its worker) on an index
// with its model, and searches; a server that counts every byte (gzip for the page's wasm and
// scripts, as a static host serves them; ranges into the packs) holds the full module and the
// model's weights back until the static tier has answered. Then the model is let through and the same queries run
// again. Prints bytes and requests up to each answer, the static rows later queries cost, and
// the search time with each encoder (median and p95 over the queries, as the page sees it).
//
//   node bench/first-answer.mjs [INDEX_DIR] [QUERIES_TXT]     (default: www/index, 20 demo queries)
//
// Needs `scripts/build-pkg.sh` and an index built with the model (scripts/build-demo-index.sh).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { launchChromium } from "../tests/node/helpers.mjs";

const root = resolve(new URL("..", import.meta.url).pathname);
const dir = resolve(process.argv[2] ?? `${root}/www/index`);
const queries = process.argv[3]
  ? readFileSync(process.argv[3], "utf8").split("\n").map((q) => q.trim()).filter(Boolean)
  : ["how do I install it", "search without a server", "highlight offsets", "fragments fetched per query", "typo tolerance", "what does the index weigh", "embedding model in the browser", "reciprocal rank fusion", "filter by tag", "recency boost", "cross-encoder reranking", "web worker client", "build the index from markdown", "pdf pages", "damaged index file", "split build across machines", "static tier", "prefix matching as you type", "citations and line numbers", "summaries of documents"];

let release;
const held = new Promise((ok) => (release = ok));
// The full module and the model's weights wait until the static tier has answered, so what the
// first answer needs is counted apart from what loads in the background.
const alter = async (path, body) => (path.endsWith("model.gguf") || path.startsWith("/pkg/web/") ? (await held, body) : body);
const blank = mkdtempSync(join(tmpdir(), "cairn-blank-"));
writeFileSync(join(blank, "blank.html"), "<!doctype html><title>blank</title>");
const server = await serve(0, [["/bench/", dir], ["/blank/", blank]], { gzip: true, alter });
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
const page = await browser.newPage();
const sum = (from, to = server.log.length, pick = () => true) => server.log.slice(from, to).filter(pick).reduce((n, r) => n + r.bytes, 0);
const count = (from, to = server.log.length, pick = () => true) => server.log.slice(from, to).filter(pick).length;
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const kB = (n) => `${(n / 1000).toFixed(1)} kB`;

await page.goto(`${base}/blank/blank.html`);
const start = server.log.length;
const first = await page.evaluate(async (query) => {
  const { Cairn } = await import("/pkg/client.js");
  window.cairn = await Cairn.open({ index: "/bench/index.cairn", model: "/bench/model" });
  const hits = await window.cairn.search(query, { limit: 10 });
  return hits.find((h) => h.signals.semantic)?.signals.semantic.encoder ?? "none";
}, queries[0]);
const firstEnd = server.log.length;
const isRows = (r) => r.path.endsWith(".cairnrows");

const timings = async (encoder) => {
  const out = [];
  for (const q of queries) {
    const from = server.log.length;
    const t = await page.evaluate(async (q) => {
      const t0 = performance.now();
      const hits = await window.cairn.search(q, { limit: 10 });
      return { ms: performance.now() - t0, encoder: hits.find((h) => h.signals.semantic)?.signals.semantic.encoder };
    }, q);
    out.push({ ...t, rows: sum(from, server.log.length, isRows) });
  }
  if (out.some((t) => t.encoder !== encoder && t.encoder !== undefined)) throw new Error(`expected ${encoder} answers`);
  return out;
};
const quick = await timings("static");
const quickAgain = await timings("static");

release();
const modelStart = server.log.length;
await page.waitForFunction(() => window.cairn.modelReady, null, { timeout: 300_000 });
const byModel = await timings("model");
const modelEnd = server.log.length;

console.log(`index ${dir}, ${queries.length} queries`);
console.log(`first answer (${first}): ${kB(sum(start, firstEnd))} in ${count(start, firstEnd)} requests:`);
const groups = [
  ["core wasm + JS", (r) => r.path.startsWith("/pkg/")],
  ["index.cairn", (r) => r.path.endsWith("index.cairn")],
  ["static rows", isRows],
];
for (const [name, pick] of groups) console.log(`  ${name}: ${kB(sum(start, firstEnd, pick))} (${count(start, firstEnd, pick)} requests)`);
const rows = quick.slice(1).map((t) => t.rows);
console.log(`static rows of later queries (cold): median ${kB(percentile(rows, 0.5))}, max ${kB(Math.max(...rows))}; repeated: ${kB(quickAgain.reduce((n, t) => n + t.rows, 0))}`);
console.log(`until the model's answers: ${kB(sum(start, modelEnd))} (${kB(sum(modelStart, modelEnd))} after the static tier: full wasm, model files)`);
for (const [name, ts] of [["static tier (warm rows)", quickAgain], ["model", byModel]]) {
  const ms = ts.map((t) => t.ms);
  console.log(`search with the ${name}: p50 ${percentile(ms, 0.5).toFixed(1)} ms, p95 ${percentile(ms, 0.95).toFixed(1)} ms`);
}
await browser.close();
server.close();
