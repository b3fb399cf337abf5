// A sentence model the user brings, in Debian's headless Chromium: an XLM-R-shaped model
// (`tests/tiny-xlmr.mjs`: a Unigram tokenizer, 64 wide, 3 deep, positions after the padding's)
// builds an index with the native CLI in both layouts, and the client, given the index's model
// folder, embeds queries with it in the browser (its 8-bit copy) and answers semantic and
// hybrid searches with the native CLI's hits, in its order.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, cairn, launchChromium, scratch } from "../node/helpers.mjs";
import { writeTinyXlmr } from "../tiny-xlmr.mjs";

let server, browser, base, indexes, texts;

before(async () => {
  const model = scratch("xlmr");
  writeTinyXlmr(model);
  texts = JSON.parse(readFileSync(join(model, "reference.json"), "utf8")).texts.map((t) => t.text);
  const docs = scratch("xlmr-docs");
  writeFileSync(join(docs, "records.jsonl"), texts.map((text, i) => JSON.stringify({ id: `r${i}`, text }) + "\n").join(""));
  indexes = {
    single: buildIndex([join(docs, "records.jsonl")], ["--model", model, "--layout", "single"]),
    fragments: buildIndex([join(docs, "records.jsonl")], ["--model", model, "--layout", "fragments"]),
  };
  server = await serve(0, [["/single/", indexes.single], ["/fragments/", indexes.fragments]]);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

for (const layout of ["single", "fragments"]) {
  test(`an XLM-R-shaped model answers by meaning in Chromium as natively (${layout})`, async () => {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/`);
    const got = await page.evaluate(async ({ layout, texts }) => {
      const { Cairn } = await import("/pkg/client.js");
      let ready;
      const loaded = new Promise((ok) => (ready = ok));
      const cairn = await Cairn.open({ index: `/${layout}/`, model: `/${layout}/model`, onModelReady: ready });
      await loaded;
      const out = {};
      for (const text of texts) {
        for (const mode of ["semantic", "hybrid"]) {
          out[`${mode} ${text}`] = (await cairn.search(text, { mode, limit: 4 })).map((h) => ({ id: h.citation.docId, encoder: h.signals.semantic?.encoder }));
        }
      }
      cairn.close();
      return out;
    }, { layout, texts });
    assert.deepEqual(errors, []);
    texts.forEach((text, i) => {
      for (const mode of ["semantic", "hybrid"]) {
        const hits = got[`${mode} ${text}`];
        const native = JSON.parse(cairn(["search", indexes[layout], text, "--json", "--mode", mode, "--limit", "4"]));
        assert.deepEqual(hits.map((h) => h.id), native.map((h) => h.citation.docId), `${mode} ${text}`);
        assert.equal(hits[0].id, `r${i}`, `${mode} ${text}`);
        assert.equal(hits[0].encoder, "model", `${mode} ${text}`);
      }
    });
    await page.close();
  });
}
