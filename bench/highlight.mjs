// The cost of highlighting in V8 (Node, one thread, the wasm Node build): semantic and hybrid
// searches with `highlight: true` at limit 10 and 100, where hits found only by meaning get the
// sentence closest to the query. That work is bounded per search (cairn::search::limits:
// SENTENCE_BUDGET_CHARS), so limit 100 costs about what limit 10 does. Prints p50, p95 and the
// slowest run, and how many hits per search were found by meaning only.
//
// Usage: node bench/highlight.mjs INDEX_DIR QUERIES_JSONL
//   INDEX_DIR: a folder written by `cairn index` with a model (index.cairn and model/)
//   QUERIES_JSONL: BEIR queries ({"_id", "text"} a line), e.g. ../shared/eval/cisi/queries.jsonl
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadavg, cpus } from "node:os";

const require = createRequire(import.meta.url);
const { SearchIndex } = require(join(import.meta.dirname, "../pkg/node/cairn.js"));
const [dir, queriesFile] = process.argv.slice(2);
if (!dir || !queriesFile) throw new Error("usage: node bench/highlight.mjs INDEX_DIR QUERIES_JSONL");

const queries = readFileSync(queriesFile, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l).text).slice(0, 40);
const index = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
const model = (f) => readFileSync(join(dir, "model", f));
index.loadModelFromBytes(model("model.safetensors"), model("tokenizer.json"), model("config.json"));

console.log(`node ${process.version}, ${cpus()[0].model}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`${index.chunkCount} chunks, ${queries.length} queries`);
for (const mode of ["semantic", "hybrid"]) {
  for (const limit of [10, 100]) {
    const ms = [];
    let semanticOnly = 0;
    for (const q of queries) {
      const t = performance.now();
      const hits = index.search(q, { mode, limit, highlight: true });
      ms.push(performance.now() - t);
      semanticOnly += hits.filter((h) => !h.signals.lexical && h.highlights.length === 0).length;
    }
    ms.sort((a, b) => a - b);
    const at = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(1);
    console.log(
      `${mode}, limit ${limit}, highlight: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, slowest ${ms.at(-1).toFixed(1)} ms; ` +
        `${(semanticOnly / queries.length).toFixed(1)} hits a search found by meaning only`,
    );
  }
}
console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
