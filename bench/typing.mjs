// Search as you type in V8 (Node, one thread, the wasm Node build): lexical latency at limit 10
// of full queries, of the same queries as typed (each prefix of the last word from 2 characters,
// with `prefix`), and with one typo in each word of 6+ letters (with `fuzzy`). Prints p50 and
// p95 per kind.
//
// Usage: node bench/typing.mjs INDEX_DIR QUERIES_TXT
//   INDEX_DIR: a folder written by `cairn index` (e.g. the Rust std + book, lexical only)
//   QUERIES_TXT: one query a line (bench/rust-docs-queries.txt)
import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { loadavg, cpus } from "node:os";

const require = createRequire(import.meta.url);
const { SearchIndex } = require(join(import.meta.dirname, "../pkg/node/cairn.js"));
const [dir, queriesFile] = process.argv.slice(2);
if (!dir || !queriesFile) throw new Error("usage: node bench/typing.mjs INDEX_DIR QUERIES_TXT");

const queries = readFileSync(queriesFile, "utf8").split("\n").filter((l) => l.trim());
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const typo = (word) => {
  if (word.length < 6) return word;
  const i = 1 + Math.floor(random() * (word.length - 2));
  return word.slice(0, i) + word.slice(i + 1); // a deleted letter
};
const typed = queries.flatMap((q) => {
  const words = q.split(" ");
  const last = words.pop();
  return Array.from({ length: last.length - 1 }, (_, n) => [...words, last.slice(0, n + 2)].join(" "));
});
const typos = queries.map((q) => q.split(" ").map(typo).join(" "));

const file = join(dir, "index.cairn");
let t = performance.now();
const index = SearchIndex.fromBytes(readFileSync(file));
const loadMs = performance.now() - t;
console.log(`node ${process.version}, ${cpus()[0].model}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`${index.chunkCount} chunks, ${(statSync(file).size / 1e6).toFixed(1)} MB, loaded in ${loadMs.toFixed(0)} ms`);

function run(label, list, options) {
  const search = (q) => index.search(q, { mode: "lexical", limit: 10, ...options });
  search(list[0]); // the word set is built on first use
  const ms = list.map((q) => {
    t = performance.now();
    search(q);
    return performance.now() - t;
  });
  ms.sort((a, b) => a - b);
  const at = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(2);
  console.log(`${label}: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms (${list.length} queries)`);
}

run("full queries, plain", queries, {});
run("full queries, prefix + fuzzy", queries, { prefix: true, fuzzy: true });
run("as typed (each prefix of the last word), prefix + fuzzy", typed, { prefix: true, fuzzy: true });
run("one typo a long word, fuzzy", typos, { fuzzy: true, prefix: true });
console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
