// The npm package as a user without Rust gets it: `npm pack` of pkg/, installed into an empty
// project, and `npx cairn-search` run there with a PATH that has node and npm but no cargo or
// rustc. It indexes a folder of HTML, Markdown, text and JSONL (the CLI's code as WebAssembly
// under WASI): lexically to the same bytes as the native CLI; with the model fetched from a
// local server laid out as the Hugging Face hub (HF_ENDPOINT), cached and not fetched again, to
// an index whose hybrid hits are the native CLI's, and to the same files on two worker threads;
// `npx cairn-search search` answers from it, and so does <cairn-search> in Chromium. The Node
// API writes what the command line writes; a platform package's native binary is preferred.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { serve } from "../../scripts/serve.mjs";
import { cairn, fixtures, launchChromium, model, root, scratch } from "./helpers.mjs";

const HUB_PATH = "/sentence-transformers/all-MiniLM-L6-v2/resolve/main/";
const QUERIES = ["how do I install it", "configuration options", "caffè"];

let work, project, env, hub;

/** `npx cairn-search …` in the project, as a user without Rust runs it: its exit status and
 * output. Asynchronous, so the hub this process serves can answer it. */
function npx(args, extra = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn("npx", ["--no-install", "cairn-search", ...args], { cwd: project, env: { ...env, ...extra } });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** `npx` that must succeed. */
async function npxOk(args, extra = {}) {
  const run = await npx(args, extra);
  if (run.status !== 0) throw new Error(`npx cairn-search ${args.join(" ")} exited ${run.status}:\n${run.stderr}`);
  return run;
}

before(async () => {
  assert.ok(existsSync(join(root, "pkg/cli/cairn.wasm")), "pkg/ has no cli/cairn.wasm: run scripts/build-pkg.sh");
  work = scratch("npx");
  const tarball = execFileSync("npm", ["pack", join(root, "pkg"), "--pack-destination", work, "--silent"], { encoding: "utf8" }).trim().split("\n").pop();
  project = join(work, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "site", private: true }));
  // node and npm only: the folders that hold them, none that holds cargo.
  const path = [...new Set([dirname(process.execPath), dirname(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim()), "/usr/bin", "/bin"])];
  env = { PATH: path.join(":"), HOME: work, CAIRN_CACHE: join(work, "cache"), npm_config_cache: join(work, "npm-cache") };
  assert.notEqual(spawnSync("sh", ["-c", "command -v cargo || command -v rustc"], { env }).status, 0, "cargo is still on PATH");
  execFileSync("npm", ["install", join(work, tarball), "--no-audit", "--no-fund", "--offline"], { cwd: project, env, stdio: "pipe" });
  hub = await serve(0, [[HUB_PATH, model]]);
});

after(() => hub?.close());

test("a lexical index from npx is the native CLI's, byte for byte", async () => {
  const out = join(work, "lexical");
  const run = await npxOk(["index", fixtures, "--out", out, "--no-embed"]);
  assert.match(run.stdout, /^indexed \d+ documents/m);
  const native = join(work, "lexical-native");
  cairn(["index", fixtures, "--out", native, "--no-embed"]);
  assert.deepEqual(readFileSync(join(out, "index.cairn")), readFileSync(join(native, "index.cairn")));
  assert.deepEqual(readdirSync(out).sort(), readdirSync(native).sort());
});

test("with the model from the hub: fetched once, and the index answers as the native CLI's", async () => {
  const endpoint = `http://127.0.0.1:${hub.address().port}`;
  const out = join(work, "hybrid");
  const first = await npxOk(["index", fixtures, "--out", out], { HF_ENDPOINT: endpoint });
  assert.match(first.stdout, /^indexed \d+ documents/m);
  const fetched = hub.log.filter((r) => r.path.startsWith(HUB_PATH) && r.status === 200).map((r) => r.path.slice(HUB_PATH.length)).sort();
  assert.deepEqual(fetched, ["config.json", "model.safetensors", "tokenizer.json"]);
  assert.ok(existsSync(join(out, "model")), "the browser's model is written beside the index");
  // Cached: a second build fetches nothing.
  hub.log.length = 0;
  await npxOk(["index", fixtures, "--out", join(work, "hybrid-again")], { HF_ENDPOINT: endpoint });
  assert.equal(hub.log.length, 0, JSON.stringify(hub.log));

  // On two worker threads (a split build and its merge), the same files.
  const split = join(work, "hybrid-split");
  const threads = await npxOk(["index", fixtures, "--out", split], { HF_ENDPOINT: endpoint, CAIRN_THREADS: "2" });
  assert.match(threads.stdout, /^indexed \d+ documents, .* embedded on 2 threads$/m);
  for (const file of ["index.cairn", "model/model.gguf", "model/tokenizer.json", "model/config.json"]) {
    assert.deepEqual(readFileSync(join(split, file)), readFileSync(join(out, file)), file);
  }
  assert.deepEqual(readdirSync(join(split, "p")).sort(), readdirSync(join(out, "p")).sort());

  const native = join(work, "hybrid-native");
  cairn(["index", fixtures, "--out", native, "--model", model]);
  for (const query of QUERIES) {
    const args = (index) => ["search", index, query, "--json", "--limit", "10"];
    const wasm = JSON.parse((await npxOk(args(out))).stdout).map((h) => h.id);
    const nat = JSON.parse(cairn(args(native))).map((h) => h.id);
    assert.deepEqual(wasm, nat, `hybrid top 10 of ${JSON.stringify(query)}`);
  }

  // <cairn-search> in Chromium answers from the index npx wrote.
  const site = await serve(0, [["/npx-index/", out]]);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title><script type="module" src="/pkg/element.js"></script></head><body><cairn-search index="/npx-index/index.cairn"></cairn-search></body></html>`;
    const base = `http://127.0.0.1:${site.address().port}`;
    await page.route(`${base}/page.html`, (route) => route.fulfill({ contentType: "text/html; charset=utf-8", body: html }));
    await page.goto(`${base}/page.html`);
    await page.waitForSelector("cairn-search[data-ready]", { timeout: 30_000 });
    await page.fill("cairn-search input", QUERIES[0]);
    await page.waitForSelector("cairn-search li[role=option]", { timeout: 30_000 });
    assert.ok((await page.$$("cairn-search li[role=option]")).length > 0);
  } finally {
    await browser.close();
    site.close();
  }
});

/** Runs `code` (an ES module) in the project, where `cairn-search/indexer` resolves as a user's
 * import does; resolves to what it printed. */
async function inProject(code) {
  const file = join(project, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd: project, env });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => (status === 0 ? resolve(stdout) : reject(new Error(`exited ${status}: ${stderr}`))));
  });
}

test("the Node API writes the command line's bytes, and indexes pages and records given in memory", async () => {
  const out = join(work, "api-lexical");
  const wrote = JSON.parse(await inProject(`
    import { createIndex } from "cairn-search/indexer";
    const index = await createIndex({ noEmbed: true });
    index.addDirectory(${JSON.stringify(fixtures)});
    console.log(JSON.stringify(await index.write(${JSON.stringify(out)})));
  `));
  assert.ok(wrote.documents > 0 && wrote.chunks >= wrote.documents, JSON.stringify(wrote));
  const native = join(work, "api-native");
  cairn(["index", fixtures, "--out", native, "--no-embed"]);
  assert.deepEqual(readFileSync(join(out, "index.cairn")), readFileSync(join(native, "index.cairn")));

  const memory = join(work, "api-memory");
  await inProject(`
    import { createIndex } from "cairn-search/indexer";
    const index = await createIndex({ noEmbed: true, baseUrl: "/" });
    index.addHTMLFile({ url: "/guide/", content: "<html><head><title>Guide</title></head><body><main><h1>Guide</h1><p>Brewing tea with a kettle.</p></main></body></html>" });
    index.addRecord({ id: "r1", title: "Coffee", text: "Espresso needs a good grinder.", url: "/coffee/" });
    await index.write(${JSON.stringify(memory)});
  `);
  const top = async (query) => JSON.parse((await npxOk(["search", memory, query, "--json"])).stdout)[0];
  assert.equal((await top("kettle")).citation.url, "/guide/");
  assert.equal((await top("grinder")).citation.docId, "r1");

  // Pages in two languages: one index a language, each one's counts.
  const bilingual = JSON.parse(await inProject(`
    import { createIndex } from "cairn-search/indexer";
    const index = await createIndex({ noEmbed: true, baseUrl: "/" });
    index.addHTMLFile({ url: "/en/", content: '<html lang="en"><head><title>Tea</title></head><body><main><h1>Tea</h1><p>Brewing tea with a kettle.</p></main></body></html>' });
    index.addHTMLFile({ url: "/de/", content: '<html lang="de"><head><title>Tee</title></head><body><main><h1>Tee</h1><p>Tee mit dem Wasserkocher.</p></main></body></html>' });
    console.log(JSON.stringify(await index.write(${JSON.stringify(join(work, "api-bilingual"))})));
  `));
  assert.deepEqual(bilingual.languages.map((l) => [l.language, l.documents]), [["de", 1], ["en", 1]]);
  assert.equal(bilingual.documents, 2);
  assert.ok(existsSync(join(work, "api-bilingual/languages.json")));

  // With the model, on two threads: progress events for each stage, embedding summed over
  // the threads up to every chunk.
  const progress = JSON.parse(await inProject(`
    process.env.CAIRN_THREADS = "2";
    import { createIndex } from "cairn-search/indexer";
    const events = [];
    const index = await createIndex({ model: ${JSON.stringify(model)}, onProgress: (e) => events.push(e) });
    index.addDirectory(${JSON.stringify(fixtures)});
    const wrote = await index.write(${JSON.stringify(join(work, "api-model"))});
    console.log(JSON.stringify({ events, wrote }));
  `));
  const embedding = progress.events.filter((e) => e.stage === "embedding");
  assert.ok(embedding.length > 0, JSON.stringify(progress.events));
  assert.deepEqual(embedding.at(-1), { stage: "embedding", done: progress.wrote.chunks, total: progress.wrote.chunks });
  assert.ok(embedding.every((e, i) => i === 0 || e.done >= embedding[i - 1].done), "embedding progress went back");
  assert.ok(progress.events.some((e) => e.stage === "reading" && e.done === e.total));

  // A failed build says why, as the command line does, and keeps the previous index.
  const failed = await inProject(`
    import { createIndex, CairnError } from "cairn-search/indexer";
    const index = await createIndex({ noEmbed: true });
    index.addFile(${JSON.stringify(join(work, "missing.md"))});
    try { await index.write(${JSON.stringify(memory)}); console.log("wrote"); }
    catch (e) { console.log(e instanceof CairnError, e.message); }
  `);
  assert.match(failed, /^true .*missing\.md/);
  assert.equal((await top("kettle")).citation.url, "/guide/");
});

test("with the platform package installed, npx runs the native binary and says so", async () => {
  // The debug build, without its 380 MB of debug information, stands in for a release binary.
  const binary = join(work, "cairn");
  execFileSync("strip", ["-o", binary, join(root, "target/debug/cairn")]);
  execFileSync("bash", [join(root, "scripts/build-platform-pkg.sh"), binary], { stdio: "pipe" });
  const platform = `${process.platform}-${process.arch}`;
  const tarball = execFileSync("npm", ["pack", join(root, "pkg-platform", platform), "--pack-destination", work, "--silent"], { encoding: "utf8" }).trim().split("\n").pop();
  const main = readdirSync(work).find((f) => f.startsWith("cairn-search-") && f.endsWith(".tgz"));
  const other = join(work, "native-project");
  mkdirSync(other);
  writeFileSync(join(other, "package.json"), JSON.stringify({ name: "native-site", private: true }));
  execFileSync("npm", ["install", join(work, main), join(work, tarball), "--no-audit", "--no-fund", "--offline"], { cwd: other, env, stdio: "pipe" });
  const out = join(work, "native-lexical");
  const run = spawnSync("npx", ["--no-install", "cairn-search", "index", fixtures, "--out", out, "--no-embed"], { cwd: other, env, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, new RegExp(`using the native binary .*@cairn-search/${platform}/cairn`));
  assert.deepEqual(readFileSync(join(out, "index.cairn")), readFileSync(join(work, "lexical-native", "index.cairn")));
});

test("npx says what is wrong, and exits 1, as the native CLI does", async () => {
  const run = await npx(["index", join(work, "missing"), "--out", join(work, "x"), "--no-embed"]);
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^error: .*missing/m);
});
