// Reranking in Chromium, through the Cairn client in its Web Worker: the cross-encoder a search
// names is fetched (once, then from the Cache API), the hits come back reordered by its scores
// with every field set, and they equal the native CLI's; summaries, citation kinds, authors
// and link relationships arrive as the CLI gives them. A fragmented index of the same input
// reranks to the same hits, documents and context: its candidates' text fetched, then scored by
// the full module's CrossEncoder.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, cairn, launchChromium, root, scratch } from "../node/helpers.mjs";
import { writeTinyCrossEncoder } from "../tiny-cross-encoder.mjs";

let server, browser, base, index, fragments, reranker;

before(async () => {
  index = buildIndex([join(root, "tests/fixtures/linked")], ["--no-embed", "--summaries", "--chunk-words", "12"]);
  reranker = scratch("reranker");
  writeTinyCrossEncoder(reranker);
  // The same index in small fragments, so the reranked candidates' text spans several.
  fragments = join(index, "fragments");
  execFileSync(join(root, "target/debug/examples/write_fragments"), [index, fragments, "--text-bytes", "300", "--pack-bytes", "2000"]);
  server = await serve(0, [["/linked/", index], ["/reranker/", reranker], ["/fragments/", fragments]]);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

test("a search with rerank loads the cross-encoder in the worker and reorders the top N by it", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const fetched = [];
  page.on("request", (r) => r.url().includes("/reranker/") && fetched.push(r.url()));
  await page.goto(base + "/");
  const options = { mode: "lexical", limit: 6, includeSummary: true, rerank: { model: "/reranker/", topN: 4 } };
  const result = await page.evaluate(async (options) => {
    const { Cairn } = await import("/pkg/client.js");
    const cairn = await Cairn.open({ index: "/linked/index.cairn", worker: true });
    const first = await cairn.search("cairns valley", options);
    const again = await cairn.search("cairns valley", options);
    const plain = await cairn.search("cairns valley", { mode: "lexical", limit: 6 });
    const mode = cairn.mode;
    cairn.close();
    return { first, again, plain, mode };
  }, options);
  assert.deepEqual(errors, []);
  assert.equal(result.mode, "worker");
  assert.equal(fetched.filter((u) => u.endsWith("model.safetensors")).length, 1, "fetched once for two searches");
  const native = JSON.parse(cairn(["search", index, "cairns valley", "--json", "--options", JSON.stringify({ ...options, rerank: { model: reranker, topN: 4 } })]));
  assert.deepEqual(result.first.map((h) => h.id), native.map((h) => h.id));
  assert.deepEqual(result.again, result.first);
  result.first.forEach((h, i) => {
    assert.equal(h.scoreKind, "reranker");
    assert.equal(h.rank, i + 1);
    assert.equal(h.retrievalRank, result.plain.findIndex((p) => p.id === h.id) + 1);
    if (i < 4) {
      assert.ok(Math.abs(h.rerankerScore - native[i].rerankerScore) < 1e-5);
      assert.equal(h.score, h.rerankerScore);
    } else assert.equal(h.rerankerScore, undefined);
    assert.equal(h.summary, native[i].summary);
    assert.deepEqual(h.citation, native[i].citation);
    assert.deepEqual(h.links, native[i].links);
  });
  const scores = result.first.slice(0, 4).map((h) => h.rerankerScore);
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
  const archive = result.first.find((h) => h.citation.docId === "archive.md");
  assert.deepEqual([archive.citation.kind, archive.citation.author, archive.links[0].rel], ["section", "Ada Lovelace", "prev"]);
  await page.close();
});

test("a cross-encoder that fails to load is an error, and the client keeps answering", async () => {
  const page = await browser.newPage();
  await page.goto(base + "/");
  const result = await page.evaluate(async () => {
    const { Cairn } = await import("/pkg/client.js");
    const cairn = await Cairn.open({ index: "/linked/index.cairn", worker: true });
    const error = await cairn.search("cairns", { rerank: { model: "/nowhere/" } }).then(() => null, (e) => e.message);
    const hits = await cairn.search("cairns", { mode: "lexical" });
    cairn.close();
    return { error, hits: hits.length };
  });
  assert.match(result.error, /404|not found|cannot/i);
  assert.ok(result.hits > 0);
  await page.close();
});

test("a fragmented index reranks as the single file does", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(base + "/");
  const result = await page.evaluate(async () => {
    const { Cairn } = await import("/pkg/client.js");
    const run = async (index) => {
      const cairn = await Cairn.open({ index, worker: true });
      const rerank = { model: "/reranker/", topN: 5 };
      const out = {
        hits: await cairn.search("cairns valley", { mode: "lexical", limit: 6, explain: true, rerank }),
        filtered: await cairn.search("archive trail", { mode: "lexical", rerank: { ...rerank, topN: 2 }, related: true }),
        documents: await cairn.searchDocuments("cairns valley", { mode: "lexical", rerank, facets: ["docType"] }),
        context: await cairn.buildContext("cairns valley", { mode: "lexical", rerank, tokenBudget: 80 }),
      };
      out.documents.timing = 0;
      cairn.close();
      return out;
    };
    return { single: await run("/linked/index.cairn"), fragments: await run("/fragments/meta.cairn") };
  });
  assert.deepEqual(errors, []);
  assert.ok(result.single.hits.length > 0 && result.single.hits[0].scoreKind === "reranker");
  assert.deepEqual(result.fragments, result.single);
  await page.close();
});
