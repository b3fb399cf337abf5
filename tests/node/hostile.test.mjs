// Hostile input to the wasm module (pkg/node) and to js/fetch.js under Node: after any error
// (bad arguments, a failed fetch, a failed model) the index keeps answering and free() works; a
// lying Content-Length neither aborts the module nor leaves a promise pending; bad arguments say
// which one is wrong and why; and the model cache keeps only a model that loaded.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildIndex, fixtures, model, root } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const cairnNode = require(join(root, "pkg/node/cairn.js"));
const { SearchIndex, FragmentedIndex } = cairnNode;
const { fetchWithProgress, openIndex } = await import(pathToFileURL(join(root, "js/fetch.js")).href);

let server, base, lexical, hybrid, modelFiles;
/** The browser's model as `cairn index` writes it by default: 8-bit, its word rows apart. */
const WEIGHTS = "model.gguf";

/** Rejects unless `promise` settles within `ms`: a pending promise is a failure, not a stuck run. */
function within(promise, ms = 20_000) {
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** An Error from our code, not a wasm trap (RuntimeError) nor a TypeError from the glue. */
const ours = (pattern) => (e) => {
  assert.ok(!(e instanceof WebAssembly.RuntimeError), `a trap: ${e.message}`);
  assert.match(e.message, pattern);
  return true;
};

/** A Proxy whose every trap throws. */
function revoked() {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

before(async () => {
  const lexicalDir = buildIndex([fixtures], ["--no-embed"]);
  const hybridDir = buildIndex([join(fixtures, "notes.txt")], ["--model", model]);
  lexical = readFileSync(join(lexicalDir, "index.cairn"));
  hybrid = readFileSync(join(hybridDir, "index.cairn"));
  modelFiles = Object.fromEntries(["config.json", "tokenizer.json", WEIGHTS, "common.cairnrows"].map((f) => [f, readFileSync(join(hybridDir, "model", f))]));
  const packs = readdirSync(join(hybridDir, "model/p")).map((f) => [`p/${f}`, readFileSync(join(hybridDir, "model/p", f))]);
  const files = { "index.cairn": hybrid, ...modelFiles, ...Object.fromEntries(packs) };
  // /ok/<file>: the hybrid index and its model. /lying/<file>: the weights and the index say
  // Content-Length 3000000000, send 100 bytes and close. /short/<file>: 100000000, likewise.
  // /damaged/<file>: the weights are junk. /junkrows/<file>: the common word rows are. Anything
  // else: 404.
  server = createServer((req, res) => {
    const [, kind, ...path] = req.url.split("/");
    const name = path.join("/");
    const body = files[name];
    if (!body || !["ok", "lying", "short", "damaged", "junkrows"].includes(kind)) return res.writeHead(404).end();
    const lie = { lying: "3000000000", short: "100000000" }[kind];
    if (lie && (name === WEIGHTS || name === "index.cairn")) {
      res.writeHead(200, { "Content-Length": lie });
      res.write(body.subarray(0, 100));
      return setTimeout(() => res.socket.destroy(), 20);
    }
    const junk = (kind === "damaged" && name === WEIGHTS) || (kind === "junkrows" && name === "common.cairnrows");
    const sent = junk ? Buffer.alloc(1000, 7) : body;
    res.writeHead(200, { "Content-Length": sent.length }).end(sent);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => server?.close());

test("after any error the index keeps answering, and free() works", { timeout: 120_000 }, async () => {
  const failures = [
    ["a number as the query", (i) => i.search(42), /the query must be a string, not a number/],
    ["options that are a function", (i) => i.search("stone", () => ({ limit: 1 })), /options must be an object, not a function/],
    ["NaN in the options", (i) => i.searchDocuments("stone", { limit: NaN }), /limit must be a finite number, not NaN/],
    ["a misspelled option", (i) => i.search("stone", { limt: 3 }), /invalid search options.*limt/],
    ["a bad option in buildContext", (i) => i.buildContext("stone", { tokenBudget: Infinity }), /tokenBudget must be a finite number, not Infinity/],
    ["a getter that throws", (i) => i.search("stone", { get limit() { throw new Error("boom"); } }), /limit cannot be read \(boom\)/],
    ["options that refer to themselves", (i) => { const o = { filter: {} }; o.filter.o = o; return i.search("stone", o); }, /cannot be read as JSON/],
    ["a Proxy whose keys throw", (i) => i.search("stone", new Proxy({}, { ownKeys() { throw new Error("trap"); } })), /cannot be read \(trap\)/],
    ["a revoked Proxy as the options", (i) => i.search("stone", revoked()), /they cannot be read \(.*revoked/],
    ["a revoked Proxy as the query", (i) => i.search(revoked()), /the query must be a string, not an object/],
    ["a revoked Proxy as the vector", (i) => i.searchWithVector("stone", revoked()), /the vector must be a Float32Array/],
    ["a revoked Proxy as the weights", (i) => i.loadModelFromBytes(revoked(), revoked(), revoked()), /the weights must be a Uint8Array/],
    ["a vector that is a string", (i) => i.searchWithVector("stone", "abc"), /the vector must be a Float32Array/],
    ["a model that is not bytes", (i) => i.loadModelFromBytes(5, 5, 5), /the weights must be a Uint8Array/],
    ["model bytes that are junk", (i) => i.loadModelFromBytes(new Uint8Array(8), modelFiles["tokenizer.json"], modelFiles["config.json"]), /does not match the index/],
    ["a model URL that is not a string", (i) => i.loadModel({}), /the model URL must be a string/],
    ["a model that is not there", (i) => i.loadModel(`${base}/missing`), /HTTP 404/],
    ["a refused connection", (i) => i.loadModel("http://127.0.0.1:1/model"), /cannot fetch http:\/\/127\.0\.0\.1:1\/model\/config\.json/],
    ["a 3 GB Content-Length on the weights", (i) => i.loadModel(`${base}/lying`), /Content-Length says 3000000000 bytes, over the 1 GiB/],
    ["a download that breaks off", (i) => i.loadModel(`${base}/short`), /broke off after \d+ bytes/],
    ["damaged weights", (i) => i.loadModel(`${base}/damaged`), /does not match the index/],
  ];
  const shared = SearchIndex.fromBytes(hybrid);
  const before = shared.search("stone", { mode: "lexical" }).map((h) => h.id);
  assert.ok(before.length > 0);
  for (const [what, fail, message] of failures) {
    const own = SearchIndex.fromBytes(hybrid);
    for (const index of [own, shared]) {
      await within(assert.rejects(async () => fail(index), ours(message), what));
      assert.deepEqual(index.search("stone", { mode: "lexical" }).map((h) => h.id), before, `${what}: then a search`);
      assert.equal(index.modelReady, false, what);
    }
    assert.doesNotThrow(() => own.free(), `${what}: then free()`);
  }
  // After all that, the model still loads, whole, and hybrid searches use it.
  await within(shared.loadModel(`${base}/ok`));
  assert.equal(shared.modelReady, true);
  assert.equal(shared.search("stone", { mode: "semantic" })[0].scoreKind, "cosine");
  shared.free();
});

test("a 3 GB Content-Length on a short body rejects with a clear message: load, loadModel, fetch.js", { timeout: 60_000 }, async () => {
  const huge = /cannot fetch http:\S+: its Content-Length says 3000000000 bytes, over the 1 GiB/;
  await within(assert.rejects(SearchIndex.load(`${base}/lying/index.cairn`), ours(huge)));
  await within(assert.rejects(fetchWithProgress(`${base}/lying/index.cairn`, null), ours(huge)));
  const index = SearchIndex.fromBytes(hybrid);
  await within(assert.rejects(index.loadModel(`${base}/lying`), ours(huge)));
  // Under the limit but more than the body: the download breaks off and says so.
  const broke = /cannot fetch http:\S+: the download broke off after 100 bytes/;
  await within(assert.rejects(SearchIndex.load(`${base}/short/index.cairn`), ours(broke)));
  await within(assert.rejects(fetchWithProgress(`${base}/short/index.cairn`, null), ours(broke)));
  // And a true one loads.
  const progress = [];
  const loaded = await within(SearchIndex.load(`${base}/ok/index.cairn`, (n, total) => progress.push([n, total])));
  assert.equal(loaded.documentCount, index.documentCount);
  assert.deepEqual(progress.at(-1), [hybrid.length, hybrid.length]);
  loaded.free();
  index.free();
});

test("a Content-Length that is not a byte count only costs the progress total", { timeout: 60_000 }, async (t) => {
  const realFetch = globalThis.fetch;
  t.after(() => (globalThis.fetch = realFetch));
  for (const header of ["1e400", "Infinity", "-1", "abc", "0x10", "4294967296.5"]) {
    globalThis.fetch = async () => new Response(lexical, { headers: { "content-length": header } });
    const totals = new Set();
    const index = await within(SearchIndex.load("http://test.invalid/index.cairn", (_, total) => totals.add(total)));
    assert.equal(index.documentCount, 6, header);
    assert.deepEqual([...totals], [0], header);
    index.free();
    const { bytes } = await within(fetchWithProgress("http://test.invalid/index.cairn", null, (_, total) => totals.add(total)));
    assert.equal(bytes.length, lexical.length);
    assert.deepEqual([...totals], [0], header);
  }
});

test("bad arguments say which one is wrong and why", () => {
  const index = SearchIndex.fromBytes(lexical);
  const vector = new Float32Array(384);
  const methods = {
    search: (q, o) => index.search(q, o),
    searchWithVector: (q, o) => index.searchWithVector(q, vector, o),
    searchDocuments: (q, o) => index.searchDocuments(q, o),
    buildContext: (q, o) => index.buildContext(q, o),
  };
  const cases = [
    [{ limit: NaN }, /invalid search options: limit must be a finite number, not NaN/],
    [{ limit: Infinity }, /limit must be a finite number, not Infinity/],
    [{ rrfK: -Infinity }, /rrfK must be a finite number, not -Infinity/],
    [{ filter: { year: { gte: NaN } } }, /filter\.year\.gte must be a finite number, not NaN/],
    [{ filter: { tags: ["a", Infinity] } }, /filter\.tags\[1\] must be a finite number, not Infinity/],
    [{ limit: () => 3 }, /limit must be plain data, not a function/],
    [() => ({}), /^options must be an object, not a function$/],
    [[{ limit: 3 }], /^options must be an object, not an array$/],
    ["limit=3", /^options must be an object, not a string$/],
    [7, /^options must be an object, not a number$/],
    [new Date(), /^options must be an object/],
  ];
  for (const [name, call] of Object.entries(methods)) {
    assert.ok(Array.isArray(call("cairn", { limit: 2 })) || call("cairn", { limit: 2 }), name);
    for (const [options, message] of cases) assert.throws(() => call("cairn", options), ours(message), `${name} ${JSON.stringify(options)}`);
    for (const query of [42, null, undefined, {}, ["cairn"], new String("cairn")]) {
      assert.throws(() => call(query), ours(/^the query must be a string, not (a number|null|undefined|an object|an array)$/), `${name}(${String(query)})`);
    }
    assert.ok(call("cairn"), `${name} still answers`);
  }
  const vectors = ["abc", 5, [0.1, NaN], [1e300], { length: 384 }, new Array(1e9), new Float64Array(384)];
  for (const [i, bad] of vectors.entries()) {
    assert.throws(() => index.searchWithVector("cairn", bad), ours(/the vector must (be a Float32Array or an array of at most 65536 numbers|hold finite numbers)/), `vector ${i}`);
  }
  assert.throws(() => index.embed(5), ours(/^the text must be a string, not a number$/));
  for (const bad of ["abc", 5, { length: 3e9 }, [1, 2, 3], new Uint16Array(4)]) {
    assert.throws(() => SearchIndex.fromBytes(bad), ours(/^the index must be a Uint8Array, not /), String(bad));
  }
  assert.throws(() => index.loadModelFromBytes(new Uint8Array(), "x", new Uint8Array()), ours(/^the tokenizer must be a Uint8Array, not a string$/));
  return Promise.all([
    assert.rejects(SearchIndex.load(5), ours(/^the index URL must be a string, not a number$/)),
    assert.rejects(index.loadModel(new URL("http://x/")), ours(/^the model URL must be a string, not an object$/)),
  ]).then(() => index.free());
});

test("hostile rerank scores on a fragmented index are errors that say what is wrong, and it keeps answering", async () => {
  const index = buildIndex([fixtures], ["--no-embed", "--layout", "fragments"]);
  const fragments = FragmentedIndex.fromMeta(readFileSync(join(index, "meta.cairn")));
  const bad = [
    [["m", "q", [1, 2], [0.5]], /2 chunks/],
    [["m", "q", [1e12], [0.5]], /the chunks must be a Uint32Array or an array of whole numbers/],
    [["m", "q", [-1], [0.5]], /the chunks must be/],
    [["m", "q", [1.5], [0.5]], /the chunks must be/],
    [["m", "q", "x", [1]], /the chunks must be/],
    [["m", "q", new Uint32Array([4e9]), new Float32Array([1])], /a chunk the index lacks/],
    [["m", "q", [1], [NaN]], /the scores must hold finite numbers/],
    [["m", "q", [1], "x"], /the scores must be a Float32Array/],
    [[1, "q", [1], [1]], /the model must be a string/],
  ];
  for (const [args, message] of bad) assert.throws(() => fragments.addRerankScores(...args), ours(message), JSON.stringify(args).slice(0, 60));
  fragments.addRerankScores("m", "q", [], []);
  assert.ok(fragments.search("coffee", { mode: "lexical" }).need?.length > 0);
  fragments.free();
});

test("fetch.js caches a model only once it loaded, and fetches a stale cached one anew", { timeout: 120_000 }, async (t) => {
  const store = new Map();
  globalThis.caches = { open: async () => ({ match: async (url) => store.get(url)?.clone(), put: async (url, response) => void store.set(url, response) }) };
  t.after(() => delete globalThis.caches);
  const open = async (modelDir) => {
    let done;
    const ready = new Promise((ok) => (done = ok));
    // Node has one module, the full one: it stands for the core too.
    const modules = { core: async () => cairnNode, full: async () => cairnNode };
    const { opened } = await openIndex(modules, `${base}/ok/index.cairn`, `${base}/${modelDir}`, (e) => e.event === "model" && done(e));
    const event = await within(ready);
    return { index: opened.index, event };
  };
  // A stale copy of the weights in the cache (the site has rebuilt its index since).
  store.set(`${base}/ok/${WEIGHTS}`, new Response(new Uint8Array(1000)));
  const first = await open("ok");
  assert.deepEqual(first.event, { event: "model", ready: true, fromCache: false });
  assert.equal(first.index.modelReady, true);
  assert.equal((await store.get(`${base}/ok/${WEIGHTS}`).clone().arrayBuffer()).byteLength, modelFiles[WEIGHTS].length);
  // The word rows of the index's own words came with the model: a query of them needs none.
  const words = "stone cairns guide walkers";
  assert.deepEqual(first.index.modelRows(words), []);
  const second = await open("ok");
  assert.deepEqual(second.event, { event: "model", ready: true, fromCache: true });
  assert.deepEqual(second.index.modelRows(words), []);
  // Common rows that do not fit the model are left out: the model is in, queries fetch their own.
  const junk = await open("junkrows");
  assert.equal(junk.event.ready, true);
  assert.ok(junk.index.modelRows(words).length > 0);
  // and are not kept: the next visit fetches them anew.
  assert.ok(store.has(`${base}/junkrows/${WEIGHTS}`) && !store.has(`${base}/junkrows/common.cairnrows`), [...store.keys()].join(" "));
  junk.index.free();
  // Weights that do not load are reported and never cached.
  const damaged = await open("damaged");
  assert.equal(damaged.event.ready, false);
  assert.match(damaged.event.error, /does not match the index/);
  assert.ok(![...store.keys()].some((url) => url.includes("/damaged/")), [...store.keys()].join(" "));
  assert.ok(damaged.index.search("stone").length > 0);
  for (const { index } of [first, second, damaged]) index.free();
});
