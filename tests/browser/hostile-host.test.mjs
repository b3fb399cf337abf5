// A fragmented index through the `Cairn` client in Debian's headless Chromium (its worker, its
// fetch) against the hostile host (tests/hostile-host.mjs): a fallback page in answer to the
// first range requests, a host that stalls, shifted vector records and an endless body each
// fail the search that met them with an error that says so (never wrong hits, never a search
// that hangs), and once the host is good again the same page answers as it should.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { buildIndex, fixtures, launchChromium, model, root, scratch } from "../node/helpers.mjs";
import { SPA_PAGE, hostileHost, searchRequests } from "../hostile-host.mjs";

const require = createRequire(import.meta.url);
const { FragmentedIndex } = require(join(root, "pkg/node/cairn.js"));

/** The client's fetchTimeout in this test (ms). */
const TIMEOUT = 2000;
const QUERY = "coffee in Paris";
const OPTIONS = { limit: 3, rescore: 3 };
let browser, host, want, records;

before(async () => {
  const single = buildIndex([fixtures], ["--model", model, "--layout", "single"]);
  const dir = join(single, "fragments");
  // One fragment a pack, two partitions: a record is a part of its own pack.
  execFileSync(join(root, "target/debug/examples/write_fragments"), [single, dir, "--shard-postings", "7", "--shard-words", "5", "--text-bytes", "300", "--pack-bytes", "1", "--partitions", "2"]);
  const blank = scratch("blank");
  writeFileSync(join(blank, "blank.html"), "<!doctype html><title>blank</title>");
  host = await hostileHost([["/vec/", dir], ["/blank/", blank]], { holdMs: 30_000 });
  const { requests, hits } = searchRequests(FragmentedIndex, dir, QUERY, OPTIONS);
  want = hits.map((h) => [h.id, h.score]);
  records = [...new Set(requests.filter((r) => r.record !== undefined).map((r) => `/vec/p/${r.pack}`))];
  assert.ok(records.length > 0);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  host?.close();
});

/** A page with the client open on the index (in its worker), with the test's fetchTimeout. */
async function open() {
  host.set("ok");
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${host.url}/blank/blank.html`);
  await page.evaluate(async (fetchTimeout) => {
    const { Cairn } = await import("/pkg/client.js");
    window.cairn = await Cairn.open({ index: "/vec/meta.cairn", fetchTimeout });
  }, TIMEOUT);
  assert.equal(await page.evaluate(() => window.cairn.mode), "worker");
  return { page, errors };
}

/** { hits: [id, score][] } or { error }, or { pending } if the search has not settled in time. */
const search = (page, ms = 4 * TIMEOUT + 10_000) =>
  page.evaluate(
    ([query, options, ms]) =>
      Promise.race([
        window.cairn.search(query, options).then((hits) => ({ hits: hits.map((h) => [h.id, h.score]) }), (e) => ({ error: e.message })),
        new Promise((ok) => setTimeout(() => ok({ pending: `still pending after ${ms} ms` }), ms)),
      ]),
    [QUERY, OPTIONS, ms],
  );

/** Sets `mode` (on `paths`, or every pack), searches (which must fail with `error`), sets the
 * host back to ok and searches again (which must answer as a good host's). */
async function failsThenRecovers(mode, error, paths) {
  const { page, errors } = await open();
  host.set(mode, paths);
  const started = Date.now();
  const first = await search(page);
  const ms = Date.now() - started;
  host.set("ok");
  // Nothing of the bad answer was kept: once the host is good, the search answers.
  assert.deepEqual(await search(page), { hits: want }, `after ${mode}, the host good again`);
  assert.ok(!first.pending, first.pending);
  assert.ok(first.error, `${mode} gave hits: ${JSON.stringify(first.hits)} (a good host's: ${JSON.stringify(want)})`);
  assert.match(first.error, error);
  assert.deepEqual(errors, []);
  await page.close();
  return ms;
}

test("a good host: the hits of the index given its files", async () => {
  const { page } = await open();
  assert.deepEqual(await search(page), { hits: want });
  await page.close();
});

test("a fallback page in answer to the first range requests is an error, and is not taken for a host without ranges", async () => {
  await failsThenRecovers("spa-fallback", new RegExp(`^cannot fetch .*: asked for bytes \\d+-\\d+/\\d+, the server answered 200 with ${SPA_PAGE.length} bytes, not the pack's \\d+`));
});

test("a stalled host fails the search within fetchTimeout, and the next search answers", async () => {
  const ms = await failsThenRecovers("stall", new RegExp(`the host did not answer in ${TIMEOUT / 1000} s`));
  assert.ok(ms < TIMEOUT + 4000, `the search took ${ms} ms`);
  await failsThenRecovers("stall-headers", new RegExp(`the host did not answer in ${TIMEOUT / 1000} s`));
});

test("shifted vector records are an error, not other hits", async () => {
  await failsThenRecovers("shifted", /vector record \d+ of fragment \d+ is damaged or is another record's bytes/, records);
  await failsThenRecovers("shifted-honest", /the server answered 206 with Content-Range: bytes \d+-\d+\/\d+/, records);
});

test("an endless body is read only a little past the length asked", async () => {
  const from = host.log.length;
  await failsThenRecovers("oversized", /the server sent more than the \d+ bytes expected/);
  // The host sends a chunk (as long as the range, at least 1 kB) a millisecond; Chromium's
  // network process reads ahead of the worker, so allow a few dozen before the abort lands
  // (a client that reads the body whole takes megabytes before the host gives up).
  const streams = host.log.slice(from).filter((e) => e.mode === "oversized");
  assert.ok(streams.length > 0);
  for (const { range, bytes, path } of streams) {
    const [start, end] = range.slice("bytes=".length).split("-").map(Number);
    const asked = end - start + 1;
    assert.ok(bytes <= 64 * Math.max(1024, asked), `${path} ${range}: the host sent ${bytes} bytes for ${asked} asked`);
  }
});
