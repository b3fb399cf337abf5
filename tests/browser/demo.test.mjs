// The demo's explain page in Debian's headless Chromium (Playwright): type a query, see ranked
// hits with highlights built from UTF-16 offsets and each hit's explain, on the project's docs
// and on accented, CJK and emoji text, and see the model arrive and answer a semantic query.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, fixtures, launchChromium, model } from "../node/helpers.mjs";

let server, browser, base;

before(async () => {
  const fixtureIndex = buildIndex([fixtures], ["--model", model]);
  server = await serve(0, [["/fixture-index/", fixtureIndex]]);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

async function open(path) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(base + path);
  await page.waitForSelector("body[data-index-ready]", { timeout: 30_000 });
  return { page, errors };
}

async function searchFor(page, text) {
  await page.fill("#query", text);
  await page.waitForFunction((q) => document.querySelectorAll("#results .hit").length > 0 && document.querySelector("#query").value === q, text, { timeout: 30_000 });
  return page.$$eval("#results .hit", (items) =>
    items.map((li) => ({
      id: li.dataset.id,
      title: li.querySelector(".hit-title").textContent,
      href: li.querySelector(".hit-title").getAttribute("href"),
      marks: [...li.querySelectorAll("mark")].map((m) => m.textContent),
      explain: li.querySelector(".explain")?.textContent ?? "",
      html: li.querySelector(".hit-text").innerHTML,
    })),
  );
}

test("the demo searches cairn's docs with highlights and citations", async () => {
  const { page, errors } = await open("/explain.html");
  const hits = await searchFor(page, "index file format checksum");
  assert.ok(hits.length >= 3, `${hits.length} hits`);
  assert.ok(hits.some((h) => /index-format\.md/.test(h.href)), JSON.stringify(hits.map((h) => h.href)));
  const marks = hits.flatMap((h) => h.marks.map((m) => m.toLowerCase()));
  assert.ok(marks.length > 0);
  for (const m of marks) assert.ok(/^(index|indexes|indexed|indexing|file|files|format|formats|formatted|checksum|checksums)(['’]s)?$/.test(m), `unexpected highlight ${m}`);
  assert.match(hits[0].explain, /retrieval #1/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("highlights land on accented, CJK and emoji-adjacent words", async () => {
  const { page, errors } = await open("/explain.html?index=/fixture-index");
  const hits = await searchFor(page, "cafe 東京 search developers");
  const marks = new Set(hits.flatMap((h) => h.marks));
  for (const word of ["café", "東京", "search", "developers"]) assert.ok(marks.has(word), `${word} not in ${[...marks]}`);
  for (const m of marks) assert.ok(["café", "Café", "cafés", "東京", "search", "developers"].includes(m), `unexpected ${m}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the model loads in the browser and answers a semantic query", async () => {
  const { page, errors } = await open("/explain.html?index=/fixture-index");
  await page.waitForSelector("body[data-model-ready]", { timeout: 120_000 });
  await page.selectOption("#mode", "semantic");
  const hits = await searchFor(page, "espresso bars in Japan");
  assert.equal(hits[0].id.split("#")[0], "international.md");
  assert.match(await page.textContent("#status"), /semantic/);
  assert.deepEqual(errors, []);
  await page.close();
});
