// The cost of cross-encoder reranking in V8 (Node, one thread, the wasm Node build): a model
// of cross-encoder/ms-marco-MiniLM-L-6-v2's size (6 layers, 384 wide, 22.7M parameters; random
// weights from tests/tiny-cross-encoder.mjs, so the cost is real and the scores meaningless),
// reranking the top N = 20 and 50 lexical candidates of real queries. Prints ms per search and
// per candidate, beside the same search without reranking.
//
// Usage: node bench/rerank.mjs INDEX_DIR QUERIES_JSONL [QUERIES]
//   INDEX_DIR: a folder written by `cairn index` (e.g. of ../shared/eval/cisi/corpus.jsonl)
//   QUERIES_JSONL: BEIR queries ({"_id", "text"} a line); the first QUERIES (default 10) run
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { writeTinyCrossEncoder } from "../tests/tiny-cross-encoder.mjs";

const require = createRequire(import.meta.url);
const { SearchIndex } = require(join(import.meta.dirname, "../pkg/node/cairn.js"));
const [dir, queriesFile, count = "10"] = process.argv.slice(2);
if (!dir || !queriesFile) throw new Error("usage: node bench/rerank.mjs INDEX_DIR QUERIES_JSONL [QUERIES]");
const queries = readFileSync(queriesFile, "utf8").trim().split("\n").slice(0, Number(count)).map((l) => JSON.parse(l).text);

const model = mkdtempSync(join(tmpdir(), "cairn-bench-reranker-"));
const made = writeTinyCrossEncoder(model, { shape: "minilm" });
const index = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
const file = (name) => readFileSync(join(model, name));
let started = performance.now();
index.loadRerankerFromBytes(model, file("model.safetensors"), file("tokenizer.json"), file("config.json"));
const loadMs = performance.now() - started;

// `limit` is topN, so every reranked candidate comes back and is counted.
const time = (options) => {
  const ms = [];
  let candidates = 0;
  for (const q of queries) {
    const t = performance.now();
    const hits = index.search(q, options);
    ms.push(performance.now() - t);
    candidates += hits.filter((h) => h.rerankerScore !== undefined).length;
  }
  ms.sort((a, b) => a - b);
  const total = ms.reduce((a, b) => a + b, 0);
  return { p50: ms[Math.floor(ms.length / 2)], mean: total / ms.length, perCandidate: candidates ? total / candidates : 0 };
};

console.log(`${cpus()[0].model}, load ${loadavg()[0].toFixed(2)}; ${made.parameters} parameters, loaded in ${loadMs.toFixed(0)} ms; ${queries.length} queries`);
console.log("| rerank | p50 ms / search | mean ms / search | ms / candidate |");
console.log("|---|---|---|---|");
const plain = time({ mode: "lexical", limit: 10 });
console.log(`| off | ${plain.p50.toFixed(2)} | ${plain.mean.toFixed(2)} | – |`);
for (const topN of [20, 50]) {
  const r = time({ mode: "lexical", limit: topN, rerank: { model, topN } });
  console.log(`| topN ${topN} | ${r.p50.toFixed(0)} | ${r.mean.toFixed(0)} | ${r.perCandidate.toFixed(1)} |`);
}
