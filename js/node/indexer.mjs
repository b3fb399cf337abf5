// The Node API of the indexer (`cairn-search/indexer`), in the spirit of Pagefind's: collect the
// inputs (folders and files on disk, pages and records given in memory), then `write` runs
// `cairn index` on them (node/cli.mjs: the CLI as WebAssembly, or a native binary), so an index
// made here is the command line's, byte for byte, for the same inputs.
//
// Pages given in memory are laid out as a site in a temporary folder, each at the path its URL
// names (`/guide/` is guide/index.html); records go to a JSONL file there. Like the command
// line, one input folder is the root of its files' URLs, and with several each keeps its name
// (the in-memory pages' folder is called `pages`).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { CairnError, holdFolder, runIndex, withModelFolder } from "./cli.mjs";

export { CairnError };

/** The flags each option becomes. */
const FLAGS = {
  model: "--model", layout: "--layout", baseUrl: "--base-url", chunkWords: "--chunk-words", language: "--language",
  webWeights: "--web-weights", vectors: "--vectors", graphFrom: "--graph-from", arithmetic: "--arithmetic",
};
const SWITCHES = { noEmbed: "--no-embed", noStatic: "--no-static", summaries: "--summaries", allFiles: "--all-files", allowEmpty: "--allow-empty" };

/** A page's file under the site folder from its URL path: `/a/` → a/index.html, `/a/b` →
 * a/b.html, `/a/b.html` → a/b.html. Refuses a path that would leave the folder. */
function pagePath(url) {
  let path = decodeURIComponent(new URL(url, "http://site/").pathname).replace(/^\/+/, "");
  if (path === "" || path.endsWith("/")) path += "index.html";
  else if (!/\.html?$/i.test(path)) path += ".html";
  if (path.split("/").some((s) => s === ".." || s === "." || s === "")) {
    throw new CairnError(`the page URL ${JSON.stringify(url)} does not name a page under the site`);
  }
  return path;
}

class Index {
  #options;
  #inputs = [];
  #pages = new Map();
  #records = [];

  constructor(options) {
    this.#options = options;
  }

  /** A folder to index, as `cairn index <path>` reads it (a built site: its pages). */
  addDirectory(path) {
    this.#inputs.push(resolve(path));
  }

  /** A file to index (Markdown, HTML, text, PDF or JSONL). */
  addFile(path) {
    this.#inputs.push(resolve(path));
  }

  /** A page from memory: `url`, its path on the site (`/guide/install/`), and its HTML. */
  addHTMLFile({ url, content }) {
    if (typeof url !== "string" || typeof content !== "string") {
      throw new CairnError("addHTMLFile takes { url, content }, both strings");
    }
    const path = pagePath(url);
    if (this.#pages.has(path)) throw new CairnError(`the page ${url} was added twice`);
    this.#pages.set(path, content);
  }

  /** A record: `{ id, title, text, url, metadata, createdAt, updatedAt, author }`, as a line of
   * a JSONL input. */
  addRecord(record) {
    if (record === null || typeof record !== "object" || record.id === undefined) {
      throw new CairnError("addRecord takes an object with an id");
    }
    this.#records.push(JSON.stringify(record));
  }

  /** Writes the index into `out` (crash-safe, as the command line does) and returns what it
   * wrote: `{ documents, chunks, bytes, message, warnings }`, `message` being the command line's
   * summary line and `warnings` what it said of skipped inputs; for pages in several languages
   * (one index a language, under `out/<language>/`), the sums, and `languages` each one's. Throws a `CairnError` with the
   * command line's message when the build fails; the folder's previous index is then kept. */
  async write(out) {
    const scratch = mkdtempSync(join(tmpdir(), "cairn-index-"));
    try {
      const inputs = [...this.#inputs];
      if (this.#pages.size) {
        const site = join(scratch, "pages");
        for (const [path, content] of this.#pages) {
          mkdirSync(dirname(join(site, path)), { recursive: true });
          writeFileSync(join(site, path), content);
        }
        inputs.push(site);
      }
      if (this.#records.length) {
        const file = join(scratch, "records.jsonl");
        writeFileSync(file, this.#records.join("\n") + "\n");
        inputs.push(file);
      }
      if (!inputs.length) throw new CairnError("nothing to index: add a folder, a file, a page or a record first");
      const args = ["index", ...inputs, "--out", resolve(out)];
      for (const [key, flag] of Object.entries(FLAGS)) {
        if (this.#options[key] !== undefined) args.push(flag, String(this.#options[key]));
      }
      for (const [key, flag] of Object.entries(SWITCHES)) if (this.#options[key]) args.push(flag);
      for (const glob of this.#options.exclude ?? []) args.push("--exclude", glob);
      const release = holdFolder(resolve(out));
      const said = [];
      const lines = [];
      try {
        const code = await runIndex(await withModelFolder(args), {
          onProgress: this.#options.onProgress,
          print: (line) => lines.push(line),
          printErr: (line) => {
            said.push(line);
            this.#options.onMessage?.(line);
          },
        });
        const error = said.find((l) => l.startsWith("error: "));
        if (code !== 0) throw new CairnError(error?.slice(7) ?? `cairn index exited with ${code}`);
      } finally {
        release();
      }
      // One summary line, or one a language ("de/: indexed …") for a site in several.
      const summaries = lines.map((l) => /^(?:([a-z0-9-]+)\/: )?(indexed (\d+) documents, (\d+) chunks, (\d+) bytes.*)$/.exec(l)).filter(Boolean);
      const total = (i) => (summaries.length ? summaries.reduce((n, m) => n + Number(m[i]), 0) : NaN);
      const result = {
        documents: total(3),
        chunks: total(4),
        bytes: total(5),
        message: summaries.map((m) => m[0]).join("\n") || lines.join("\n"),
        warnings: said,
      };
      if (summaries.some((m) => m[1])) {
        result.languages = summaries.map((m) => ({ language: m[1], documents: Number(m[3]), chunks: Number(m[4]), bytes: Number(m[5]) }));
      }
      return result;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

/** An index to build: `options` are `cairn index`'s flags, camel-cased (`model`, `noEmbed`,
 * `noStatic`, `summaries`, `layout`, `baseUrl`, `chunkWords`, `allFiles`, `exclude`, …),
 * `onMessage(line)` hears what the command line says as it goes, and `onProgress({ stage, done,
 * total })` how far a stage ("reading" files, "embedding" chunks, on every thread) has got. */
export async function createIndex(options = {}) {
  return new Index(options);
}
