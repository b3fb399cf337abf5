// The cairn command line in Node, shared by `npx cairn-search` (bin/cairn.mjs) and the Node API
// (indexer.mjs): the native CLI's own code, compiled to WebAssembly (wasm32-wasip1,
// `cli/cairn.wasm`) and run under WASI, so the flags, messages, exit codes and the index bytes
// are the native CLI's. A native binary is used instead when one is at hand: `CAIRN_BINARY`,
// or a platform package (`@cairn-search/linux-x64`, …) installed beside this one.
//
// WASI is @tybys/wasm-util's (bundled into this file when the package is built), not Node's own
// `node:wasi`: Node 20's keeps the module's memory as it was when the program started, so after
// the memory grows (the model loading) its file and console calls read and write freed memory,
// which crashed Node or lost output in about four runs of five here.
//
// What only JavaScript can do here: the sentence model is fetched from the Hugging Face hub
// (`HF_ENDPOINT` honoured) into `~/.cache/cairn` when `--model` is a URL or is not given and
// `models/all-MiniLM-L6-v2` is not in the working folder, checked against its SHA-256; and an
// index folder is held against a second build while one writes it (WASI has no file locks).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as fs from "node:fs";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { WASI } from "@tybys/wasm-util";

/** Where `cli/cairn.wasm` is: the package's root (this file is bundled into `bin/` and the
 * package root alike, so both look for it from the package's folder). */
const packageRoot = () => (existsSync(join(here, "cli/cairn.wasm")) ? here : join(here, ".."));
const here = dirname(fileURLToPath(import.meta.url));
/** The model `cairn index` embeds with when none is named, and its files' SHA-256. */
const DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2";
const DEFAULT_FOLDER = "models/all-MiniLM-L6-v2";
const PINNED = {
  "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
  "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
  "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
};

/** A problem the launcher found before the CLI ran, said as the CLI says its own. */
export class CairnError extends Error {}

function fail(message) {
  throw new CairnError(message);
}

/** The value of `--name` in `args` (`--name value` or `--name=value`), and where it is. */
export function option(args, name) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === name) return { value: args[i + 1], at: i, joined: false };
    if (args[i].startsWith(`${name}=`)) return { value: args[i].slice(name.length + 1), at: i, joined: true };
  }
  return null;
}

/** A native cairn binary to run instead of the WebAssembly one, if there is one. */
export function nativeBinary() {
  if (process.env.CAIRN_BINARY) return process.env.CAIRN_BINARY;
  const name = `@cairn-search/${process.platform}-${process.arch}`;
  try {
    const require = createRequire(import.meta.url);
    const dir = dirname(require.resolve(`${name}/package.json`));
    const binary = join(dir, process.platform === "win32" ? "cairn.exe" : "cairn");
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

/** Where fetched models are kept: `CAIRN_CACHE`, else `$XDG_CACHE_HOME/cairn`, else
 * `~/.cache/cairn`. */
function cacheDir() {
  return process.env.CAIRN_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "cairn");
}

/** `repo` at `revision` (a hub model id, e.g. sentence-transformers/all-MiniLM-L6-v2), fetched
 * once into the cache: its folder. The default model's files are checked against their pinned
 * SHA-256; another model's weights against the hub's `X-Linked-Etag` (their SHA-256). */
async function hubModel(repo, revision) {
  const endpoint = (process.env.HF_ENDPOINT ?? "https://huggingface.co").replace(/\/+$/, "");
  const dir = join(cacheDir(), "models", repo.replace(/\//g, "--"), revision);
  mkdirSync(dir, { recursive: true });
  for (const file of ["config.json", "tokenizer.json", "model.safetensors"]) {
    const path = join(dir, file);
    const pinned = repo === DEFAULT_MODEL ? PINNED[file] : null;
    if (existsSync(path) && (!pinned || sha256(readFileSync(path)) === pinned)) continue;
    const url = `${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${file}`;
    const bytes = await download(url, file);
    const linked = /^"?([0-9a-f]{64})"?$/.exec(bytes.headers.get("x-linked-etag") ?? "")?.[1];
    const want = pinned ?? (file === "model.safetensors" ? linked : null);
    const got = sha256(bytes.body);
    if (want && got !== want) {
      fail(`${url} has SHA-256 ${got}, not the ${want} expected; not using it (a proxy or mirror changed it, or the download broke off): try again, or pass --model with a folder`);
    }
    const part = `${path}.part-${process.pid}`;
    writeFileSync(part, bytes.body);
    renameSync(part, path);
  }
  return dir;
}

function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The largest model file fetched: a body past it (a broken or hostile mirror) is refused. */
const MAX_MODEL_FILE = 2 ** 31;

/** A URL's body, with a progress line on a terminal. */
async function download(url, name) {
  let response;
  try {
    response = await fetch(url, { redirect: "follow" });
  } catch (e) {
    fail(`cannot fetch ${url}: ${e.cause?.message ?? e.message}; set HF_ENDPOINT to a mirror, or pass --model with a folder that holds config.json, tokenizer.json and model.safetensors`);
  }
  if (!response.ok) fail(`cannot fetch ${url}: HTTP ${response.status} ${response.statusText}`);
  const total = Number(response.headers.get("content-length")) || 0;
  const chunks = [];
  let received = 0;
  const tty = process.stderr.isTTY;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    received += chunk.length;
    if (received > MAX_MODEL_FILE) {
      fail(`${url} sent more than ${MAX_MODEL_FILE >> 30} GiB, more than any sentence model this size; not using it: check HF_ENDPOINT, or pass --model with a folder`);
    }
    if (tty) {
      const of = total ? ` of ${(total / 1e6).toFixed(1)} MB` : "";
      process.stderr.write(`\rdownloading ${name}: ${(received / 1e6).toFixed(1)} MB${of}   `);
    }
  }
  if (tty) process.stderr.write("\n");
  else process.stderr.write(`downloaded ${name} (${(received / 1e6).toFixed(1)} MB) from ${url}\n`);
  return { body: Buffer.concat(chunks), headers: response.headers };
}

/** `args` with `--model` pointing at a folder: a URL or hub id fetched into the cache; with
 * none given, the working folder's models/all-MiniLM-L6-v2 if it has one, else the default
 * model from the hub. `--no-embed` needs no model. */
export async function withModelFolder(args) {
  if (args.includes("--no-embed")) return args;
  const given = option(args, "--model");
  if (given && given.value !== undefined && !/^https?:\/\//.test(given.value) && !given.value.startsWith("hf:")) {
    return args;
  }
  if (!given && existsSync(join(DEFAULT_FOLDER, "config.json"))) return args;
  let repo = DEFAULT_MODEL;
  let revision = "main";
  if (given?.value) {
    // hf:owner/name[@revision], or a hub URL https://host/owner/name[/tree/revision].
    const spec = given.value.startsWith("hf:")
      ? given.value.slice(3)
      : new URL(given.value).pathname.replace(/^\/+|\/+$/g, "");
    const [path, rev] = spec.split("@");
    const parts = path.split("/");
    repo = parts.slice(0, 2).join("/");
    revision = rev ?? (parts[2] === "tree" || parts[2] === "resolve" ? parts[3] : "main") ?? "main";
    if (given.value.startsWith("http")) process.env.HF_ENDPOINT ??= new URL(given.value).origin;
  }
  const dir = await hubModel(repo, revision);
  const out = [...args];
  if (!given) out.push("--model", dir);
  else if (given.joined) out[given.at] = `--model=${dir}`;
  else out[given.at + 1] = dir;
  return out;
}

/** Holds `out` for this build: WASI has no file locks, so the launcher keeps a file naming its
 * process in the folder while the build runs; one left by a process that is gone is taken over.
 * Returns what lets it go (also done when the process exits). */
export function holdFolder(out) {
  mkdirSync(out, { recursive: true });
  const path = join(out, ".cairn-lock-npm");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      const release = () => rmSync(path, { force: true });
      process.on("exit", release);
      return () => {
        process.off("exit", release);
        release();
      };
    } catch (e) {
      if (e.code !== "EEXIST") throw e;
      const pid = Number(readFileSync(path, "utf8"));
      let alive = false;
      try {
        alive = pid > 0 && process.kill(pid, 0);
      } catch (e) {
        alive = e.code === "EPERM";
      }
      if (alive) {
        fail(`another cairn build (process ${pid}) is writing into ${out} now; wait for it to finish (the index there stays whole), then run this one again`);
      }
      rmSync(path, { force: true });
    }
  }
}

/** Runs the CLI's WebAssembly build under WASI, with the whole file system at `/` and the
 * working folder passed in `CAIRN_CWD`; resolves to its exit code. Its output goes to this
 * process's, or to `print` and `printErr`, a line at a time. */
export async function runWasi(args, { print, printErr } = {}) {
  const wasi = new WASI({
    version: "preview1",
    args: ["cairn", ...args],
    env: { ...process.env, CAIRN_CWD: process.cwd(), CAIRN_PROGRESS: "lines" },
    preopens: { "/": "/" },
    returnOnExit: true,
    fs,
    print: print ?? ((text) => process.stdout.write(`${text}\n`)),
    printErr: printErr ?? ((text) => process.stderr.write(`${text}\n`)),
  });
  const module = await WebAssembly.compile(readFileSync(join(packageRoot(), "cli/cairn.wasm")));
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
  return wasi.start(instance);
}

/** Runs the command line on `args`: a native binary when one is at hand, else the WebAssembly
 * build; its output a line at a time to `print` and `printErr`. Resolves to its exit code. */
export async function runCli(args, { print, printErr }) {
  const binary = nativeBinary();
  if (!binary) return runWasi(args, { print, printErr });
  return new Promise((ok, reject) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CAIRN_PROGRESS: "lines" } });
    const lines = (stream, to) => {
      let rest = "";
      stream.setEncoding("utf8");
      stream.on("data", (d) => {
        const parts = (rest + d).split("\n");
        rest = parts.pop();
        parts.forEach((l) => to(l));
      });
      stream.on("end", () => rest && to(rest));
    };
    lines(child.stdout, print);
    lines(child.stderr, printErr);
    child.on("error", (e) => reject(new CairnError(`cannot run ${binary}: ${e.message}`)));
    child.on("close", (code) => ok(code ?? 1));
  });
}

/** Inputs of at least this many bytes are embedded on every core: below it, loading the model
 * once a thread costs more than the threads save (about 800 chunks of text). */
const SPLIT_BYTES = 1 << 20;

/** Whether the files under `inputs` (the command line's words that name files or folders) hold
 * at least `SPLIT_BYTES`, counting only what cairn reads; stops as soon as they do. */
function largeInputs(inputs) {
  let bytes = 0;
  const visit = (path) => {
    if (bytes >= SPLIT_BYTES) return;
    let stat;
    try {
      stat = fs.statSync(path);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(path)) visit(join(path, name));
    } else if (/\.(md|markdown|html?|pdf|txt|jsonl)$/i.test(path)) {
      bytes += stat.size;
    }
  };
  inputs.forEach(visit);
  return bytes >= SPLIT_BYTES;
}

/** `cairn index` on every core. WebAssembly under WASI has one thread, so a first build of
 * large inputs with a model runs as the command line's own split build: one worker thread a
 * core, each `cairn index --shard I/N` (reading every input, embedding its share of the
 * chunks), then `cairn merge`, which writes the index one build would have, byte for byte. A
 * rebuild (the folder holds an index: only changed chunks are embedded again), small inputs, a
 * lexical build, a native binary, an explicit `--shard` or `CAIRN_THREADS=1` run as one
 * `cairn index`; `CAIRN_THREADS=N` sets the threads (and splits inputs of any size). */
export async function runIndex(args, { print, printErr, onProgress } = {}) {
  const report = progress(onProgress, !printErr && process.stderr.isTTY);
  const out = print ?? ((text) => process.stdout.write(`${text}\n`));
  const err = printErr ?? ((text) => process.stderr.write(`${text}\n`));
  // A line that is not progress clears the bar first, as indicatif's do.
  const after = (write) => (line) => {
    report.end();
    write(line);
  };
  try {
    return await indexOnCores(args, after(out), report, after(err));
  } finally {
    report.end();
  }
}

/** `runIndex`'s work: `report(source, line)` takes each progress line of the build (source 0)
 * or of a split build's thread `source` (true when it was one); `said(line)` prints the others. */
async function indexOnCores(args, print, report, said) {
  const out = option(args, "--out")?.value;
  const threads = Math.min(Number(process.env.CAIRN_THREADS) || availableParallelism(), 64);
  const split = threads > 1 && out && !nativeBinary()
    && !args.includes("--no-embed") && !option(args, "--shard")
    && !args.includes("--help") && !args.includes("-h")
    && !["index.cairn", "meta.cairn"].some((f) => existsSync(join(out, f)))
    && (process.env.CAIRN_THREADS || largeInputs(args.slice(1).filter((a) => !a.startsWith("-") && existsSync(a))));
  if (!split) return runCli(args, { print, printErr: (line) => report(0, line) || said(line) });
  const started = Date.now();
  const scratch = mkdtempSync(join(tmpdir(), "cairn-shards-"));
  try {
    // The shards take every flag but --out and --layout (the merge's).
    const own = [];
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--out" || args[i] === "--layout") i++;
      else if (!args[i].startsWith("--out=") && !args[i].startsWith("--layout=")) own.push(args[i]);
    }
    const parts = Array.from({ length: threads }, (_, i) => join(scratch, `part-${i + 1}`));
    // Each shard reads every input and says the same of them: the first one speaks as it goes
    // (its reading is the build's); another that fails says what it said, so its error is not
    // lost. Each embeds its share, and the build's embedding is theirs summed.
    const kept = parts.map(() => []);
    const codes = await Promise.all(parts.map((part, i) =>
      inWorker([...own, "--out", part, "--shard", `${i + 1}/${threads}`], (line) => {
        if ((i > 0 && line.startsWith("progress reading ")) || report(i, line)) return;
        if (i === 0) said(line);
        else kept[i].push(line);
      })));
    const failed = codes.findIndex((c) => c !== 0);
    if (failed >= 0) {
      if (failed > 0) kept[failed].forEach(said);
      return codes[failed];
    }
    const model = option(own, "--model")?.value ?? DEFAULT_FOLDER;
    const layout = option(args, "--layout")?.value;
    let merged = "";
    const code = await runWasi(
      ["merge", ...parts, "--out", out, "--model", model, ...(layout ? ["--layout", layout] : [])],
      {
        print: (line) => {
          if (line.startsWith("merged ")) merged = line;
          else print(line);
        },
        printErr: said,
      },
    );
    // The command line's summary line, as one `cairn index` says it.
    const summary = /^merged \d+ parts: (.*) in [\d.]+ s$/.exec(merged);
    if (summary) print(`indexed ${summary[1]} in ${((Date.now() - started) / 1e3).toFixed(1)} s; embedded on ${threads} threads`);
    return code;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * What the command line's progress lines (`progress <stage> <done> <total>`, with
 * CAIRN_PROGRESS=lines) become: `onProgress({ stage, done, total })` and, with `bar`, a bar on
 * stderr. A split build's threads each report their share of a stage, summed here. Returns
 * `report(source, line)`, true when the line was progress; `report.end()` clears the bar.
 */
function progress(onProgress, bar) {
  const shares = new Map(); // "source stage" → [done, total]
  let drawn = false;
  const report = (source, line) => {
    const m = /^progress (\w+) (\d+) (\d+)$/.exec(line);
    if (!m) return false;
    const stage = m[1];
    shares.set(`${source} ${stage}`, [Number(m[2]), Number(m[3])]);
    let done = 0;
    let total = 0;
    for (const [key, [d, t]] of shares) if (key.endsWith(` ${stage}`)) (done += d), (total += t);
    onProgress?.({ stage, done, total });
    if (bar) {
      const filled = total ? Math.round((30 * done) / total) : 30;
      process.stderr.write(`\r${stage.padStart(10)} [${"=".repeat(filled)}${" ".repeat(30 - filled)}] ${done}/${total}\x1b[K`);
      drawn = true;
    }
    return true;
  };
  report.end = () => {
    if (drawn) process.stderr.write("\r\x1b[K");
    drawn = false;
  };
  return report;
}

/** Runs the command line on `args` in a worker thread (its own WebAssembly instance); its
 * stderr lines to `printErr`, its stdout dropped. Resolves to its exit code. */
function inWorker(args, printErr) {
  return new Promise((ok, reject) => {
    const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { cairnArgs: args } });
    worker.on("message", (m) => {
      if (m.line !== undefined) printErr(m.line);
      if (m.code !== undefined) ok(m.code);
    });
    worker.on("error", reject);
    worker.on("exit", (code) => ok(code === 0 ? 0 : 1));
  });
}

// In a worker thread `inWorker` started: run the command line and report back.
if (!isMainThread && workerData?.cairnArgs) {
  runWasi(workerData.cairnArgs, {
    print: () => {},
    printErr: (line) => parentPort.postMessage({ line }),
  }).then((code) => parentPort.postMessage({ code }));
}
