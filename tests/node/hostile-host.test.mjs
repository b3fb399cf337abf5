// The loader of a fragmented index (js/fragments.js, with the Node build's FragmentedIndex)
// against the hostile host (tests/hostile-host.mjs), over real HTTP: for every way a host can
// answer badly, on every pack or only on the packs of the vector records or of the static rows
// a hybrid search reads, the search answers as it does from a good host or fails with an error
// that says what came; and the next search, once the host is good again, answers as it should
// (one bad answer is never kept, nor taken for "this host has no ranges"). A stalled host fails
// the search within the timeout; an endless body is read only a little past the length expected;
// a host without ranges is served whole packs, each checked, bounded and forgotten if it fails.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildIndex, fixtures, model, root } from "./helpers.mjs";
import { MODES, SPA_PAGE, hostileHost, searchRequests } from "../hostile-host.mjs";

const require = createRequire(import.meta.url);
const { FragmentedIndex } = require(join(root, "pkg/node/cairn.js"));
const { openFragments } = await import(pathToFileURL(join(root, "js/fragments.js")).href);

/** The loader's timeout in these tests (ms): a stalled request fails its search after this. */
const TIMEOUT = 2000;
/** A hybrid query (the static tier embeds it: no model in Node) that reads term shards, static
 * rows, centroids, partitions, a few vector records (sub-ranges of their packs) and text. */
const QUERY = "coffee in Paris";
const OPTIONS = { limit: 3, rescore: 3 };
/** Another, reading other packs. */
const OTHER = "東京";

let host, dir, want, wantOther, packsOf;

/** A fresh loader on the host's copy of the index. */
async function open() {
  const metaUrl = `${host.url}/vec/meta.cairn`;
  const meta = new Uint8Array(readFileSync(join(dir, "meta.cairn")));
  return openFragments(FragmentedIndex, metaUrl, meta, null, null, { timeout: TIMEOUT });
}

/** What a search gives, { hits: [id, score][] } or { error }, or { pending } if it has not
 * settled after `ms`: a search that hangs is a failure, not a stuck run. */
async function search(loader, query = QUERY, ms = 4 * TIMEOUT + 10_000) {
  let timer;
  const pending = new Promise((ok) => (timer = setTimeout(() => ok({ pending: `still pending after ${ms} ms` }), ms)));
  const started = Date.now();
  const result = await Promise.race([
    loader.search(query, OPTIONS).then(
      (hits) => ({ hits: hits.map((h) => [h.id, h.score]) }),
      (error) => ({ error: error.message }),
    ),
    pending,
  ]);
  clearTimeout(timer);
  return { ...result, ms: Date.now() - started };
}

before(async () => {
  const single = buildIndex([fixtures], ["--model", model, "--layout", "single"]);
  dir = join(single, "fragments");
  // One fragment a pack, so that the records' and the rows' packs can be hostile alone; two
  // partitions, so that a record is a part of its pack.
  execFileSync(join(root, "target/debug/examples/write_fragments"), [single, dir, "--shard-postings", "7", "--shard-words", "5", "--text-bytes", "300", "--pack-bytes", "1", "--partitions", "2"]);
  host = await hostileHost([["/vec/", dir]], { holdMs: 30_000 });
  const { requests, hits } = searchRequests(FragmentedIndex, dir, QUERY, OPTIONS);
  const paths = (which) => [...new Set(requests.filter(which).map((r) => `/vec/p/${r.pack}`))];
  packsOf = { every: undefined, records: paths((r) => r.record !== undefined), rows: paths((r) => r.row !== undefined) };
  assert.ok(packsOf.records.length > 0 && packsOf.rows.length > 0, JSON.stringify(requests));
  // The records read are a part of their pack, not all of it, so that `shifted` sends whole
  // records of other chunks (the host shifts a range by its length, round the pack's end).
  const read = new Map();
  for (const r of requests.filter((r) => r.record !== undefined)) read.set(r.pack, [(read.get(r.pack)?.[0] ?? 0) + r.length, r.packLength]);
  assert.ok([...read.values()].every(([n, length]) => n < length), JSON.stringify([...read]));
  // What a good host's searches answer: the hits of the index given the files directly.
  const other = searchRequests(FragmentedIndex, dir, OTHER, OPTIONS);
  want = { hits: hits.map((h) => [h.id, h.score]) };
  wantOther = { hits: other.hits.map((h) => [h.id, h.score]) };
  assert.ok(want.hits.length > 0 && wantOther.hits.length > 0, JSON.stringify([want, wantOther]));
  assert.deepEqual((await search(await open())).hits, want.hits);
  const otherPacks = new Set(other.requests.map((r) => r.pack));
  assert.ok([...otherPacks].some((p) => !requests.some((r) => r.pack === p)), `${OTHER} reads no pack ${QUERY} does not`);
});

after(() => host?.close());

/** What each mode's error must say (the reason after "cannot fetch … of …:", or the wasm's),
 * for the modes that must fail; the others must answer. */
const FAILS = {
  "no-ranges-damaged": /answered 200 with \d+ bytes that are not the pack \(their SHA-256 does not match its name\)/,
  "spa-fallback": new RegExp(`answered 200 with ${SPA_PAGE.length} bytes, not the pack's \\d+ \\(a fallback page or a truncated file\\?\\)`),
  truncated: /sent \d+ bytes for a range of \d+/,
  "truncated-whole": /answered 200 with \d+ bytes, not the pack's \d+/,
  "cut-off": /the answer broke off after \d+ bytes/,
  oversized: /the server sent more than the \d+ bytes expected \(\d+ came before cairn stopped reading\)/,
  "wrong-content-range": /asked for bytes \d+-\d+\/\d+, the server answered 206 with Content-Range: bytes \d+-\d+\/\d+/,
  "missing-content-range": /asked for bytes \d+-\d+\/\d+, the server answered 206 without a Content-Range/,
  // The wasm's: a fragment is checked by its slot, gzip and checksum, a record and a row by a
  // checksum bound to which they are.
  shifted: /(is damaged|is another record's bytes|does not end as it should).*build (it|the index) again/,
  "shifted-honest": /asked for bytes \d+-\d+\/\d+, the server answered 206 with Content-Range: bytes \d+-\d+\/\d+/,
  stall: new RegExp(`the host did not answer in ${TIMEOUT / 1000} s \\(0 bytes came\\)`),
  "stall-headers": new RegExp(`the host did not answer in ${TIMEOUT / 1000} s \\(0 bytes came\\)`),
  "404-once": /HTTP 404 Not Found/,
  "500-once": /HTTP 500 Internal Server Error/,
  "gzip-bomb": /is damaged( or is another record's bytes)? \((it says it inflates to \d+ bytes, over the \d+ it may have|its length or checksum is wrong)\)/,
  "gzip-bomb-lying": /is damaged( or is another record's bytes)? \((it does not inflate to the 100 bytes it states|its length or checksum is wrong)/,
};
const ANSWERS = new Set(["no-ranges", "redirect", "redirect-cross-origin"]);

for (const mode of MODES.filter((m) => m !== "ok")) {
  for (const target of ["every", "records", "rows"]) {
    const where = target === "every" ? "every pack" : `the ${target}' packs`;
    test(`${mode} on ${where}: ${ANSWERS.has(mode) ? "the right answer" : "an error that says what came"}, and once the host is good the right answer`, async () => {
      const loader = await open();
      const sentBefore = host.log.length;
      host.set(mode, packsOf[target]);
      const first = await search(loader);
      host.set("ok");
      const second = await search(loader);
      // Nothing of the bad answer was kept: once the host is good, the search answers.
      assert.deepEqual(second, { ...want, ms: second.ms }, `after ${mode}, the host good again`);
      assert.ok(!first.pending, `${mode}: ${first.pending}`);
      if (ANSWERS.has(mode)) assert.deepEqual(first.hits, want.hits, `${mode}: ${first.error}`);
      else {
        assert.ok(first.error, `${mode} gave hits${JSON.stringify(first.hits) === JSON.stringify(want.hits) ? "" : " unlike a good host's"}: ${JSON.stringify(first.hits)}`);
        assert.match(first.error, FAILS[mode]);
        if (mode !== "shifted" && !mode.startsWith("gzip-bomb")) assert.match(first.error, /^cannot fetch .* of http:\/\/127\.0\.0\.1:\d+\/vec\/p\/\w+\.cairn(pack|rows): .*; the index answers other queries, and the next search that needs (it|these) asks again$/);
      }
      if (mode.startsWith("stall")) assert.ok(first.ms < TIMEOUT + 3000, `${mode}: the search took ${first.ms} ms`);
      if (mode === "oversized") {
        // The client stopped reading a little past the length asked: the server flushed at
        // most a few of its chunks (each as long as the range, at least 1 kB) before the
        // client went.
        await new Promise((ok) => setTimeout(ok, 100));
        const streams = host.log.slice(sentBefore).filter((e) => e.mode === "oversized");
        assert.ok(streams.length > 0);
        for (const { range, bytes, path } of streams) {
          const asked = range ? Number(range.split("-")[1]) - Number(range.split("=")[1].split("-")[0]) + 1 : readFileSync(join(dir, "p", path.split("/").pop())).length;
          assert.ok(bytes <= 16 * Math.max(1024, asked), `${path} ${range}: the host sent ${bytes} bytes for ${asked} asked`);
        }
      }
    });
  }
}

test("parallel searches stalled on the same fragments both fail within the timeout, and the next answers", async () => {
  const loader = await open();
  host.set("stall");
  const both = await Promise.all([search(loader), search(loader)]);
  for (const r of both) {
    assert.match(r.error ?? "", FAILS.stall, JSON.stringify(r));
    assert.ok(r.ms < TIMEOUT + 3000, `${r.ms} ms`);
  }
  host.set("ok");
  assert.deepEqual((await search(loader)).hits, want.hits);
});

test("a host without ranges: whole packs, each checked, read only to its length, and forgotten when it fails", async () => {
  const loader = await open();
  host.set("no-ranges");
  const from = host.log.length;
  assert.deepEqual((await search(loader)).hits, want.hits);
  // Once a whole pack has checked, the loader asks for whole packs: no Range header.
  const asked = host.log.slice(from).filter((e) => e.path.startsWith("/vec/p/"));
  assert.ok(asked[0].range && asked.some((e) => !e.range), JSON.stringify(asked.slice(0, 5)));
  // A whole pack that is endless, truncated or not the pack fails the search and is not kept.
  for (const mode of ["oversized", "truncated", "truncated-whole", "no-ranges-damaged", "spa-fallback", "stall"]) {
    host.set(mode);
    const got = await search(loader, OTHER);
    assert.match(got.error ?? "", FAILS[mode === "truncated" ? "truncated-whole" : mode], `${mode}: ${JSON.stringify(got)}`);
    // The search failed at its first error; its round's other requests (a whole pack is shared
    // by every search that needs it while it is in flight) end too before the next mode.
    await new Promise((ok) => setTimeout(ok, 200));
  }
  for (const e of host.log.slice(from).filter((e) => e.mode === "oversized")) {
    const length = readFileSync(join(dir, "p", e.path.split("/").pop())).length;
    assert.ok(e.bytes <= 16 * Math.max(1024, length), `${e.path}: ${e.bytes} bytes sent for a pack of ${length}`);
  }
  host.set("no-ranges");
  assert.deepEqual((await search(loader, OTHER)).hits, wantOther.hits);
  host.set("ok");
});

test("without crypto.subtle (an insecure origin), a whole pack is taken on its length, and one the index refuses is not kept", async (t) => {
  const crypto = Object.getOwnPropertyDescriptor(globalThis, "crypto");
  Object.defineProperty(globalThis, "crypto", { value: undefined, configurable: true });
  t.after(() => Object.defineProperty(globalThis, "crypto", crypto));
  const loader = await open();
  host.set("no-ranges");
  assert.deepEqual((await search(loader)).hits, want.hits);
  host.set("no-ranges-damaged");
  const damaged = await search(loader, OTHER);
  assert.ok(damaged.error, JSON.stringify(damaged));
  host.set("no-ranges");
  assert.deepEqual((await search(loader, OTHER)).hits, wantOther.hits);
  host.set("ok");
});

test("a 200 to a request that does not give the pack's length is an error, and does not switch to whole packs", async () => {
  // A loader for requests without packLength (as a wasm module before it gave them).
  const { packLoader } = await import(pathToFileURL(join(root, "js/fragments.js")).href);
  const [r] = searchRequests(FragmentedIndex, dir, QUERY, OPTIONS).requests;
  const stats = { requests: 0, bytes: 0, fromCache: 0 };
  const got = [];
  const load = packLoader({ base: new URL(`${host.url}/vec/p/`), cache: null, stats, key: (x) => `${x.fragment}`, cacheKey: String, describe: () => "it", add: (x, bytes) => got.push(bytes), timeout: TIMEOUT });
  const { packLength, ...bare } = r;
  host.set("no-ranges");
  await assert.rejects(load([bare]), /answered with the whole file \(200\), and the pack's length is not known to check it/);
  host.set("ok");
  await load([bare]);
  assert.equal(got[0].length, r.length);
  assert.equal(host.log.at(-1).range, `bytes=${r.offset}-${r.offset + r.length - 1}`);
});
