// A small static server for the demo and the browser tests: www/ at /, wasm-pack's pkg/ at
// /pkg/, the project's Markdown (what the demo's hits link to) at /source/. Sends Content-Length (so downloads report progress) and the wasm MIME type.
// As a static host does, it answers `Range` requests (206) and can gzip text and wasm for
// clients that accept it; `server.log` records every response's path, status, body bytes (as sent) and range asked,
// for the tests and benchmarks that count what a search costs.
// Usage: node scripts/serve.mjs [port]   (port 0 picks a free one; the URL is printed)
import { createServer } from "node:http";
import { createSecureServer } from "node:http2";
import { gzipSync } from "node:zlib";
import { open, readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8", ".json": "application/json", ".wasm": "application/wasm", ".md": "text/plain; charset=utf-8",
  ".png": "image/png", ".svg": "image/svg+xml",
};

/** Bytes [start, end) of `file`. */
async function readRange(file, start, end) {
  const handle = await open(file);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(end - start), 0, end - start, start);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

const compressible = new Set([".html", ".js", ".mjs", ".css", ".json", ".wasm", ".md", ".svg"]);

/**
 * Serves www/ at / and pkg/ at /pkg/, plus `extra` mounts ([urlPrefix, folder] pairs).
 * Options: `ranges` (default true: answer Range requests), `gzip` (default false: compress text
 * and wasm for clients that accept it, as a static host does), `alter(path, body)` (a test's
 * hook: return other bytes to send, or null for a 404), `delay` (ms before each response starts:
 * a round trip) and `rate` (bytes a second through one link that every response shares, sent in
 * 16 KiB slices taken in turn, so two downloads get half each; a client that stops reading
 * stops taking the link, as TCP's flow control does). `tls` ({ key, cert }, PEM): serve HTTP/2
 * over TLS instead of HTTP/1.1 (a browser then multiplexes every request on one connection).
 */
export function serve(port = 0, extra = [], { ranges = true, gzip = false, alter = null, delay = 0, rate = 0, tls = null } = {}) {
  const log = [];
  let linkFree = 0; // when the link has sent every slice asked for so far
  const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
  /** Sends `body` through the link at `rate`, slice by slice, waiting while the client reads none. */
  async function send(res, body) {
    const SLICE = 16384;
    for (let at = 0; at < body.length; at += SLICE) {
      const slice = body.subarray(at, at + SLICE);
      const start = Math.max(performance.now(), linkFree);
      linkFree = start + (slice.length / rate) * 1000;
      await sleep(linkFree - performance.now());
      if (res.destroyed) return;
      if (!res.write(slice)) {
        await new Promise((ok) => {
          const go = () => (res.off("drain", go), res.off("close", go), ok());
          res.on("drain", go).on("close", go);
        });
      }
    }
    res.end();
  }
  const mounts = [...extra, ["/pkg/", join(root, "pkg")], ["/source/", root], ["/", join(root, "www")]];
  const handler = async (req, res) => {
    const at = performance.now(); // when the request came: rounds of requests are told apart by it
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return res.writeHead(400).end(); // a malformed escape
    }
    const [prefix, dir] = mounts.find(([p]) => path.startsWith(p));
    let file = normalize(join(dir, path.slice(prefix.length)));
    if (file !== dir && !file.startsWith(dir + sep)) return res.writeHead(403).end();
    // /source/ serves the project's Markdown only: the documents the demo's hits link to.
    if (prefix === "/source/" && (extname(file) !== ".md" || file.includes("node_modules"))) return res.writeHead(404).end();
    try {
      let info = await stat(file);
      if (info.isDirectory()) info = await stat((file = join(file, "index.html")));
      const range = ranges && req.headers.range?.match(/^bytes=(\d+)-(\d+)$/);
      // A range is read alone, as a static host serves it: reading the whole pack for each of a
      // query's ranges cost the benchmarks a millisecond a request.
      const alone = range && !alter;
      let body = alone ? null : await readFile(file);
      if (alter) body = await alter(path, body);
      if (!alone && body === null) throw new Error("gone");
      const size = body ? body.length : info.size;
      const headers = { "Content-Type": types[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff", "Accept-Ranges": ranges ? "bytes" : "none" };
      let status = 200;
      if (range) {
        const [start, end] = [Number(range[1]), Math.min(Number(range[2]), size - 1)];
        if (start > end) return res.writeHead(416, { "Content-Range": `bytes */${size}` }).end();
        headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
        body = body ? body.subarray(start, end + 1) : await readRange(file, start, end + 1);
        status = 206;
      } else if (gzip && compressible.has(extname(file)) && /\bgzip\b/.test(req.headers["accept-encoding"] ?? "")) {
        body = gzipSync(body, { level: 9 });
        headers["Content-Encoding"] = "gzip";
      }
      headers["Content-Length"] = body.length;
      log.push({ path, status, bytes: body.length, at, ...(range ? { range: req.headers.range } : {}) });
      if (delay) await sleep(delay);
      res.writeHead(status, headers);
      if (rate) await send(res, body);
      else res.end(body);
    } catch {
      log.push({ path, status: 404, bytes: 9, at });
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
    }
  };
  const server = tls ? createSecureServer({ ...tls }, handler) : createServer(handler);
  server.log = log;
  return new Promise((ok) => server.listen(port, "127.0.0.1", () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve(Number(process.argv[2] ?? 8080));
  console.log(`cairn demo: http://127.0.0.1:${server.address().port}/`);
}
