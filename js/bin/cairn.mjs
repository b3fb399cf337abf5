#!/usr/bin/env node
// `npx cairn-search <command> …`: the cairn command line from the npm package alone, no Rust
// toolchain. It runs the native CLI's own code, compiled to WebAssembly (wasm32-wasip1,
// `cli/cairn.wasm`), under Node's WASI, so the flags, messages, exit codes and the index bytes
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
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as fs from "node:fs";
import { WASI } from "@tybys/wasm-util";

const here = dirname(fileURLToPath(import.meta.url));
/** The model `cairn index` embeds with when none is named, and its files' SHA-256. */
const DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2";
const DEFAULT_FOLDER = "models/all-MiniLM-L6-v2";
const PINNED = {
  "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
  "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
  "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
};
/** The commands that read a sentence model through `--model`. */
const TAKES_MODEL = new Set(["index", "merge", "embed"]);
/** The commands that write an index folder (`--out`). */
const WRITES = new Set(["index", "merge"]);

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

/** The value of `--name` in `args` (`--name value` or `--name=value`), and where it is. */
function option(args, name) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === name) return { value: args[i + 1], at: i, joined: false };
    if (args[i].startsWith(`${name}=`)) return { value: args[i].slice(name.length + 1), at: i, joined: true };
  }
  return null;
}

/** A native cairn binary to run instead of the WebAssembly one, if there is one. */
function nativeBinary() {
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
async function withModelFolder(args) {
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
 * process in the folder while the build runs; one left by a process that is gone is taken over. */
function holdFolder(out) {
  mkdirSync(out, { recursive: true });
  const path = join(out, ".cairn-lock-npm");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      process.on("exit", () => rmSync(path, { force: true }));
      return;
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
 * working folder passed in `CAIRN_CWD`; resolves to its exit code. */
async function runWasi(args) {
  const wasi = new WASI({
    version: "preview1",
    args: ["cairn", ...args],
    env: { ...process.env, CAIRN_CWD: process.cwd() },
    preopens: { "/": "/" },
    returnOnExit: true,
    fs,
    print: (text) => process.stdout.write(`${text}\n`),
    printErr: (text) => process.stderr.write(`${text}\n`),
  });
  const module = await WebAssembly.compile(readFileSync(join(here, "../cli/cairn.wasm")));
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
  return wasi.start(instance);
}

const args = process.argv.slice(2);
const binary = nativeBinary();
if (binary) {
  if (process.env.CAIRN_QUIET !== "1") process.stderr.write(`cairn: using the native binary ${binary}\n`);
  const run = spawnSync(binary, args, { stdio: "inherit" });
  if (run.error) fail(`cannot run ${binary}: ${run.error.message}`);
  process.exit(run.status ?? 1);
}
const command = args.find((a) => !a.startsWith("-"));
let argv = args;
if (TAKES_MODEL.has(command)) argv = await withModelFolder(args);
if (WRITES.has(command)) {
  const out = option(argv, "--out")?.value;
  if (out) holdFolder(resolve(out));
}
process.exitCode = await runWasi(argv);
