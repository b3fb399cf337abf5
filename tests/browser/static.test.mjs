// The static tier in Debian's headless Chromium, through the `Cairn` client and <cairn-search>,
// served by a server that records every request:
//   - a query fetches exactly the static rows its terms need (the ranges of their records, and
//     nothing else of the rows' packs), answers by meaning with them (signals.semantic.encoder
//     "static"), and fetches nothing again for a repeated query;
//   - a fragmented index does the same in its own round of requests;
//   - the search box answers by meaning with the static tier while the model is held back, then,
//     once the model is in, again with the model, the reader's selected result kept.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, launchChromium, model, root } from "../node/helpers.mjs";

let server, browser, base, release;
const held = new Promise((ok) => (release = ok));

before(async () => {
  const index = buildIndex([join(root, "tests/fixtures/docs")], ["--model", model]);
  const fragments = buildIndex([join(root, "tests/fixtures/docs")], ["--model", model, "--layout", "fragments"]);
  // The model's weights wait until a test releases them.
  const alter = async (path, body) => (path.endsWith("model.gguf") ? (await held, body) : body);
  server = await serve(0, [["/site/", index], ["/fragments/", fragments]], { alter });
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  release();
  await browser?.close();
  server?.close();
});

/** Byte ranges as [start, end) pairs, adjacent ones joined. */
function joined(ranges) {
  const out = [];
  for (const [pack, start, end] of ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))) {
    const last = out.at(-1);
    if (last && last[0] === pack && last[2] === start) last[2] = end;
    else out.push([pack, start, end]);
  }
  return out;
}

test("a query fetches exactly its terms' static rows, once, and answers by meaning with them", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  const query = "coffee shops in Paris";
  // What the index says the query needs, from a copy of it opened with the core module.
  const expected = await page.evaluate(async (query) => {
    const core = await import("/pkg/web-core/cairn.js");
    await core.default();
    const bytes = new Uint8Array(await (await fetch("/site/index.cairn")).arrayBuffer());
    const index = core.SearchIndex.fromBytes(bytes);
    return { hasStatic: index.hasStatic, rows: index.staticRows(query, { mode: "semantic" }) };
  }, query);
  assert.ok(expected.hasStatic && expected.rows.length > 0, JSON.stringify(expected));
  const from = server.log.length;
  const hits = await page.evaluate(async (query) => {
    const { Cairn } = await import("/pkg/client.js");
    window.cairn = await Cairn.open({ index: "/site/index.cairn" });
    return window.cairn.search(query, { mode: "semantic", limit: 5 });
  }, query);
  assert.ok(hits.length > 0);
  assert.ok(hits.every((h) => h.signals.semantic?.encoder === "static"), JSON.stringify(hits.map((h) => h.signals)));

  const rowRequests = server.log.slice(from).filter((r) => r.path.endsWith(".cairnrows"));
  assert.ok(rowRequests.every((r) => r.status === 206 && r.range), JSON.stringify(rowRequests));
  const asked = rowRequests.map((r) => {
    const [, start, end] = r.range.match(/^bytes=(\d+)-(\d+)$/);
    return [r.path.split("/").pop(), Number(start), Number(end) + 1];
  });
  const wanted = expected.rows.map((r) => [r.pack, r.offset, r.offset + r.length]);
  assert.deepEqual(joined(asked), joined(wanted), "the rows fetched are not the rows the query's terms need");

  const again = server.log.length;
  const repeat = await page.evaluate((query) => window.cairn.search(query, { mode: "semantic", limit: 5 }), query);
  assert.deepEqual(repeat, hits);
  assert.equal(server.log.slice(again).filter((r) => r.path.endsWith(".cairnrows")).length, 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a fragmented index fetches its query's static rows too, and answers by meaning with them", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  const from = server.log.length;
  const hits = await page.evaluate(async () => {
    const { Cairn } = await import("/pkg/client.js");
    const cairn = await Cairn.open({ index: "/fragments/meta.cairn" });
    return cairn.search("coffee shops in Paris", { mode: "semantic", limit: 5 });
  });
  assert.ok(hits.length > 0);
  assert.ok(hits.every((h) => h.signals.semantic?.encoder === "static"), JSON.stringify(hits.map((h) => h.signals)));
  const rows = server.log.slice(from).filter((r) => r.path.startsWith("/fragments/p/") && r.path.endsWith(".cairnrows"));
  assert.ok(rows.length > 0 && rows.every((r) => r.status === 206), JSON.stringify(rows));
  assert.deepEqual(errors, []);
  await page.close();
});

test("the search box answers by meaning before the model is in, and again with it, in place", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  await page.evaluate(() => {
    const element = document.createElement("cairn-search");
    element.setAttribute("index", "/site/index.cairn");
    element.setAttribute("model", "/site/model");
    document.querySelector("cairn-search").replaceWith(element);
  });
  await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  await page.locator("cairn-search input").fill("where to drink coffee");
  await page.waitForSelector('cairn-search[data-encoder="static"]', { timeout: 30_000 });
  const options = page.locator("cairn-search li");
  assert.ok((await options.count()) > 0);
  await page.locator("cairn-search input").press("ArrowDown");
  const selected = await page.locator('cairn-search li[aria-selected="true"]').getAttribute("data-id");
  assert.ok(selected);
  assert.equal(await page.evaluate(() => document.querySelector("cairn-search").dataset.model), undefined);

  release();
  await page.waitForSelector('cairn-search[data-encoder="model"]', { timeout: 120_000 });
  const ids = await options.evaluateAll((lis) => lis.map((li) => li.dataset.id));
  const now = await page.locator('cairn-search li[aria-selected="true"]').getAttribute("data-id").catch(() => null);
  if (ids.includes(selected)) assert.equal(now, selected, "the reader's selected result lost its place");
  assert.deepEqual(errors, []);
  await page.close();
});

test("with the 8-bit model in, a query fetches exactly the word rows its tokens need beyond the common ones, once", async () => {
  release();
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  const query = "where can I drink an espresso";
  // What the model says the query needs beyond the rows of the site's common tokens (which come
  // with the model), from a copy of the index and model in the full module.
  const expected = await page.evaluate(async (query) => {
    const full = await import("/pkg/web/cairn.js");
    await full.default();
    const get = async (path) => new Uint8Array(await (await fetch(`/site/${path}`)).arrayBuffer());
    const index = full.SearchIndex.fromBytes(await get("index.cairn"));
    index.loadModelFromBytes(await get(`model/${index.modelWeightsFile}`), await get("model/tokenizer.json"), await get("model/config.json"));
    const all = index.modelRows(query, { mode: "semantic" }).length;
    index.addModelRows(await get("model/common.cairnrows"));
    return { all, rows: index.modelRows(query, { mode: "semantic" }) };
  }, query);
  assert.ok(expected.rows.length > 0 && expected.rows.length < expected.all, JSON.stringify(expected));
  const from = server.log.length;
  const hits = await page.evaluate(async (query) => {
    const { Cairn } = await import("/pkg/client.js");
    let ready;
    const model = new Promise((ok) => (ready = ok));
    window.cairn = await Cairn.open({ index: "/site/index.cairn", model: "/site/model", onModelReady: ready });
    await model;
    return window.cairn.search(query, { mode: "semantic", limit: 5 });
  }, query);
  assert.ok(hits.length > 0);
  assert.ok(hits.every((h) => h.signals.semantic?.encoder === "model"), JSON.stringify(hits.map((h) => h.signals)));
  const log = server.log.slice(from);
  assert.ok(!log.some((r) => r.path.endsWith("model.safetensors")), "the f16 weights were fetched");
  assert.ok(log.some((r) => r.path === "/site/model/common.cairnrows" && r.status === 200), "the common rows were not fetched");
  const rowRequests = log.filter((r) => r.path.startsWith("/site/model/p/"));
  assert.ok(rowRequests.every((r) => r.status === 206 && r.range), JSON.stringify(rowRequests));
  const asked = rowRequests.map((r) => {
    const [, start, end] = r.range.match(/^bytes=(\d+)-(\d+)$/);
    return [r.path.split("/").pop(), Number(start), Number(end) + 1];
  });
  const wanted = expected.rows.map((r) => [r.pack, r.offset, r.offset + r.length]);
  assert.deepEqual(joined(asked), joined(wanted), "the word rows fetched are not the rows the query's tokens need");
  const bytes = rowRequests.reduce((n, r) => n + r.bytes, 0);
  console.log(`word rows for "${query}": ${expected.rows.length} rows of ${expected.all}, ${rowRequests.length} requests, ${bytes} bytes`);

  const again = server.log.length;
  const repeat = await page.evaluate((query) => window.cairn.search(query, { mode: "semantic", limit: 5 }), query);
  assert.deepEqual(repeat, hits);
  assert.equal(server.log.slice(again).filter((r) => r.path.startsWith("/site/model/p/")).length, 0);
  assert.deepEqual(errors, []);
  await page.close();
});
