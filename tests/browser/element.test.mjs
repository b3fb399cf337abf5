// <cairn-search> in Debian's headless Chromium: results grouped by page with their sections as
// sub-results, strings in the page's language (German) and a right-to-left layout (Arabic), the
// modal variant (Ctrl+K and ⌘K, Escape, focus), and axe-core finding no accessibility
// violation, on the demo's index (www/index, lexical only: no model is given).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, launchChromium, root, scratch } from "../node/helpers.mjs";

let server, browser, base;

// 40 notes on stones, each in a section and with tags: four pages of ten, for the filter pane
// and "More results".
const SECTIONS = ["guide", "api", "blog", "faq"];
const notes = Array.from({ length: 40 }, (_, i) => ({
  id: `n${i}`,
  title: `${SECTIONS[i % 4]} note ${i}`,
  text: `Stones stacked into a cairn mark the trail, note ${i}.`,
  url: `/notes/${i}`,
  metadata: { section: SECTIONS[i % 4], tags: i % 2 ? [i < 20 ? "early" : "late", "trail"] : [i < 20 ? "early" : "late"] },
}));

before(async () => {
  const records = scratch("notes");
  writeFileSync(join(records, "notes.jsonl"), notes.map((n) => JSON.stringify(n)).join("\n") + "\n");
  const notesIndex = buildIndex([join(records, "notes.jsonl")], ["--no-embed", "--layout", "single"]);
  server = await serve(0, [["/notes-index/", notesIndex]]);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

/** A page of `body` (with the element's script) at /page.html, in `lang`. */
async function openPage(body, { lang = "en", ready = true } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const html = `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>test</title><script type="module" src="/pkg/element.js"></script></head><body><main><h1>Test</h1>${body}</main></body></html>`;
  await page.route(base + "/page.html", (route) => route.fulfill({ contentType: "text/html; charset=utf-8", body: html }));
  await page.goto(base + "/page.html");
  if (ready) await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  return { context, page, errors };
}

const INLINE = `<cairn-search index="/index/index.cairn"></cairn-search>`;

/** Types `text` and returns the groups shown: each its page option and sub-results. */
async function groups(page, text) {
  await page.fill("cairn-search input", text);
  await page.waitForSelector("cairn-search li[role=option]", { timeout: 30_000 });
  return page.$$eval("cairn-search [role=group]", (groups) =>
    groups.map((g) => {
      const [first, ...rest] = g.querySelectorAll("li[role=option]");
      const option = (li) => ({ id: li.id, url: li.dataset.url, title: li.querySelector(".title").textContent, marks: li.querySelectorAll("mark").length, part: li.getAttribute("part") });
      return { label: g.getAttribute("aria-labelledby"), page: option(first), sections: rest.map(option) };
    }),
  );
}

const pathOf = (url) => new URL(url, "http://x/").pathname;

test("results are grouped by page, with the page's sections as sub-results linking to their headings", async () => {
  const { context, page, errors } = await openPage(INLINE);
  const shown = await groups(page, "index file format");
  assert.ok(shown.length >= 2, JSON.stringify(shown));
  // No page twice.
  const pages = shown.map((g) => pathOf(g.page.url));
  assert.equal(new Set(pages).size, pages.length, JSON.stringify(pages));
  for (const g of shown) for (const s of g.sections) assert.equal(pathOf(s.url), pathOf(g.page.url), "a sub-result of another page");
  // A page with several matching sections shows them, each at its own heading's anchor.
  const several = shown.find((g) => g.sections.length >= 2);
  assert.ok(several, JSON.stringify(shown));
  assert.ok(shown.every((g) => g.sections.length <= 3));
  for (const s of several.sections) {
    assert.match(s.url, /#[\w-]+$/);
    assert.equal(s.part, "sub-result");
    assert.ok(s.marks > 0, `${s.url} has no highlight`);
  }
  assert.equal(new Set(several.sections.map((s) => s.url).concat(several.page.url)).size, several.sections.length + 1, "a section twice");
  assert.equal(several.page.part, "result");
  // The group is named by its page's title.
  assert.equal(several.label, `${several.page.id}-title`);

  // The arrow keys go through pages and sub-results in order; Enter follows a sub-result.
  const order = shown.flatMap((g) => [g.page, ...g.sections]);
  const target = order.findIndex((o) => o === several.sections[0]);
  await page.focus("cairn-search input");
  for (let k = 0; k <= target; k++) await page.press("cairn-search input", "ArrowDown");
  assert.equal(await page.getAttribute("cairn-search input", "aria-activedescendant"), several.sections[0].id);
  const hash = several.sections[0].url.split("#")[1];
  await Promise.all([page.waitForURL((u) => u.hash === `#${hash}`), page.press("cairn-search input", "Enter")]);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the sections attribute sets how many sub-results a page shows", async () => {
  const { context, page } = await openPage(`<cairn-search index="/index/index.cairn" sections="1"></cairn-search>`);
  const shown = await groups(page, "index file format");
  assert.ok(shown.some((g) => g.sections.length === 1));
  assert.ok(shown.every((g) => g.sections.length <= 1), JSON.stringify(shown));
  await context.close();
});

/** The element's strings, as a reader and a screen reader get them. */
function strings(page) {
  return page.evaluate(() => {
    const root = document.querySelector("cairn-search").shadowRoot;
    const input = root.querySelector("input");
    return { placeholder: input.placeholder, label: input.getAttribute("aria-label"), list: root.querySelector("[role=listbox]").getAttribute("aria-label"), status: root.querySelector("[role=status]").textContent };
  });
}

test("a German page gets German strings; an element's own lang and `strings` win", async () => {
  const { context, page, errors } = await openPage(INLINE, { lang: "de-DE" });
  assert.equal((await strings(page)).placeholder, "Suchen…");
  await groups(page, "index file format");
  const de = await strings(page);
  assert.equal(de.label, "Suche");
  assert.equal(de.list, "Suchergebnisse");
  assert.match(de.status, /^\d+ Ergebnis(se)?$/);
  await page.fill("cairn-search input", "zzzqqqxxx");
  await page.waitForFunction(() => document.querySelector("cairn-search").shadowRoot.querySelector("[role=status]").textContent.startsWith("Keine"));
  assert.equal((await strings(page)).status, "Keine Ergebnisse für „zzzqqqxxx“");
  // The element's own lang, then an override.
  await page.evaluate(() => document.querySelector("cairn-search").setAttribute("lang", "fr"));
  assert.equal((await strings(page)).status, "Aucun résultat pour «\u202fzzzqqqxxx\u202f»");
  await page.evaluate(() => (document.querySelector("cairn-search").strings = { placeholder: "Chercher dans la doc" }));
  const fr = await strings(page);
  assert.equal(fr.placeholder, "Chercher dans la doc");
  assert.equal(fr.label, "Recherche");
  assert.deepEqual(errors, []);
  await context.close();
});

test("an Arabic page lays the element out right to left", async () => {
  const { context, page, errors } = await openPage(INLINE, { lang: "ar" });
  assert.equal((await strings(page)).placeholder, "ابحث…");
  const shown = await groups(page, "index file format");
  const several = shown.find((g) => g.sections.length > 0);
  assert.ok(several);
  const layout = await page.evaluate(([pageId, subId]) => {
    const root = document.querySelector("cairn-search").shadowRoot;
    const box = (el) => el.getBoundingClientRect();
    const [p, s] = [root.getElementById(pageId), root.getElementById(subId)];
    return { direction: getComputedStyle(root.querySelector("input")).direction, textAlign: getComputedStyle(root.querySelector("input")).textAlign, page: box(p), sub: box(s), status: root.querySelector("[role=status]").textContent };
  }, [several.page.id, several.sections[0].id]);
  assert.equal(layout.direction, "rtl");
  // A sub-result is indented from the right, the start side, not from the left.
  assert.ok(layout.sub.right < layout.page.right - 10, JSON.stringify(layout));
  assert.ok(Math.abs(layout.sub.left - layout.page.left) < 1, JSON.stringify(layout));
  assert.match(layout.status, /نتيج|نتائج/);
  // An English page is left to right, its sub-results indented from the left.
  const en = await openPage(INLINE);
  const g = (await groups(en.page, "index file format")).find((g) => g.sections.length > 0);
  const ltr = await en.page.evaluate(([pageId, subId]) => {
    const root = document.querySelector("cairn-search").shadowRoot;
    return { direction: getComputedStyle(root.querySelector("input")).direction, page: root.getElementById(pageId).getBoundingClientRect().left, sub: root.getElementById(subId).getBoundingClientRect().left };
  }, [g.page.id, g.sections[0].id]);
  assert.equal(ltr.direction, "ltr");
  assert.ok(ltr.sub > ltr.page + 10, JSON.stringify(ltr));
  assert.deepEqual(errors, []);
  await en.context.close();
  await context.close();
});

const MODAL = `<p><input id="elsewhere" aria-label="Elsewhere"></p><cairn-search modal index="/index/index.cairn"></cairn-search>`;

/** What has focus: in the element's shadow root (its class), or the page's element (its id). */
function focused(page) {
  return page.evaluate(() => {
    const host = document.querySelector("cairn-search");
    if (document.activeElement !== host) return `#${document.activeElement?.id}`;
    const el = host.shadowRoot.activeElement;
    return el?.tagName === "INPUT" ? "input" : el?.className;
  });
}

const isOpen = (page) => page.evaluate(() => document.querySelector("cairn-search").shadowRoot.querySelector("dialog").open);

test("the modal opens with Ctrl+K and ⌘K, traps focus, and Escape closes it and returns focus to its button", async () => {
  const { context, page, errors } = await openPage(MODAL, { ready: false });
  const trigger = await page.evaluate(() => {
    const b = document.querySelector("cairn-search").shadowRoot.querySelector("button[part=trigger]");
    return { name: b.textContent, popup: b.getAttribute("aria-haspopup"), keys: b.getAttribute("aria-keyshortcuts") };
  });
  assert.match(trigger.name, /^Search(Ctrl K|⌘K)$/);
  assert.equal(trigger.popup, "dialog");
  assert.equal(await isOpen(page), false);

  for (const keys of ["Control+k", "Meta+k"]) {
    await page.focus("#elsewhere");
    await page.keyboard.press(keys);
    assert.equal(await isOpen(page), true, `${keys} did not open the dialog`);
    const dialog = await page.evaluate(() => {
      const d = document.querySelector("cairn-search").shadowRoot.querySelector("dialog");
      return { role: d.getAttribute("role"), modal: d.getAttribute("aria-modal"), label: d.getRootNode().getElementById(d.getAttribute("aria-labelledby"))?.textContent };
    });
    assert.deepEqual(dialog, { role: "dialog", modal: "true", label: "Search" });
    assert.equal(await focused(page), "input");
    // Focus stays in the dialog.
    for (const key of ["Tab", "Tab", "Tab", "Shift+Tab", "Shift+Tab", "Shift+Tab"]) {
      await page.keyboard.press(key);
      assert.ok(["input", "close"].includes(await focused(page)), `${key} left the dialog`);
    }
    await page.focus("cairn-search input");
    await page.keyboard.press("Escape");
    assert.equal(await isOpen(page), false, "Escape did not close it");
    assert.equal(await focused(page), "trigger");
  }
  // Results in the dialog, and the close button.
  await page.click("cairn-search button[part=trigger]");
  await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  assert.ok((await groups(page, "index file format")).length > 0);
  await page.click("cairn-search button.close");
  assert.equal(await isOpen(page), false);
  assert.equal(await focused(page), "trigger");
  assert.deepEqual(errors, []);
  await context.close();
});

test("a filter pane counts the results by field, narrows them (any of a field's values, every field), and More results shows the next pages", async () => {
  const { context, page, errors } = await openPage(`<cairn-search index="/notes-index/index.cairn" filters="section,tags" limit="5" sections="0"></cairn-search>`);
  const titles = () => page.$$eval("cairn-search li[role=option] .title", (t) => t.map((e) => e.textContent));
  const pane = () =>
    page.$$eval("cairn-search .filters fieldset", (sets) =>
      Object.fromEntries(sets.map((f) => [f.querySelector("legend").textContent, Object.fromEntries([...f.querySelectorAll("label")].map((l) => [l.childNodes[1].textContent, [Number(l.querySelector(".n").textContent.replace(/\D/g, "")), l.querySelector("input").checked]]))])),
    );
  const status = () => page.$eval("cairn-search [role=status]", (s) => s.textContent);
  const more = () => page.$eval("cairn-search .more", (b) => !b.hidden);
  const settled = (n) => page.waitForFunction((n) => document.querySelector("cairn-search").shadowRoot.querySelectorAll("li[role=option]").length === n, n, { timeout: 30_000 });

  await page.fill("cairn-search input", "cairn stones");
  await settled(5);
  assert.deepEqual(await pane(), {
    section: { api: [10, false], blog: [10, false], faq: [10, false], guide: [10, false] },
    tags: { early: [20, false], late: [20, false], trail: [20, false] },
  });
  assert.match(await status(), /^40 results/);
  assert.ok(await more(), "no More results button");
  assert.deepEqual(await axe(page), []);
  await page.click("cairn-search .more");
  await settled(10);

  // One value of a field, then another of the same field (any of), then one of another (and).
  await page.click("cairn-search .filters fieldset:nth-of-type(1) label:has-text('api') input");
  await settled(5);
  assert.ok((await titles()).every((t) => t.startsWith("api ")), JSON.stringify(await titles()));
  assert.match(await status(), /^10 results/);
  assert.deepEqual((await pane()).tags, { early: [5, false], late: [5, false], trail: [10, false] });
  await page.click("cairn-search .filters fieldset:nth-of-type(1) label:has-text('faq') input");
  await page.waitForFunction(() => /^20 results/.test(document.querySelector("cairn-search").shadowRoot.querySelector("[role=status]").textContent), null, { timeout: 30_000 });
  await page.click("cairn-search .filters fieldset:nth-of-type(2) label:has-text('early') input");
  await page.waitForFunction(() => /^10 results/.test(document.querySelector("cairn-search").shadowRoot.querySelector("[role=status]").textContent), null, { timeout: 30_000 });
  const picked = await titles();
  assert.ok(picked.every((t) => /^(api|faq) note \d+$/.test(t) && Number(t.split(" ")[2]) < 20), JSON.stringify(picked));
  assert.equal((await pane()).section.api[1], true);
  // Two pages of five: the second after More results, then none left.
  await page.click("cairn-search .more");
  await settled(10);
  assert.equal(await more(), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the filter pane and More results speak the page's language", async () => {
  const { context, page } = await openPage(`<cairn-search index="/notes-index/index.cairn" filters="section" limit="5"></cairn-search>`, { lang: "de" });
  await page.fill("cairn-search input", "cairn");
  await page.waitForSelector("cairn-search .filters fieldset", { timeout: 30_000 });
  assert.equal(await page.$eval("cairn-search .more", (b) => b.textContent), "Weitere Ergebnisse");
  assert.equal(await page.$eval("cairn-search .filters > legend", (l) => l.textContent), "Ergebnisse filtern");
  await context.close();
});

/** axe-core's violations in the element. */
async function axe(page) {
  await page.addScriptTag({ path: join(root, "node_modules/axe-core/axe.min.js") });
  const violations = await page.evaluate(async () => (await window.axe.run(document.querySelector("cairn-search"))).violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target) })));
  return violations;
}

test("axe-core finds no accessibility violation in the element with results, or in the open modal", async () => {
  const inline = await openPage(INLINE);
  await groups(inline.page, "index file format");
  await inline.page.press("cairn-search input", "ArrowDown");
  assert.deepEqual(await axe(inline.page), []);
  // The check can fail: an option without its listbox is one.
  const broken = await openPage(INLINE);
  await groups(broken.page, "index file format");
  await broken.page.evaluate(() => document.querySelector("cairn-search").shadowRoot.querySelector("[role=listbox]").setAttribute("role", "list"));
  assert.ok((await axe(broken.page)).length > 0, "axe found nothing in a broken listbox");
  await broken.context.close();
  await inline.context.close();

  const modal = await openPage(MODAL, { ready: false });
  await modal.page.keyboard.press("Control+k");
  await modal.page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
  await groups(modal.page, "index file format");
  assert.deepEqual(await axe(modal.page), []);
  await modal.context.close();
});

