// The wasm module under Node (V8, as in Chromium) against the native CLI: the same queries give
// the same ids in the same order, the same text embeds to the same vector, and damaged input
// gives errors, not crashes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { buildIndex, cairn, cosine, evalDir, fixtures, model, root, scratch } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const { SearchIndex } = require(join(root, "pkg/node/cairn.js"));

/** The model written beside the index (8-bit: its word rows come with `addRows`). */
function loadModel(index, dir) {
  index.loadModelFromBytes(
    readFileSync(join(dir, index.modelWeightsFile)),
    readFileSync(join(dir, "tokenizer.json")),
    readFileSync(join(dir, "config.json")),
  );
}

/** The word rows a search of `query` needs, read from the model folder's packs. */
function addRows(index, dir, query, options) {
  for (const r of index.modelRows(query, options)) {
    index.addModelRow(r.row, readFileSync(join(dir, "p", r.pack)).subarray(r.offset, r.offset + r.length));
  }
}

function cliBatch(indexDir, queriesFile, mode, limit) {
  const out = cairn(["search", indexDir, "--queries", queriesFile, "--limit", String(limit), "--json", "--mode", mode]);
  return out.trim().split("\n").map((line) => JSON.parse(line));
}

test("lexical: CLI and wasm return the same ids in the same order (CISI, 76 queries)", () => {
  const dir = buildIndex([join(evalDir, "cisi/corpus.jsonl")], ["--no-embed", "--layout", "single"]);
  const index = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
  const queriesFile = join(evalDir, "cisi/queries.jsonl");
  const queries = readFileSync(queriesFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const native = cliBatch(dir, queriesFile, "lexical", 20);
  assert.equal(native.length, queries.length);
  for (const [i, q] of queries.entries()) {
    const hits = index.search(q.text, { mode: "lexical", limit: 20 });
    assert.equal(native[i].queryId, String(q._id));
    assert.deepEqual(hits.map((h) => h.id), native[i].hits.map((h) => h.id), `query ${q._id}`);
    // Scores are f32 on both sides: the module writes the shortest decimal that reads back as
    // the f32, the CLI's batch output the f32 widened; both read back as the same f32s.
    assert.deepEqual(hits.map((h) => Math.fround(h.score)), native[i].hits.map((h) => Math.fround(h.score)), `query ${q._id} scores`);
  }
});

test("hybrid: the model in wasm agrees with the native one", () => {
  const dir = buildIndex([fixtures], ["--model", model, "--summaries"]);
  const index = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
  assert.equal(index.hasVectors, true);
  assert.equal(index.modelReady, false);
  // Before the model: hybrid answers lexically, semantic says why it cannot.
  assert.equal(index.search("stone trail markers")[0].scoreKind, "bm25");
  assert.throws(() => index.search("stone", { mode: "semantic" }), /model is not loaded yet/);
  loadModel(index, join(dir, "model"));
  assert.equal(index.modelReady, true);
  assert.equal(index.modelWeightsFile, "model.gguf");
  // The 8-bit model without the word rows of a query answers it lexically until they are in.
  assert.throws(() => index.embed("stone trail markers"), /word row \d+ is not loaded/);
  assert.equal(index.search("stone trail markers")[0].scoreKind, "bm25");
  assert.ok(index.modelRows("stone trail markers").length > 0);
  addRows(index, join(dir, "model"), "stone trail markers");
  assert.deepEqual(index.modelRows("stone trail markers"), []);
  assert.notEqual(index.search("stone trail markers")[0].scoreKind, "bm25");

  // The word rows of the index's own text (model/common.cairnrows), added at once: a query of
  // its words then needs none of its own; a file that is not one is refused, and the index
  // keeps answering.
  const common = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
  loadModel(common, join(dir, "model"));
  assert.throws(() => common.addModelRows(new Uint8Array(40)), /word rows given at once are not a file of rows/);
  assert.ok(common.modelRows("cairns guide walkers").length > 0);
  assert.ok(common.addModelRows(readFileSync(join(dir, "model/common.cairnrows"))) > 100);
  assert.deepEqual(common.modelRows("cairns guide walkers"), []);
  assert.notEqual(common.search("cairns guide walkers")[0].scoreKind, "bm25");
  // As the search box asks: a hit's sentences embedded together (padded) for its highlight.
  const boxed = common.search("cairns guide walkers", { limit: 32, highlight: true, snippetLength: 160, prefix: true, fuzzy: true });
  assert.ok(boxed.some((h) => h.signals.semantic?.encoder === "model"));
  common.free();

  // The same text, embedded natively and in wasm with the same (8-bit) weights.
  const reference = JSON.parse(readFileSync(join(root, "tests/data/reference_embeddings.json"), "utf8"));
  const texts = reference.sentences.map((s) => s.text);
  const native = cairn(["embed", "--model", dir, ...texts]).trim().split("\n").map((l) => JSON.parse(l));
  for (const [i, s] of reference.sentences.entries()) {
    addRows(index, join(dir, "model"), s.text);
    const wasm = index.embed(s.text);
    assert.equal(wasm.length, 384);
    const c = cosine(wasm, native[i]);
    assert.ok(c >= 0.9999, `${s.text}: wasm vs native cosine ${c}`);
    // The 8-bit model against the f32 reference implementation.
    assert.ok(cosine(wasm, s.embedding) >= 0.99, `${s.text}: vs reference ${cosine(wasm, s.embedding)}`);
  }

  // Summaries chosen by meaning at build time: a few of the document's own sentences.
  for (const d of index.searchDocuments("stone trail markers", { includeSummary: true, includeFullDocs: true, onlyMatchingChunks: false }).results) {
    assert.ok(d.summary && d.summary.length <= 330, `${d.docId}: ${d.summary}`);
    const flat = (s) => s.replace(/\s+/g, " ");
    for (const sentence of d.summary.replace(/…$/, "").split(/(?<=[.!?]) /)) assert.ok(flat(d.content).includes(flat(sentence)), `${d.docId}: ${sentence}`);
  }

  // The same hybrid queries give the same ranking on both targets.
  for (const q of ["stone trail markers", "espresso bars in Japan", "how do I build the index", "fusion of rankings"]) {
    for (const mode of ["hybrid", "semantic"]) {
      const cliHits = JSON.parse(cairn(["search", dir, q, "--json", "--mode", mode]));
      addRows(index, join(dir, "model"), q, { mode });
      const hits = index.search(q, { mode });
      assert.deepEqual(hits.map((h) => h.id), cliHits.map((h) => h.id), `${mode}: ${q}`);
      // The int8 SIMD scan in wasm scores as the native lanes do (the query embeddings differ
      // only by f32 rounding).
      if (mode === "semantic") hits.forEach((h, i) => assert.ok(Math.abs(h.score - cliHits[i].score) < 1e-4, `${q}: ${h.score} vs ${cliHits[i].score}`));
    }
  }
});

test("damaged indexes and wrong models are errors, not crashes", () => {
  const dir = buildIndex([fixtures], ["--no-embed"]);
  const bytes = readFileSync(join(dir, "index.cairn"));
  assert.throws(() => SearchIndex.fromBytes(bytes.subarray(0, bytes.length - 3)), /truncated/);
  const flipped = Buffer.from(bytes);
  flipped[flipped.length >> 1] ^= 0xff;
  assert.throws(() => SearchIndex.fromBytes(flipped), /damaged/);
  assert.throws(() => SearchIndex.fromBytes(new TextEncoder().encode("{\"not\": \"an index\"}")), /not a cairn index/);
  // The module still works after those errors.
  const index = SearchIndex.fromBytes(bytes);
  assert.ok(index.search("cairn").length > 0);
  assert.throws(() => index.loadModelFromBytes(new Uint8Array(10), new Uint8Array(), new Uint8Array()), /no embeddings/);

  const hybrid = buildIndex([join(fixtures, "notes.txt")], ["--model", model]);
  const h = SearchIndex.fromBytes(readFileSync(join(hybrid, "index.cairn")));
  assert.throws(
    () => h.loadModelFromBytes(new Uint8Array(100), readFileSync(join(model, "tokenizer.json")), readFileSync(join(model, "config.json"))),
    /does not match the index/,
  );
  assert.ok(h.search("stone", { mode: "lexical" }).length > 0);
});

test("rerank, summaries, citation kind and author, link rel: wasm agrees with native", async () => {
  const { writeTinyCrossEncoder } = await import("../tiny-cross-encoder.mjs");
  const reranker = scratch("reranker");
  writeTinyCrossEncoder(reranker);
  const dir = buildIndex([join(root, "tests/fixtures/linked")], ["--no-embed", "--summaries", "--chunk-words", "12"]);
  const index = SearchIndex.fromBytes(readFileSync(join(dir, "index.cairn")));
  const options = { mode: "lexical", limit: 6, includeSummary: true, rerank: { model: reranker, topN: 4 } };
  assert.throws(() => index.search("cairns valley", options), /cross-encoder .* is not loaded/);
  assert.equal(index.search("cairns valley", { mode: "lexical" }).length > 0, true, "the index still answers");
  assert.equal(index.rerankerModel, undefined);
  index.loadRerankerFromBytes(
    reranker + "/",
    readFileSync(join(reranker, "model.safetensors")),
    readFileSync(join(reranker, "tokenizer.json")),
    readFileSync(join(reranker, "config.json")),
  );
  assert.equal(index.rerankerModel, reranker, "named without the trailing slash");
  const hits = index.search("cairns valley", options);
  const native = JSON.parse(cairn(["search", dir, "cairns valley", "--json", "--options", JSON.stringify(options)]));
  assert.deepEqual(hits.map((h) => h.id), native.map((h) => h.id));
  hits.forEach((h, i) => {
    assert.equal(h.scoreKind, "reranker");
    assert.equal(h.retrievalRank, native[i].retrievalRank);
    if (i < 4) assert.ok(Math.abs(h.rerankerScore - native[i].rerankerScore) < 1e-5, `${h.rerankerScore} vs ${native[i].rerankerScore}`);
    else assert.equal(h.rerankerScore, undefined);
    assert.equal(h.summary, native[i].summary);
    assert.deepEqual([h.citation.kind, h.citation.author], [native[i].citation.kind, native[i].citation.author]);
    assert.deepEqual(h.links, native[i].links);
  });
  const archive = hits.find((h) => h.citation.docId === "archive.md");
  assert.deepEqual([archive.citation.kind, archive.citation.author, archive.links[0].rel, archive.links[0].targetType], ["section", "Ada Lovelace", "prev", "md"]);
  assert.ok(archive.summary.length > 0);
  // A broken cross-encoder is an error that leaves the loaded one and the index answering.
  assert.throws(() => index.loadRerankerFromBytes("broken", new Uint8Array([1, 2, 3]), readFileSync(join(reranker, "tokenizer.json")), readFileSync(join(reranker, "config.json"))), /safetensors/);
  assert.equal(index.rerankerModel, reranker);
  assert.deepEqual(index.search("cairns valley", options).map((h) => h.id), native.map((h) => h.id));
  assert.throws(() => index.search("x", { rerank: { model: reranker, topN: 5000 } }), /rerank.topN must be at most 1000/);
  assert.throws(() => index.search("x", { rerank: { topN: 5 } }), /missing field `model`/);
});
