// An index in another language in Debian's headless Chromium: a German site indexed with
// `--language de` (the German Snowball stemmer and stop words), opened by the client from its
// folder's URL in both layouts, on the worker and on the main thread. The browser's modules
// stem English only and load `stem/de.wasm` for it, so every query gives the native CLI's ids in
// its order; without the stemmer the client fails with an error that says what is missing, and
// an English index still opens. A site in two languages, indexed with the default `auto`, is
// one index a language: the element on each page searches the page's language, and the client
// can be told another.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, cairn, launchChromium, root, scratch } from "../node/helpers.mjs";

const PAGES = {
  "haus.md": "# Das Haus\n\nEin altes Haus am Fluss, mit einem Garten für die Kinder der Nachbarn.",
  "haeuser.md": "# Häuser der Stadt\n\nDie Häuser der Altstadt wurden nach dem Brand aus Stein gebaut.",
  "bruecke.md": "# Die Brücke\n\nDie alte Brücke führt über den Fluss; Brücken dieser Art sind selten.",
  "garten.md": "# Gärten\n\nIm Garten wachsen Äpfel, Birnen und Kräuter, die im Herbst geerntet werden.",
  "wanderung.md": "# Wanderungen\n\nWir wanderten durch die Wälder und über die Berge bis zum See.",
  "see.md": "# Der See\n\nAm See stehen kleine Hütten; im Winter gefriert das Wasser.",
};
const QUERIES = ["Häuser", "Haus am Fluss", "Brücken", "Gärten", "gewandert Wald", "Seen", "Hütte", "für die", "Äpfeln Birne", "Winters"];

// A small town's site in English and German (`<html lang>` says which).
const SITE = {
  "index.html": ["en", "Town guide", "Welcome to the town guide, in English and German."],
  "en/houses.html": ["en", "Houses", "The old houses by the river were built of stone after the fire."],
  "en/gardens.html": ["en", "Gardens", "In the gardens grow apples, pears and herbs."],
  "de/haeuser.html": ["de", "Häuser", "Die Häuser der Altstadt wurden nach dem Brand aus Stein gebaut."],
  "de/gaerten.html": ["de", "Gärten", "Im Garten wachsen Äpfel, Birnen und Kräuter."],
  "de/bruecke.html": ["de", "Die Brücke", "Die alte Brücke führt über den Fluss."],
};

let server, browser, base, indexes, site;

before(async () => {
  const docs = scratch("de");
  for (const [name, text] of Object.entries(PAGES)) writeFileSync(join(docs, name), text);
  const english = scratch("en");
  writeFileSync(join(english, "a.md"), "# Stones\n\nStacked stones mark the trail.");
  indexes = {
    single: buildIndex([docs], ["--no-embed", "--language", "de", "--layout", "single"]),
    fragments: buildIndex([docs], ["--no-embed", "--language", "de", "--layout", "fragments"]),
    english: buildIndex([english], ["--no-embed", "--layout", "single"]),
  };
  site = scratch("two");
  for (const [path, [lang, title, text]] of Object.entries(SITE)) {
    mkdirSync(join(site, path, ".."), { recursive: true });
    writeFileSync(join(site, path), `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${title}</title><script type="module" src="/pkg/element.js"></script></head><body><main><h1>${title}</h1><p>${text}</p><cairn-search index="/two/search/"></cairn-search></main></body></html>`);
  }
  cairn(["index", site, "--out", join(site, "search"), "--no-embed", "--base-url", "/two/"]);
  const blank = scratch("blank");
  writeFileSync(join(blank, "blank.html"), `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>t</title></head><body></body></html>`);
  // /nostem/ serves the package without its stemmers.
  server = await serve(0, [["/single/", indexes.single], ["/fragments/", indexes.fragments], ["/english/", indexes.english], ["/blank/", blank], ["/two/", site], ["/nostem/", join(root, "pkg")]], {
    alter: (path, body) => (path.startsWith("/nostem/stem/") ? null : body),
  });
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

/** Opens `index` with the client from `pkg` in a fresh page; resolves to the page and its errors. */
async function open(index, { pkg = "/pkg", worker = true } = {}) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/blank/blank.html`);
  const opened = await page.evaluate(
    async ([index, pkg, worker]) => {
      const { Cairn } = await import(`${pkg}/client.js`);
      try {
        window.cairn = await Cairn.open({ index, worker });
        return { ok: true };
      } catch (e) {
        return { ok: false, message: String(e?.message ?? e) };
      }
    },
    [index, pkg, worker],
  );
  return { page, errors, opened };
}

const nativeIds = (dir, query) => JSON.parse(cairn(["search", dir, query, "--json", "--mode", "lexical", "--limit", "10"])).map((h) => h.id);

for (const layout of ["single", "fragments"]) {
  for (const worker of [true, false]) {
    test(`German (${layout}, ${worker ? "worker" : "main thread"}): every query gives the native ids in order`, async () => {
      const { page, errors, opened } = await open(`/${layout}/`, { worker });
      assert.deepEqual(opened, { ok: true });
      for (const query of QUERIES) {
        const ids = await page.evaluate((q) => window.cairn.search(q, { limit: 10, mode: "lexical" }).then((hits) => hits.map((h) => h.id)), query);
        assert.deepEqual(ids, nativeIds(indexes[layout], query), query);
      }
      // The stemmer did its work: a plural finds the singular's page, and stop words find nothing.
      const top = await page.evaluate(() => window.cairn.search("Häusern", { limit: 3 }).then((h) => h.map((x) => x.citation.docId)));
      assert.ok(top.includes("haus.md") && top.includes("haeuser.md"), String(top));
      assert.deepEqual(await page.evaluate(() => window.cairn.search("für die über", { limit: 3 })), []);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
}

test("without its stemmer a German index fails to open with a clear error; an English one opens", async () => {
  for (const layout of ["single", "fragments"]) {
    const { page, opened } = await open(`/${layout}/`, { pkg: "/nostem" });
    assert.equal(opened.ok, false, layout);
    assert.match(opened.message, /cannot fetch the de stemmer .*HTTP 404.*stem\//, layout);
    await page.close();
  }
  const { page, opened } = await open("/english/index.cairn", { pkg: "/nostem" });
  assert.deepEqual(opened, { ok: true });
  assert.equal((await page.evaluate(() => window.cairn.search("stones"))).length, 1);
  await page.close();
});

test("every stemmer module of the package loads and stems", async () => {
  const samples = { de: ["häuser", "haus"], fr: ["chevaux", "cheval"], es: ["canciones", "cancion"], ru: ["книгами", "книг"], it: ["gatti", "gatt"] };
  const modules = readdirSync(join(root, "pkg/stem")).filter((f) => f.endsWith(".wasm"));
  assert.ok(modules.length >= 29, `${modules.length} stemmers`);
  for (const file of modules) {
    const { instance } = await WebAssembly.instantiate(readFileSync(join(root, "pkg/stem", file)));
    const { memory, input, stem, output } = instance.exports;
    const run = (word) => {
      const bytes = new TextEncoder().encode(word);
      const at = input(bytes.length);
      new Uint8Array(memory.buffer, at, bytes.length).set(bytes);
      const length = stem(bytes.length);
      return new TextDecoder().decode(new Uint8Array(memory.buffer, output(), length));
    };
    const [word, expected] = samples[file.replace(".wasm", "")] ?? ["word", null];
    const got = run(word);
    assert.ok(got.length > 0, file);
    if (expected) assert.equal(got, expected, file);
  }
});

test("a site in two languages: each page's search box searches its language's index, and the client can be told another", async () => {
  const manifest = JSON.parse(readFileSync(join(site, "search/languages.json"), "utf8"));
  assert.deepEqual(manifest.languages.map((l) => [l.language, l.path, l.documents]), [["de", "de/", 3], ["en", "en/", 3]]);
  const shown = async (path, query) => {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/two/${path}`);
    await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
    await page.fill("cairn-search input", query);
    await page.waitForSelector("cairn-search li[role=option]", { timeout: 30_000 });
    const urls = await page.$$eval("cairn-search [role=group] li[role=option]:first-child", (lis) => lis.map((li) => li.dataset.url));
    const placeholder = await page.getAttribute("cairn-search input", "placeholder");
    const told = await page.evaluate(async () => {
      const { Cairn } = await import("/pkg/client.js");
      const other = document.documentElement.lang === "de" ? "en" : "de";
      const cairn = await Cairn.open({ index: "/two/search/", language: other, worker: false });
      const hits = await cairn.search(other === "de" ? "Häusern" : "houses", { mode: "lexical" });
      cairn.close();
      return hits.map((h) => h.citation.docId);
    });
    assert.deepEqual(errors, []);
    await page.close();
    return { urls: urls.map((u) => new URL(u, base).pathname), placeholder, told };
  };
  // German stemming on the German page ("Häusern" is "Haus"), German strings, German pages only.
  const german = await shown("de/bruecke.html", "Häusern");
  assert.deepEqual(german.urls, ["/two/de/haeuser.html"]);
  assert.equal(german.placeholder, "Suchen…");
  assert.deepEqual(german.told, ["en/houses.html"]);
  // English on the English pages: "house" finds the English page, not the German one.
  const english = await shown("en/gardens.html", "house");
  assert.deepEqual(english.urls, ["/two/en/houses.html"]);
  assert.deepEqual(english.told, ["de/haeuser.html"]);
  assert.deepEqual(nativeIds(join(site, "search/de"), "Häusern"), ["de/haeuser.html#0"]);
});
