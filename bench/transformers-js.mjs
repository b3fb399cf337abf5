// Query embedding in Chromium's wasm, in one run: cairn's model (the full module, the 8-bit web
// model of an index's model/ folder, and the f16 one of a second index if given) beside
// transformers.js on its wasm backend (onnxruntime-web, one thread as cairn's is) with 8-bit
// weights. Each query is embedded by each in turn, tokenizing included (cairn's word rows are
// loaded beforehand: `loadModel` loads them all); prints p50 and p95 of each, what each
// downloads, and the cosine between cairn's 8-bit embeddings and the others'. The static tier
// is timed too, by a whole hybrid search with it.
//
//   node bench/transformers-js.mjs TJS_DIR ONNX_DIR [INDEX_DIR [INDEX_F16_DIR]]
//
// TJS_DIR: a folder where `npm install @huggingface/transformers` ran (transformers.js is not a
// dependency of cairn, and its models come from a hub this machine cannot reach). ONNX_DIR:
// what bench/export_onnx.py wrote (its model_q8.onnx is the 8-bit model: MatMul weights in
// 8 bits by onnxruntime's quantize_dynamic, as Optimum makes transformers.js's). INDEX_DIR: an
// index built with the model (default www/index, the demo's). INDEX_F16_DIR: the same index
// built with --web-weights f16.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { launchChromium } from "../tests/node/helpers.mjs";

const [tjsDir, onnxDir, indexArg, f16Arg] = process.argv.slice(2);
if (!tjsDir || !onnxDir) throw new Error("usage: node bench/transformers-js.mjs TJS_DIR ONNX_DIR [INDEX_DIR]");
const root = resolve(new URL("..", import.meta.url).pathname);
const indexDir = resolve(indexArg ?? `${root}/www/index`);
const modules = resolve(tjsDir, "node_modules");

// transformers.js reads a model folder: config, tokenizer and onnx/model_quantized.onnx (dtype q8).
const scratch = mkdtempSync(join(tmpdir(), "cairn-tjs-"));
const model = join(scratch, "models/minilm");
mkdirSync(join(model, "onnx"), { recursive: true });
copyFileSync(join(indexDir, "model/config.json"), join(model, "config.json"));
copyFileSync(join(indexDir, "model/tokenizer.json"), join(model, "tokenizer.json"));
writeFileSync(join(model, "tokenizer_config.json"), JSON.stringify({ tokenizer_class: "BertTokenizer", do_lower_case: true, model_max_length: 256 }));
copyFileSync(join(onnxDir, "model_q8.onnx"), join(model, "onnx/model_quantized.onnx"));

const queries = [
  "how do i keep the search index small for a static site", "information retrieval evaluation", "fetal glucose levels",
  "time sharing operating systems", "computer programs for library cataloguing", "heat transfer in hypersonic flow",
  "the effect of drugs on the crystalline lens", "what does the index weigh",
];
writeFileSync(join(scratch, "bench.html"), `<!doctype html><title>bench</title>
<script type="importmap">${JSON.stringify({ imports: {
  "onnxruntime-web/webgpu": "/ort/ort.webgpu.bundle.min.mjs",
  "onnxruntime-common": "/ort-common/index.js",
  "@huggingface/transformers": "/tjs/transformers.web.js",
} })}</script>
<script type="module">
import init, { SearchIndex } from "/pkg/web/cairn.js";
import { AutoTokenizer, AutoModel, env } from "/tjs/transformers.web.js";
const queries = ${JSON.stringify(queries)};
const bytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
try {
  await init();
  const open = async (dir) => {
    const index = SearchIndex.fromBytes(await bytes("/" + dir + "/index.cairn"));
    await index.loadModel("/" + dir + "/model");
    return index;
  };
  const cairn = { "cairn q8": await open("index"), ...(${Boolean(f16Arg)} ? { "cairn f16": await open("index16") } : {}) };
  env.localModelPath = "/models/";
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  env.backends.onnx.wasm.wasmPaths = "/ort/";
  env.backends.onnx.wasm.numThreads = 1;
  const tokenizer = await AutoTokenizer.from_pretrained("minilm");
  const model = await AutoModel.from_pretrained("minilm", { dtype: "q8", device: "wasm" });
  const tjs = async (q) => (await model(await tokenizer(q))).sentence_embedding.data;
  const encoders = Object.fromEntries(Object.entries(cairn).map(([name, index]) => [name, async (q) => index.embed(q)]));
  encoders["transformers.js"] = tjs;
  // The static tier has no call of its own that embeds: a whole hybrid search with it (the
  // query's static vector, the scan of the chunk vectors, BM25, fusion), its rows fetched before.
  const statics = SearchIndex.fromBytes(await bytes("/index/index.cairn"));
  for (const q of queries) {
    for (const r of statics.staticRows(q)) {
      const pack = await bytes("/index/p/" + r.pack);
      statics.addStaticRow(r.row, pack.subarray(r.offset, r.offset + r.length));
    }
  }
  encoders["cairn static tier (whole hybrid search)"] = async (q) => statics.search(q, { encoder: "static" });
  const ms = Object.fromEntries(Object.keys(encoders).map((name) => [name, []]));
  const cosines = Object.fromEntries(Object.keys(encoders).map((name) => [name, []]));
  for (let round = 0; round < 12; round++) {
    for (const q of queries) {
      const got = {};
      for (const [name, embed] of Object.entries(encoders)) {
        const t = performance.now();
        got[name] = await embed(q);
        if (round >= 2) ms[name].push(performance.now() - t); // two warm-up rounds
      }
      if (round === 0) {
        const a = got["cairn q8"];
        for (const [name, b] of Object.entries(got).filter(([name]) => !name.includes("static"))) {
          let dot = 0, na = 0, nb = 0;
          for (let i = 0; i < a.length; i++) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
          cosines[name].push(dot / Math.sqrt(na * nb));
        }
      }
    }
  }
  window.result = { ms, cosines };
} catch (e) {
  window.result = { error: String(e?.stack ?? e) };
}
</script>`);

const server = await serve(0, [
  ["/tjs/", join(modules, "@huggingface/transformers/dist")],
  ["/ort/", join(modules, "onnxruntime-web/dist")],
  ["/ort-common/", join(modules, "onnxruntime-common/dist/esm")],
  ["/models/", join(scratch, "models")],
  ["/index/", indexDir],
  ...(f16Arg ? [["/index16/", resolve(f16Arg)]] : []),
  ["/bench/", scratch],
]);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/bench.html`);
  await page.waitForFunction(() => window.result, null, { timeout: 600_000 });
  const result = await page.evaluate(() => window.result);
  if (result.error) throw new Error(result.error);
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  const gz = (path) => gzipSync(readFileSync(path), { level: 9 }).length;
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  const ortWasm = join(modules, "onnxruntime-web/dist/ort-wasm-simd-threaded.jsep.wasm");
  console.log(`${queries.length} queries x 10 rounds after 2 warm-up rounds, Chromium ${browser.version()}, one thread each`);
  for (const [name, times] of Object.entries(result.ms)) {
    const c = result.cosines[name];
    const agreement = c.length ? `; cosine to cairn q8 min ${Math.min(...c).toFixed(4)}, mean ${(c.reduce((a, b) => a + b, 0) / c.length).toFixed(4)}` : "";
    console.log(`${name}: p50 ${pct(times, 0.5).toFixed(2)} ms, p95 ${pct(times, 0.95).toFixed(2)} ms${agreement}`);
  }
  console.log(`downloads (gzip -9): cairn wasm ${mb(gz(join(root, "pkg/web/cairn_bg.wasm")))} + 8-bit layers ${mb(gz(join(indexDir, "model/model.gguf")))} (+ 392 bytes a query token of word rows)` +
    (f16Arg ? `, or + f16 weights ${mb(gz(join(resolve(f16Arg), "model/model.safetensors")))}` : "") + "; " +
    `onnxruntime-web wasm ${mb(gz(ortWasm))} + transformers.js ${mb(gz(join(modules, "@huggingface/transformers/dist/transformers.web.js")))} + weights ${mb(gz(join(model, "onnx/model_quantized.onnx")))} (${mb(statSync(join(model, "onnx/model_quantized.onnx")).size)} raw; the word embeddings stay f32 in this export)`);
} finally {
  await browser.close();
  server.close();
}
