// The mutable index in Debian's headless Chromium, through the `Cairn` client in its worker,
// with the real 8-bit model a `cairn index` build wrote:
//   - 200 documents added to an empty index are searchable at once, by meaning too;
//   - 50 removed never come back, and an id added twice is refused without losing anything;
//   - a reload finds the index as it was left (saved in the Origin Private File System);
//   - the export is an index file the native CLI searches, with the same documents;
//   - an edit embeds only the new chunks, and the main-thread fallback gives the same hits;
//   - where OPFS cannot write, the index is kept in IndexedDB.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { buildIndex, cairn, launchChromium, model, root, scratch } from "../node/helpers.mjs";

let server, browser, base;

before(async () => {
  // An index of the docs, for the model folder it writes beside itself.
  const index = buildIndex([join(root, "tests/fixtures/docs")], ["--model", model]);
  server = await serve(0, [["/site/", index]]);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

// Twenty subjects, ten notes each: what a notes app holds.
const subjects = [
  ["bicycle", "Fixing a flat bicycle tire", "Take the wheel off, lever the tire from the rim, find the puncture in the inner tube and patch it."],
  ["bread", "Baking sourdough bread", "Feed the starter the night before, mix flour and water, fold the dough and bake it in a hot oven."],
  ["garden", "Growing tomatoes in pots", "Tomato plants want full sun, deep pots, steady watering and a stake to climb."],
  ["taxes", "Filing the yearly tax return", "Collect the income statements and receipts, then file the return before the April deadline."],
  ["guitar", "Tuning a guitar by ear", "Tune the low E string first, then match each string at the fifth fret to the next open one."],
  ["running", "Training for a marathon", "Build weekly mileage slowly, add one long run a week and rest before race day."],
  ["coffee", "Brewing pour-over coffee", "Grind the beans medium-fine, rinse the paper filter and pour hot water in slow circles."],
  ["python", "Debugging a Python script", "Read the traceback from the bottom, print the variables and step through with pdb."],
  ["travel", "Packing for a long flight", "Carry a change of clothes, a charger and water in the cabin bag, and check the luggage limits."],
  ["dog", "House-training a puppy", "Take the puppy outside after meals and naps and reward it when it goes in the right place."],
  ["paint", "Painting a bedroom wall", "Fill the holes, sand, tape the edges, prime, then roll two thin coats of paint."],
  ["budget", "Keeping a monthly budget", "Write down every expense, sort it by category and set a limit for each one."],
  ["sleep", "Sleeping better at night", "Go to bed at the same hour, keep the room dark and cool, and avoid screens late."],
  ["car", "Changing the engine oil", "Warm the engine, drain the old oil, replace the filter and refill to the dipstick mark."],
  ["chess", "Opening principles in chess", "Control the center, develop the knights and bishops, and castle early."],
  ["camera", "Taking sharp photos", "Use a fast shutter speed, hold the camera steady and focus on the subject's eyes."],
  ["birds", "Feeding garden birds in winter", "Hang seed feeders and suet, and keep fresh water out when it freezes."],
  ["soup", "Making vegetable soup", "Soften onions and carrots, add stock and vegetables, and simmer until tender."],
  ["email", "Clearing an email inbox", "Archive what is done, answer what takes two minutes, and schedule the rest."],
  ["knitting", "Knitting a first scarf", "Cast on with thick yarn, knit every row in garter stitch and bind off loosely."],
];
const documents = subjects.flatMap(([key, title, text]) =>
  Array.from({ length: 10 }, (_, i) => ({ id: `${key}-${i}`, title: `${title} (note ${i + 1})`, text: `${text} Note ${i + 1} of my ${key} notes.`, url: `/notes/${key}/${i}`, metadata: { subject: key } })),
);
const removed = [...documents.filter((d) => d.id.startsWith("bicycle-")), ...documents.filter((d) => /-[0-3]$/.test(d.id) && !d.id.startsWith("bicycle-")).slice(0, 40)].map((d) => d.id);
const query = "how do I repair a punctured tyre";

test("200 documents added in the page, searched by meaning, 50 removed, reloaded as left, exported for the CLI", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  const first = await page.evaluate(
    async ({ documents, removed, query }) => {
      const { Cairn } = await import("/pkg/client.js");
      const cairn = await Cairn.create({ model: "/site/model", store: "notes" });
      const empty = cairn.info;
      const added = await cairn.add(documents);
      const before = await cairn.search(query, { limit: 10 });
      const dup = await cairn.add([documents[150]]).then(() => null, (e) => e.message);
      const gone = await cairn.remove(removed);
      const after = await cairn.search(query, { limit: 50 });
      const bicycleWords = await cairn.search("bicycle tire puncture", { mode: "lexical", limit: 50 });
      const kept = await cairn.search("sourdough starter", { limit: 5 });
      return { mode: cairn.mode, modelReady: cairn.modelReady, empty, added, before, dup, gone, after, bicycleWords, kept, info: cairn.info };
    },
    { documents, removed, query },
  );
  assert.equal(first.mode, "worker");
  assert.ok(first.modelReady, "the model did not load");
  assert.deepEqual([first.empty.documentCount, first.empty.hasVectors], [0, true]);
  assert.equal(first.added.added, 200);
  assert.equal(first.added.documentCount, 200);
  assert.equal(first.added.embedded, first.added.chunkCount, "every new chunk is embedded");
  // By meaning: "repair a punctured tyre" shares no stemmed word with the bicycle notes' "puncture", "tire".
  const top = first.before.slice(0, 5).map((h) => h.citation.docId);
  assert.ok(top.every((id) => id.startsWith("bicycle-")), `the top 5 are not the bicycle notes: ${top}`);
  assert.ok(first.before[0].signals.semantic, "no semantic signal: the search was not hybrid");
  assert.equal(first.before[0].citation.url, `/notes/bicycle/${first.before[0].citation.docId.split("-")[1]}`);
  assert.match(first.dup, /already in the index/);
  assert.deepEqual([first.gone.removed, first.gone.documentCount, first.gone.embedded], [50, 150, 0]);
  const removedSet = new Set(removed);
  for (const hits of [first.after, first.bicycleWords]) {
    assert.ok(hits.every((h) => !removedSet.has(h.citation.docId)), `a removed document came back: ${hits.map((h) => h.citation.docId)}`);
  }
  assert.equal(first.bicycleWords.length, 0);
  assert.ok(first.kept[0].citation.docId.startsWith("bread-"), JSON.stringify(first.kept.map((h) => h.citation.docId)));

  // A reload: the index is found as it was left, with its model.
  await page.reload();
  const second = await page.evaluate(async (query) => {
    const { Cairn } = await import("/pkg/client.js");
    const cairn = await Cairn.create({ model: "/site/model", store: "notes" });
    const after = await cairn.search(query, { limit: 50 });
    const kept = await cairn.search("sourdough starter", { limit: 5 });
    const bytes = await cairn.export();
    const updated = await cairn.update([{ id: "bread-4", title: "Rye crackers", text: "Roll rye dough thin, prick it and bake until crisp." }]);
    return { info: cairn.info, after, kept, bytes: Array.from(bytes), updated, crackers: await cairn.search("rye crackers", { limit: 1 }) };
  }, query);
  assert.equal(second.info.documentCount, 150);
  assert.deepEqual(second.after, first.after);
  assert.deepEqual(second.kept, first.kept);
  assert.deepEqual([second.updated.replaced, second.updated.documentCount, second.updated.embedded], [1, 150, 1]);
  assert.equal(second.crackers[0].citation.docId, "bread-4");

  // The export is an index file the native CLI reads, holding the 150 documents.
  const dir = scratch("export");
  writeFileSync(join(dir, "index.cairn"), Buffer.from(second.bytes));
  const cli = JSON.parse(cairn(["search", dir, "sourdough starter", "--mode", "lexical", "--json", "--limit", "5"]));
  assert.ok(cli.length > 0 && cli[0].citation.docId.startsWith("bread-"), JSON.stringify(cli.map((h) => h.citation.docId)));
  assert.deepEqual(errors, []);
  await page.close();
});

test("without a worker the same edits give the same hits; a lexical mutable index needs no model", async () => {
  const page = await browser.newPage();
  await page.goto(`${base}/`);
  const some = documents.filter((_, i) => i % 4 === 0);
  const result = await page.evaluate(
    async ({ some, query }) => {
      const { Cairn } = await import("/pkg/client.js");
      const hits = [];
      for (const worker of [true, false]) {
        const cairn = await Cairn.create({ model: "/site/model", worker });
        await cairn.add(some);
        hits.push(await cairn.search(query, { limit: 10 }));
        cairn.close();
      }
      const lexical = await Cairn.create({});
      await lexical.add(some);
      const bad = await lexical.add([{ title: "no id" }]).then(() => null, (e) => e.message);
      return { hits, lexical: await lexical.search("sourdough", { limit: 3 }), info: lexical.info, bad };
    },
    { some, query },
  );
  assert.deepEqual(result.hits[0], result.hits[1]);
  assert.equal(result.info.hasVectors, false);
  assert.ok(result.lexical[0].citation.docId.startsWith("bread-"));
  assert.match(result.bad, /must have an id/);
  assert.equal(result.info.documentCount, some.length);

  // Where OPFS cannot write files (Safari before 17), the index is kept in IndexedDB.
  const noOpfs = () => delete FileSystemFileHandle.prototype.createWritable;
  const kept = async (some) => {
    const { Cairn } = await import("/pkg/client.js");
    const cairn = await Cairn.create({ store: "in-idb", worker: false });
    if (some) await cairn.add(some);
    const stored = await new Promise((ok) => {
      const open = indexedDB.open("cairn", 1);
      open.onsuccess = () => {
        const get = open.result.transaction("indexes").objectStore("indexes").get("in-idb");
        get.onsuccess = () => ok(get.result?.length ?? 0);
      };
    });
    return { count: cairn.info.documentCount, stored, top: (await cairn.search("sourdough", { limit: 1 }))[0]?.citation.docId };
  };
  await page.evaluate(noOpfs);
  const saved = await page.evaluate(kept, some);
  await page.reload();
  await page.evaluate(noOpfs);
  const again = await page.evaluate(kept, null);
  assert.ok(saved.stored > 0, "nothing in IndexedDB");
  assert.deepEqual(again, { ...saved, count: some.length });

  // A damaged copy in storage is an error that says how to drop it, and Cairn.forget does.
  await page.reload();
  const damaged = await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("cairn", { create: true });
    const writable = await (await dir.getFileHandle("broken.cairn", { create: true })).createWritable();
    await writable.write(new Uint8Array([67, 65, 73, 82, 78, 1, 2, 3]));
    await writable.close();
    const { Cairn } = await import("/pkg/client.js");
    const error = await Cairn.create({ store: "broken", worker: false }).then(() => null, (e) => e.message);
    await Cairn.forget("broken");
    const fresh = await Cairn.create({ store: "broken", worker: false });
    return { error, count: fresh.info.documentCount };
  });
  assert.match(damaged.error, /kept under "broken" cannot be read.*Cairn\.forget/);
  assert.equal(damaged.count, 0);
  await page.close();
});
