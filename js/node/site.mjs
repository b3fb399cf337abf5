// What the site-generator integrations share (vite.mjs, astro.mjs): indexing a built site after
// its build, and serving the last build's index while the generator's dev server runs (the
// complaint of pagefind#14: search that works only in production).
import { createReadStream, existsSync, statSync } from "node:fs";
import { extname, join, normalize, resolve, sep } from "node:path";
import { createIndex } from "./indexer.mjs";

/**
 * Indexes the built site in `site` into `site/<out>` (`out`: "search" by default; the other
 * options are `createIndex`'s). Resolves to `write`'s result; `log(line)` hears its messages
 * and the summary.
 */
export async function indexSite(site, { out = "search", log = () => {}, ...options } = {}) {
  const index = await createIndex({ ...options, onMessage: (line) => (options.onMessage ?? log)(line) });
  index.addDirectory(site);
  const wrote = await index.write(join(site, out));
  log(`cairn: ${wrote.message}`);
  return wrote;
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
