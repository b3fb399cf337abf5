// <cairn-search>, the Web Worker client and the Vite example in Debian's headless Chromium:
// the lean core module first and the full one only with the model, results as you type, keyboard navigation to a result's URL and anchor, hostile text shown
// inert, a responsive main thread while the model loads, the model read from the Cache API on
// the second visit, and the npm package bundled by Vite.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, launchChromium, model, root } from "../node/helpers.mjs";

let server, browser, base, viteServer, viteBase;

before(async () => {
  const fixtures = buildIndex([join(root, "tests/fixtures/hostile")], ["--model", model, "--base-url", "/trail/"]);
  server = await serve(0, [["/fixture-index/", fixtures]]);
  base = `http://127.0.0.1:${server.address().port}`;
  const dist = join(root, "examples/vite/dist");
  if (existsSync(dist)) {
    viteServer = await serve(0, [["/index/", join(root, "www/index")], ["/", dist]]);
    viteBase = `http://127.0.0.1:${viteServer.address().port}`;
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
  viteServer?.close();
});

/** A page with a <cairn-search> over `index` (the demo's own when left out). */
async function open(context, { index, model, worker } = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(base + "/");
  if (index) {
    await page.evaluate(({ index, model, worker }) => {
      const element = document.createElement("cairn-search");
      element.setAttribute("index", index);
      if (model) element.setAttribute("model", model);
      if (worker === false) element.setAttribute("worker", "false");
      document.querySelector("cairn-search").replaceWith(element);
    }, { index, model, worker });
  }
  await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  return { page, errors };
}

async function type(page, text) {
  await page.fill("cairn-search input", text);
  await page.waitForSelector("cairn-search li[role=option]", { timeout: 30_000 });
  return page.$$eval("cairn-search li[role=option]", (items) => items.map((li) => ({ title: li.querySelector(".title").textContent, text: li.querySelector(".text").textContent, url: li.dataset.url })));
}

test("results appear as you type, as an ARIA combobox", async () => {
  const context = await browser.newContext();
  // The demo's index without its model: lexical only, so that nonsense finds nothing whenever the
  // model would have arrived (with it, a hybrid search always has neighbours by meaning).
  const { page, errors } = await open(context, { index: "/index/index.cairn" });
  const results = await type(page, "index file format");
  assert.ok(results.length >= 2);
  assert.ok(results.some((r) => /index-format\.md/.test(r.url)), JSON.stringify(results.map((r) => r.url)));
  assert.equal(await page.getAttribute("cairn-search input", "role"), "combobox");
  assert.equal(await page.getAttribute("cairn-search input", "aria-expanded"), "true");
  await page.fill("cairn-search input", "zzzqqqxxx");
  await page.waitForFunction(() => document.querySelector("cairn-search").shadowRoot.querySelector(".status").textContent.startsWith("No results"));
  assert.deepEqual(errors, []);
  await context.close();
});

test("an index opens in the lean core module; the full module comes only with the model", async () => {
  const context = await browser.newContext();
  const wasm = [];
  context.on("request", (r) => r.url().endsWith(".wasm") && wasm.push(new URL(r.url()).pathname));
  // A page with nothing but the element, so no other search box loads a module.
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const only = (attributes) => `<!doctype html><script type="module" src="/pkg/element.js"></script><cairn-search ${attributes}></cairn-search>`;
  await page.route(base + "/only.html", (route) => route.fulfill({ contentType: "text/html", body: only(`index="/index/index.cairn"`) }));
  await page.goto(base + "/only.html");
  await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  assert.ok((await type(page, "index file format")).length >= 2);
  assert.deepEqual(wasm, ["/pkg/web-core/cairn_bg.wasm"]);

  // With a model, the full module follows in the background and takes over.
  await page.route(base + "/hybrid.html", (route) =>
    route.fulfill({ contentType: "text/html", body: only(`index="/fixture-index/index.cairn" model="/fixture-index/model"`) }),
  );
  await page.goto(base + "/hybrid.html");
  await page.waitForSelector("cairn-search[data-model]", { timeout: 120_000 });
  assert.match(await page.getAttribute("cairn-search", "data-model"), /^(ready|cached)$/);
  assert.ok(wasm.slice(1).includes("/pkg/web/cairn_bg.wasm"), JSON.stringify(wasm));
  assert.deepEqual(errors, []);
  await context.close();
});

test("the word being typed completes and typos are forgiven", async () => {
  const context = await browser.newContext();
  // Lexical only, so what is found is found by the words.
  const { page, errors } = await open(context, { index: "/index/index.cairn" });
  // "insta" and "instalaton" match no indexed word as they are: prefix and fuzzy find them.
  for (const typed of ["insta", "instal", "instalation", "instalaton"]) {
    await page.fill("cairn-search input", "");
    await page.waitForFunction(() => !document.querySelector("cairn-search").shadowRoot.querySelector("li[role=option]"));
    const results = await type(page, typed);
    // Found by the word "install…" they stand for (the docs' sections on installing move as the
    // docs are edited, so no one section is named).
    assert.ok(results.some((r) => /\binstal/i.test(`${r.title} ${r.text}`)), `${typed}: ${JSON.stringify(results.map((r) => r.url))}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test("arrow keys and Enter follow a result's URL with its anchor", async () => {
  const context = await browser.newContext();
  const { page } = await open(context, { index: "/fixture-index/index.cairn" });
  const results = await type(page, "summit valley");
  assert.equal(results[0].url, "/trail/ridge.md#summit");
  await page.press("cairn-search input", "ArrowDown");
  const active = await page.getAttribute("cairn-search input", "aria-activedescendant");
  assert.ok(active?.endsWith("-0"), active);
  assert.equal(await page.getAttribute(`cairn-search li[id="${active}"]`, "aria-selected"), "true");
  await Promise.all([page.waitForURL(/\/trail\/ridge\.md#summit$/), page.press("cairn-search input", "Enter")]);
  await context.close();
});

test("a hostile document renders inert", async () => {
  const context = await browser.newContext();
  const { page, errors } = await open(context, { index: "/fixture-index/index.cairn" });
  const results = await type(page, "trail note");
  const hostile = results.find((r) => r.text.includes("<img"));
  assert.ok(hostile, JSON.stringify(results));
  assert.ok(hostile.text.includes("<script>"), hostile.text);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.evaluate(() => document.querySelector("cairn-search").shadowRoot.querySelectorAll("img, script").length), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the main thread stays responsive while the model loads, and a second visit uses the cached model", async () => {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    window.__longest = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration);
    }).observe({ type: "longtask", buffered: true });
  });
  const modelRequests = [];
  context.on("request", (r) => r.url().endsWith("/fixture-index/model/model.gguf") && modelRequests.push(r.url()));
  const { page } = await open(context, { index: "/fixture-index/index.cairn", model: "/fixture-index/model" });
  await page.waitForSelector("cairn-search[data-model]", { timeout: 120_000 });
  assert.equal(await page.getAttribute("cairn-search", "data-model"), "ready");
  const longest = await page.evaluate(() => window.__longest);
  console.log(`longest main-thread task while the index and model loaded: ${longest.toFixed(0)} ms`);
  assert.ok(longest < 200, `a ${longest} ms task blocked the main thread`);
  assert.equal(modelRequests.length, 1);
  // Hybrid answers: a hit found by meaning alone is marked.
  const results = await type(page, "espresso");
  assert.ok(results.length > 0);

  const second = await open(context, { index: "/fixture-index/index.cairn", model: "/fixture-index/model" });
  await second.page.waitForSelector("cairn-search[data-model]", { timeout: 120_000 });
  assert.equal(await second.page.getAttribute("cairn-search", "data-model"), "cached");
  assert.equal(modelRequests.length, 1, "the second visit did not download the model");
  await context.close();
});

test("without a Worker the same element works on the main thread", async () => {
  const context = await browser.newContext();
  // A browser without Worker support: the client falls back to the main thread.
  await context.addInitScript(() => delete window.Worker);
  const { page, errors } = await open(context, { index: "/fixture-index/index.cairn", model: "/fixture-index/model" });
  const results = await type(page, "summit valley");
  assert.equal(results[0].url, "/trail/ridge.md#summit");
  await page.waitForSelector("cairn-search[data-model]", { timeout: 120_000 });
  assert.match(await page.getAttribute("cairn-search", "data-model"), /^(ready|cached)$/);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the Vite example bundles the package and searches in the browser", { skip: !existsSync(join(root, "examples/vite/dist")) && "examples/vite is not built" }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(viteBase + "/");
  await page.waitForSelector("body[data-ready]", { timeout: 30_000 });
  assert.match(await page.textContent("#count"), /^\d+ documents; "index" has [1-9]\d* hits \(worker\)$/);
  await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  const results = await type(page, "checksum");
  assert.ok(results.length > 0);
  assert.deepEqual(errors, []);
  await page.close();
});
