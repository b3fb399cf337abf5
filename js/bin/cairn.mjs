#!/usr/bin/env node
// `npx cairn-search <command> …`: the cairn command line from the npm package alone, no Rust
// toolchain (node/cli.mjs runs it). Exits with the CLI's status.
import { spawnSync } from "node:child_process";
import { isMainThread } from "node:worker_threads";
import { resolve } from "node:path";
import { CairnError, holdFolder, nativeBinary, option, runIndex, runWasi, withModelFolder } from "../node/cli.mjs";

/** The commands that read a sentence model through `--model`. */
const TAKES_MODEL = new Set(["index", "merge", "embed"]);
/** The commands that write an index folder (`--out`). */
const WRITES = new Set(["index", "merge"]);

// A reader that stops early (`| head`) ends the output, not the command with a stack trace.
if (isMainThread) process.stdout.on("error", (e) => {
  if (e.code !== "EPIPE") throw e;
  process.exit();
});

const args = process.argv.slice(2);
// This file is also each worker thread of a build on every core (node/cli.mjs runs there).
if (isMainThread) try {
  const binary = nativeBinary();
  if (binary) {
    if (process.env.CAIRN_QUIET !== "1") process.stderr.write(`cairn: using the native binary ${binary}\n`);
    const run = spawnSync(binary, args, { stdio: "inherit" });
    if (run.error) throw new CairnError(`cannot run ${binary}: ${run.error.message}`);
    process.exit(run.status ?? 1);
  }
  const command = args.find((a) => !a.startsWith("-"));
  let argv = args;
  if (TAKES_MODEL.has(command)) argv = await withModelFolder(args);
  if (WRITES.has(command)) {
    const out = option(argv, "--out")?.value;
    if (out) holdFolder(resolve(out));
  }
  process.exitCode = await (command === "index" ? runIndex(argv) : runWasi(argv));
} catch (e) {
  if (!(e instanceof CairnError)) throw e;
  process.stderr.write(`error: ${e.message}\n`);
  process.exitCode = 1;
}
