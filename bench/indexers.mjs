// The indexers side by side on the same records, in one run: the native CLI (release), the npm
// package's (`cairn-search/indexer`, the CLI as WASI under Node, a split build on every core),
// onnxruntime-node embedding the very same chunk texts (f32 and 8-bit, each text alone, on as
// many threads), and the browser's mutable index (bench/mutable.mjs). For each: the embedding
// stage's seconds (from its first to its last progress line, or session.run alone) and chunks a
// second, their ratio to the native CLI's, the whole build's seconds (and what came before and
// after the embedding: reading and chunking; the static tier, the browser's model, writing),
// and peak memory.
//
//   node bench/indexers.mjs [N] [ORT_MODULES]   (default 1000 records of ../shared/eval/cacm)
//
// Needs: cargo build --release; scripts/build-pkg.sh; for onnxruntime-node, ORT_MODULES (a
// folder where `npm install --ignore-scripts onnxruntime-node @huggingface/tokenizers` ran)
// and bench/export_onnx.py's target/onnx (see bench/embed.sh).
import { execFileSync, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(new URL("..", import.meta.url).pathname);
const n = Number(process.argv[2] ?? 1000);
const ortModules = process.argv[3];
const model = join(root, "models/all-MiniLM-L6-v2");
const out = join(root, "target/bench-indexers");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const docs = join(out, "docs.jsonl");
writeFileSync(docs, readFileSync(join(root, "../shared/eval/cacm/corpus.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, n).join("\n") + "\n");
execFileSync("cargo", ["build", "--quiet", "--release", "--bin", "cairn", "--example", "bench_embed"], { cwd: root, stdio: "inherit" });
const threads = availableParallelism();

/** Runs a command under /usr/bin/time; resolves to { seconds, rssMb, stdout, embedding } where
 * `embedding` is the seconds from its first to its last `progress embedding` line on stderr. */
function timed(command, args, env = {}) {
  const rss = join(out, "rss");
  return new Promise((ok, reject) => {
    const started = performance.now();
    const child = spawn("/usr/bin/time", ["-f", "%M", "-o", rss, command, ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = "";
    let first = null;
    let last = null;
    let rest = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => {
      const lines = (rest + d).split("\n");
      rest = lines.pop();
      for (const line of lines) {
        if (line.startsWith("progress embedding ") || line.startsWith("{\"stage\":\"embedding\"")) {
          first ??= performance.now();
          last = performance.now();
        }
      }
    });
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${command} ${args.join(" ")} exited ${code}`));
      const end = performance.now();
      const embedding = first === null ? null : (last - first) / 1000;
      ok({ seconds: (end - started) / 1000, rssMb: Number(readFileSync(rss, "utf8").trim().split("\n").at(-1)) / 1024, stdout, embedding, before: (first - started) / 1000, after: (end - last) / 1000 });
    });
  });
}

const rows = [];
const chunksOf = (stdout) => Number(/(\d+) chunks/.exec(stdout)?.[1]);

// The native CLI, its progress as lines (the first comes after the first chunk).
const native = await timed(join(root, "target/release/cairn"), ["index", docs, "--out", join(out, "native"), "--model", model], { CAIRN_PROGRESS: "lines" });
const chunks = chunksOf(native.stdout);
rows.push({ who: "native CLI (release)", ...native, chunks });

// The npm package's Node API, its onProgress events echoed to stderr.
const script = join(out, "npx-build.mjs");
writeFileSync(script, `
  import { createIndex } from ${JSON.stringify(join(root, "pkg/indexer.mjs"))};
  const index = await createIndex({ model: ${JSON.stringify(model)}, onProgress: (e) => process.stderr.write(JSON.stringify(e) + "\\n") });
  index.addFile(${JSON.stringify(docs)});
  console.log((await index.write(${JSON.stringify(join(out, "npx"))})).message);
`);
const npx = await timed(process.execPath, [script]);
rows.push({ who: `npm package (WASI, ${threads} threads)`, ...npx, chunks: chunksOf(npx.stdout) });

// Both again with the 8-bit products (`--arithmetic int8`).
const native8 = await timed(join(root, "target/release/cairn"), ["index", docs, "--out", join(out, "native-int8"), "--model", model, "--arithmetic", "int8"], { CAIRN_PROGRESS: "lines" });
rows.push({ who: "native CLI, --arithmetic int8", ...native8, chunks: chunksOf(native8.stdout) });
writeFileSync(script, readFileSync(script, "utf8").replace("model: ", 'arithmetic: "int8", model: ').replace(JSON.stringify(join(out, "npx")), JSON.stringify(join(out, "npx-int8"))));
const npx8 = await timed(process.execPath, [script]);
rows.push({ who: `npm package (WASI, ${threads} threads), arithmetic int8`, ...npx8, chunks: chunksOf(npx8.stdout) });

// The same chunk texts, embedded alone by cairn's native embedder and by onnxruntime-node.
const texts = join(out, "texts.jsonl");
const alone = execFileSync(join(root, "target/release/examples/bench_embed"), [model, texts, docs], { cwd: root, encoding: "utf8" });
for (const r of alone.trim().split("\n").map((l) => JSON.parse(l))) {
  rows.push({ who: `native embedder alone (examples/bench_embed, ${r.engine})`, embedding: r.seconds, chunks: r.chunks, rssMb: r.peak_rss_mb });
}
if (ortModules && existsSync(join(root, "target/onnx/model.onnx"))) {
  for (const file of ["model.onnx", "model_q8.onnx"]) {
    const r = JSON.parse(execFileSync(process.execPath, [join(root, "bench/embed_reference.mjs"), ortModules, join(root, "target/onnx", file), join(model, "tokenizer.json"), texts, String(threads)], { encoding: "utf8" }));
    rows.push({ who: r.engine, embedding: r.seconds, chunks: r.chunks, rssMb: r.peak_rss_mb });
  }
}

const base = rows[0].chunks / rows[0].embedding;
console.log(`${chunks} chunks (${n} records of CACM), ${threads} cores, ${new Date().toISOString().slice(0, 10)}\n`);
console.log("| indexer | embedding s | chunks/s | ÷ native CLI | whole build s (before embedding + after) | peak RSS MB |\n|---|---|---|---|---|---|");
for (const r of rows) {
  const rate = r.chunks / r.embedding;
  const whole = r.seconds === undefined ? "–" : `${r.seconds.toFixed(1)} (${r.before.toFixed(1)} + ${r.after.toFixed(1)})`;
  console.log(`| ${r.who} | ${r.embedding.toFixed(1)} | ${rate.toFixed(1)} | ${(rate / base).toFixed(2)} | ${whole} | ${Math.round(r.rssMb)} |`);
}
// The browser's mutable index on the same records, with the model folder the native build wrote.
console.log("");
process.stdout.write(execFileSync(process.execPath, [join(root, "bench/mutable.mjs"), join(out, "native"), docs, String(n)], { encoding: "utf8" }));
