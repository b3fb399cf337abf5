// A plain search (default options) in V8, for comparing builds: p50 and p95 over the queries of
// a BEIR collection, lexical mode. Usage: node bench/plain.mjs PKG_NODE_DIR INDEX_DIR QUERIES.jsonl [OPTIONS_JSON]
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { loadavg } from "node:os";

const [pkgDir, indexDir, queriesFile, extra] = process.argv.slice(2);
const options = { mode: "lexical", ...JSON.parse(extra ?? "{}") };
const { SearchIndex } = createRequire(import.meta.url)(join(resolve(pkgDir), "cairn.js"));
const index = SearchIndex.fromBytes(readFileSync(join(indexDir, "index.cairn")));
const queries = readFileSync(queriesFile, "utf8").trim().split("\n").map((l) => JSON.parse(l).text);
const ms = [];
for (let round = 0; round < 6; round++) {
  for (const q of queries) {
    const t = performance.now();
    index.search(q, options);
    if (round > 0) ms.push(performance.now() - t);
  }
}
ms.sort((a, b) => a - b);
const p = (x) => ms[Math.floor(x * ms.length)].toFixed(3);
console.log(`${pkgDir}: ${JSON.stringify(options)}, ${index.chunkCount} chunks, ${ms.length} runs: p50 ${p(0.5)} ms, p95 ${p(0.95)} ms (load ${loadavg()[0].toFixed(2)})`);
