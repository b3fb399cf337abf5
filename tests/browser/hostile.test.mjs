// Hostile index data in Debian's headless Chromium (Playwright): records whose url is
// javascript: (plain, with leading space, mixed case, with control characters), data: or
// vbscript:, and whose title and text hold <img onerror>, <script> and links. Neither
// <cairn-search> (click or Enter) nor the explain page may run them or navigate to them; their
// markup shows as text; a relative URL is still followed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, launchChromium, root } from "../node/helpers.mjs";

let server, browser, base;
const SAFE = /lantern-grove\.html#safe$/;

before(async () => {
  const index = buildIndex([join(root, "tests/fixtures/hostile/links.jsonl")], ["--no-embed"]);
  server = await serve(0, [["/hostile-index/", index]]);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

/** A fresh page that records dialogs, popups and errors. */
async function watched() {
  const context = await browser.newContext();
  const seen = { dialogs: [], popups: [], errors: [] };
  context.on("page", (p) => seen.popups.push(p.url()));
  const page = await context.newPage();
  page.on("dialog", (d) => {
    seen.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  page.on("pageerror", (e) => seen.errors.push(e.message));
  return { context, page, seen };
}

/** Nothing ran and nothing navigated: the page is still `url`, with no flag, dialog or popup. */
async function inert(page, seen, url, what) {
  await page.waitForTimeout(300);
  assert.equal(page.url(), url, `${what}: navigated`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined, `${what}: script ran`);
  assert.deepEqual(seen.dialogs, [], `${what}: a dialog opened`);
  assert.deepEqual(seen.popups.slice(1), [], `${what}: a window opened`);
}

test("<cairn-search> follows no javascript:, data: or vbscript: URL from the index, on click or Enter", async () => {
  const { context, page, seen } = await watched();
  await page.goto(base + "/");
  await page.evaluate(() => {
    const element = document.createElement("cairn-search");
    element.setAttribute("index", "/hostile-index/index.cairn");
    element.setAttribute("limit", "8"); // all seven pages at once
    document.querySelector("cairn-search").replaceWith(element);
  });
  await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  await page.fill("cairn-search input", "lantern");
  await page.waitForFunction(() => document.querySelector("cairn-search").shadowRoot.querySelectorAll("li[role=option]").length === 7, null, { timeout: 30_000 });
  const hits = await page.$$eval("cairn-search li[role=option]", (items) => items.map((li) => ({ url: li.dataset.url, title: li.querySelector(".title").textContent, text: li.querySelector(".text").textContent })));
  // The markup is text: shown as written, and no element of it exists.
  for (const hit of hits) {
    assert.match(hit.title, /^Lantern \w+ <img src=x onerror="window\.__pwned='title-\w+'">$/);
    assert.match(hit.text, /<script>window\.__pwned='text-\w+'<\/script> <b onmouseover=/);
  }
  assert.equal(await page.evaluate(() => document.querySelector("cairn-search").shadowRoot.querySelectorAll("img, script, b, a").length), 0);
  const start = page.url();
  const hostile = hits.map((h, i) => [h, i]).filter(([h]) => !SAFE.test(h.url));
  assert.equal(hostile.length, 6);
  for (const [hit, i] of hostile) {
    await page.click(`cairn-search li[role=option] >> nth=${i}`);
    await inert(page, seen, start, `click on ${JSON.stringify(hit.url)}`);
    await page.focus("cairn-search input");
    for (let k = 0; k <= i; k++) await page.press("cairn-search input", "ArrowDown");
    assert.ok((await page.getAttribute("cairn-search input", "aria-activedescendant")).endsWith(`-${i}`));
    await page.press("cairn-search input", "Enter");
    await inert(page, seen, start, `Enter on ${JSON.stringify(hit.url)}`);
    await page.press("cairn-search input", "Escape");
    await page.fill("cairn-search input", "lantern");
    await page.waitForFunction(() => document.querySelector("cairn-search").shadowRoot.querySelectorAll("li[role=option]").length === 7);
  }
  assert.deepEqual(seen.errors, []);
  // A relative URL is followed.
  const safe = hits.findIndex((h) => SAFE.test(h.url));
  await Promise.all([page.waitForURL(SAFE), page.click(`cairn-search li[role=option] >> nth=${safe}`)]);
  await context.close();
});

test("the explain page links a hit only to an http(s) or relative URL, and loads no other origin's index", async () => {
  const { context, page, seen } = await watched();
  const requested = [];
  context.on("request", (r) => requested.push(r.url()));
  await page.goto(base + "/explain.html?index=/hostile-index");
  await page.waitForSelector("body[data-index-ready]", { timeout: 30_000 });
  await page.fill("#query", "lantern");
  await page.waitForFunction(() => document.querySelectorAll("#results .hit").length === 7, null, { timeout: 30_000 });
  const links = await page.$$eval("#results .hit-title", (as) => as.map((a) => ({ href: a.getAttribute("href"), title: a.textContent })));
  assert.equal(await page.evaluate(() => document.querySelectorAll("#results img, #results script, #results b, #results .hit-text a").length), 0);
  const start = page.url();
  for (const [i, link] of links.entries()) {
    assert.match(link.title, /<img src=x onerror=/);
    if (link.href && SAFE.test(link.href)) continue;
    assert.equal(link.href, null, `${link.title} links to ${link.href}`);
    await page.click(`#results .hit-title >> nth=${i}`);
    await inert(page, seen, start, link.title);
  }
  assert.equal(links.filter((l) => l.href).length, 1);
  assert.deepEqual(seen.errors, []);
  // ?index= of another origin (localhost is not 127.0.0.1) is not fetched.
  const other = base.replace("127.0.0.1", "localhost");
  await page.goto(`${base}/explain.html?index=${other}/hostile-index`);
  await page.waitForTimeout(500);
  assert.deepEqual(requested.filter((u) => u.startsWith(other)), []);
  await context.close();
});
