// Shared by the Node and browser tests: paths, the native CLI, and index building.
import { execFileSync } from "node:child_process";
import { mkdtempSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const cli = join(root, "target/debug/cairn");
export const fixtures = join(root, "tests/fixtures/docs");
export const model = join(root, "models/all-MiniLM-L6-v2");
export const evalDir = resolve(root, "../shared/eval");

export function cairn(args, options = {}) {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run cargo build first`);
  return execFileSync(cli, args, { cwd: root, encoding: "utf8", maxBuffer: 1 << 28, ...options });
}

// Every temporary folder a test file makes is removed when its process ends (node --test runs
// each file in a process of its own), passed or failed: a run left about 1.2 GB in /tmp before.
const scratchFolders = [];
process.on("exit", () => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

/** A fresh temporary folder `cairn-<name>-XXXXXX`, removed when this test file's process ends. */
export function scratch(name) {
  const folder = mkdtempSync(join(tmpdir(), `cairn-${name}-`));
  scratchFolders.push(folder);
  return folder;
}

/** Builds an index of `inputs` into a fresh temporary folder and returns the folder. */
export function buildIndex(inputs, extra = []) {
  const out = scratch("test");
  cairn(["index", ...inputs, "--out", out, ...extra]);
  return out;
}

export function utf16Slice(text, start, end) {
  return text.slice(start, end);
}

export function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return dot / Math.sqrt(na * nb);
}

/** Debian's Chromium, headless, with the flags this machine's closed network and root need. */
export async function launchChromium(extraArgs = []) {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", ...extraArgs],
  });
}
