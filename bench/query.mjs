// Query latency in V8 (Node, one thread), the engine Chromium runs: the query embedding of a
// 16-token query, a whole hybrid search on 10k chunks, and the semantic retrieval alone (exact
// scan of f32 and of int8 vectors against HNSW) at 1k, 10k and 100k vectors. Prints p50 and p95 and the machine's load.
//
// Usage: node bench/query.mjs BENCH_DIR MODEL_DIR
//   BENCH_DIR: the index folders written by `cargo run --example bench_vectors` (flat-N, int8-N, graph-N)
//   MODEL_DIR: an index's model/ folder (the web weights)
import { readFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadavg, cpus } from "node:os";

const require = createRequire(import.meta.url);
const { SearchIndex } = require(join(import.meta.dirname, "../pkg/node/cairn.js"));
const [benchDir, modelDir] = process.argv.slice(2);
if (!benchDir || !modelDir) throw new Error("usage: node bench/query.mjs BENCH_DIR MODEL_DIR");

// 16 tokens with [CLS] and [SEP] (bert-base-uncased WordPiece).
const QUERY16 = "how do i keep the search index small for a static site";
const QUERIES = [
  "how are the boundary layer equations solved", "information retrieval evaluation", "fetal glucose levels",
  "time sharing operating systems", "computer programs for library cataloguing", QUERY16,
  "heat transfer in hypersonic flow", "the effect of drugs on the crystalline lens",
];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function time(label, runs, fn) {
  for (let i = 0; i < 5; i++) fn(i);
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label}: p50 ${percentile(ms, 0.5).toFixed(2)} ms, p95 ${percentile(ms, 0.95).toFixed(2)} ms (${runs} runs)`);
}

function open(dir) {
  const index = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
  return index;
}

function withModel(index) {
  index.loadModelFromBytes(readFileSync(join(modelDir, "model.safetensors")), readFileSync(join(modelDir, "tokenizer.json")), readFileSync(join(modelDir, "config.json")));
  return index;
}

console.log(`node ${process.version}, ${cpus()[0].model}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
const ten = withModel(open(join(benchDir, "int8-10000")));  // the default store
time("query embedding, 16 tokens", 50, () => ten.embed(QUERY16));
time("hybrid search, 10k chunks (embedding included)", 50, (i) => ten.search(QUERIES[i % QUERIES.length], { limit: 10 }));
time("lexical search, 10k chunks", 200, (i) => ten.search(QUERIES[i % QUERIES.length], { limit: 10, mode: "lexical" }));

const vectors = QUERIES.map((q) => Float32Array.from(ten.embed(q)));
for (const n of [1000, 10000, 100000]) {
  for (const [kind, how] of [["flat", "exact SIMD scan, f32"], ["int8", "exact SIMD scan, int8"], ["graph", "HNSW"]]) {
    const dir = join(benchDir, `${kind}-${n}`);
    if (!existsSync(dir)) continue;
    const index = open(dir);
    time(`semantic retrieval, ${n} vectors, ${how}`, 100, (i) =>
      index.searchWithVector("", vectors[i % vectors.length], { limit: 10, mode: "semantic", highlight: false }));
    index.free();
  }
}
console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
