// What the site-generator integrations share (vite.mjs, astro.mjs, docusaurus.mjs): indexing a built site after
// its build, and serving the last build's index while the generator's dev server runs (the
// complaint of pagefind#14: search that works only in production).
import { cpSync, createReadStream, existsSync, mkdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { extname, join, normalize, resolve, sep } from "node:path";
import { createIndex } from "./indexer.mjs";

/**
 * Indexes the built site in `site` into `site/<out>` (`out`: "search" by default; the other
 * options are `createIndex`'s). `base`: the URL path the site is served under (the generator's
 * base, "/" by default), so hits link to "/guide/" from any page (a `baseUrl` option wins).
 * Resolves to `write`'s result; `log(line)` hears its messages and the summary.
 */
export async function indexSite(site, { out = "search", base = "/", log = () => {}, ...options } = {}) {
  const index = await createIndex({ baseUrl: base.replace(/\/?$/, "/"), ...options, onMessage: (line) => (options.onMessage ?? log)(line) });
  index.addDirectory(site);
  const wrote = await index.write(join(site, out));
  log(`cairn: ${wrote.message}`);
  return wrote;
}

/** Where `copyClient` puts the browser's runtime in a built site (`cairn-search/docusaurus`). */
export const CLIENT_DIR = "_cairn";

/** What a page's `<cairn-search>` loads: the element, the client and its worker, the three
 * modules they choose from (the index file's, the fragments', and the full one with the model),
 * and the stemmers of languages other than English. */
const CLIENT_FILES = ["element.js", "strings.js", "client.js", "worker.js", "fetch.js", "fragments.js", "mutable.js", "stem.js", "stem", "web", "web-core", "web-fragments"];

/** Copies the package's browser runtime into the folder `to` (made if missing; files of the
 * same names are replaced, nothing else is touched). */
export function copyClient(to) {
  mkdirSync(to, { recursive: true });
  for (const name of CLIENT_FILES) cpSync(fileURLToPath(new URL(name, import.meta.url)), join(to, name), { recursive: true });
}

const TYPES = { ".json": "application/json", ".cairn": "application/octet-stream", ".gguf": "application/octet-stream", ".safetensors": "application/octet-stream" };

/**
 * A Connect middleware (what Vite's dev server takes) that serves the files of `folder` under
 * the URL path `base` ("/search/"), with the Range requests a fragmented index and the model's
 * rows need; anything else goes to `next`.
 */
export function serveIndex(folder, base) {
  const root = resolve(folder);
  return (req, res, next) => {
    const path = decodeURIComponent(new URL(req.url, "http://dev").pathname);
    if (!path.startsWith(base) || !existsSync(root)) return next();
    const file = normalize(join(root, path.slice(base.length)));
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) return next();
    const size = statSync(file).size;
    const headers = { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", "Accept-Ranges": "bytes", "Cache-Control": "no-cache" };
    const range = req.headers.range?.match(/^bytes=(\d+)-(\d*)$/);
    if (range) {
      const start = Number(range[1]);
      const end = Math.min(range[2] ? Number(range[2]) : size - 1, size - 1);
      if (start > end) return res.writeHead(416, { "Content-Range": `bytes */${size}` }).end();
      res.writeHead(206, { ...headers, "Content-Range": `bytes ${start}-${end}/${size}`, "Content-Length": end - start + 1 });
      return createReadStream(file, { start, end }).pipe(res);
    }
    res.writeHead(200, { ...headers, "Content-Length": size });
    createReadStream(file).pipe(res);
  };
}
