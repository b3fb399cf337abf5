// The hostile host: a static server on 127.0.0.1 for the tests of a fragmented index's loader
// (tests/node/hostile-host.test.mjs, tests/browser/hostile-host.test.mjs). It serves folders as
// scripts/serve.mjs does (pkg/ at /pkg/, Range answered with 206), except that it answers the
// packs (`.../p/*.cairnpack`, `*.cairnrows`) as a misconfigured, broken or malicious host does,
// in a mode a test sets for every pack or for some paths, and changes while the page runs:
//
//   ok                      206 with the range asked (200 with the whole file to a plain GET)
//   no-ranges               200 with the whole file, whatever was asked
//   no-ranges-damaged       200 with the whole file, one byte of it changed
//   spa-fallback            200 with an HTML page, as a single-page app's host answers a path it lacks
//   truncated               206 (200 to a plain GET) with the first half of what was asked
//   truncated-whole         200 with the first half of the file, whatever was asked
//   cut-off                 206 whose Content-Length is the range's, then half of it, then the connection closes
//   oversized               206 (200 to a plain GET) claiming what was asked, then 300 MB streamed lazily
//   wrong-content-range     206 with the bytes asked and a Content-Range that says others
//   missing-content-range   206 with the bytes asked and no Content-Range
//   shifted                 206 with as many bytes from another offset, a Content-Range that claims the range asked
//   shifted-honest          the same bytes, with a Content-Range that says where they are from
//   stall                   nothing at all, until the client gives up or the host closes
//   stall-headers           the headers of a good answer, then nothing
//   404-once, 500-once      that status to a path's first request, then as ok
//   gzip-bomb               206 (200 to a plain GET) of the length asked: a fragment's slot whose
//                           gzip inflates a thousand times
//   gzip-bomb-lying         the same, its gzip trailer saying it inflates to 100 bytes
//   redirect                302 to the same file elsewhere on this origin (served as ok)
//   redirect-cross-origin   302 to the same file on a second origin (served as ok, with CORS headers)
//
// Every answer counts its requests and the bytes it sent (flushed to the socket, the body only)
// by mode, and in `log`. Each answer held open (stall, oversized) ends after `holdMs`; `close()`
// ends everything, and the host closes itself after `lifetimeMs` in any case.
// `searchRequests` says what a search asks of the host, so that a test can make only some
// packs hostile (a vector record's, a static row's).
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".wasm": "application/wasm", ".json": "application/json" };
export const MODES = [
  "ok", "no-ranges", "no-ranges-damaged", "spa-fallback", "truncated", "truncated-whole", "cut-off", "oversized",
  "wrong-content-range", "missing-content-range", "shifted", "shifted-honest", "stall", "stall-headers",
  "404-once", "500-once", "gzip-bomb", "gzip-bomb-lying", "redirect", "redirect-cross-origin",
];
export const SPA_PAGE = Buffer.from("<!doctype html><html><body><div id=app></div></body></html>\n");
/** What `oversized` sends at most, in chunks as long as the range asked (at least 1 kB), one a
 * millisecond: a client that reads it whole reads for minutes, one that stops early costs a few. */
const OVERSIZED = 300 << 20;
const isPack = (path) => /\/p\/[^/]+\.(cairnpack|cairnrows)$/.test(path);

/** `length` bytes that look like a fragment's slot (gzip, zeros, the slot's two-byte tail) and
 * whose gzip inflates to about a thousand times that (at most 64 MB): zeros, deflated at level
 * 9. `lying`: its trailer says it inflates to 100 bytes. */
const bombs = new Map();
function gzipBomb(length, lying = false) {
  if (!bombs.has(`${length} ${lying}`)) {
    let inflated = Math.min(64 << 20, Math.max(0, length - 40) * 1000);
    let gz = gzipSync(Buffer.alloc(inflated), { level: 9 });
    while (gz.length > length - 2 && inflated > 0) {
      inflated = Math.floor(inflated * 0.9);
      gz = gzipSync(Buffer.alloc(inflated), { level: 9 });
    }
    if (lying && gz.length >= 4) gz.writeUInt32LE(100, gz.length - 4);
    const slot = Buffer.alloc(length);
    gz.copy(slot, 0, 0, Math.min(gz.length, length));
    if (length >= 2) slot.writeUInt16LE(Math.min(0xffff, length - Math.min(gz.length, length - 2)), length - 2);
    bombs.set(`${length} ${lying}`, { slot, inflated });
  }
  return bombs.get(`${length} ${lying}`);
}

/**
 * Starts the host: `mounts` are [urlPrefix, folder] pairs, served besides pkg/ at /pkg/. Returns
 * { url, other (the second origin's URL), set(mode, paths?), counts, log, requests(mode),
 * bytes(mode), close() }. `set(mode)` puts every pack in `mode` (and forgets per-path modes);
 * `set(mode, paths)` puts only those URL paths in it.
 */
export async function hostileHost(mounts, { holdMs = 60_000, lifetimeMs = 15 * 60_000 } = {}) {
  const all = [...mounts, ["/pkg/", join(root, "pkg")]];
  let global = "ok";
  const byPath = new Map();
  const failedOnce = new Set(); // paths a *-once mode has failed already
  const counts = Object.fromEntries(MODES.map((m) => [m, { requests: 0, bytes: 0 }]));
  const log = [];
  const sockets = new Set();
  const timers = new Set();
  let other; // the second origin's base URL

  const later = (ms, f) => {
    const t = setTimeout(() => (timers.delete(t), f()), ms);
    timers.add(t);
    return t;
  };

  async function handle(req, res, cors) {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return res.writeHead(400).end();
    }
    // /moved/... is where `redirect` sends a pack: the same file, answered as ok.
    const moved = path.startsWith("/moved/");
    if (moved) path = path.slice("/moved".length);
    const mount = all.find(([prefix]) => path.startsWith(prefix));
    if (!mount) return res.writeHead(404).end();
    const [prefix, dir] = mount;
    const file = normalize(join(dir, path.slice(prefix.length)));
    if (!file.startsWith(dir + sep)) return res.writeHead(403).end();
    let body;
    try {
      body = await readFile(file);
    } catch {
      return res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
    }
    const mode = cors || moved || !isPack(path) ? "ok" : (byPath.get(path) ?? global);
    const entry = { path, mode, range: req.headers.range, status: 0, bytes: 0 };
    log.push(entry);
    counts[mode].requests += 1;
    const headers = { "Content-Type": types[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-cache", "Accept-Ranges": "bytes" };
    if (cors) Object.assign(headers, { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "Content-Range, Content-Length" });
    // Writes `chunk`, counting it once it is flushed to the socket.
    const send = (chunk) =>
      res.write(chunk, (error) => {
        if (!error) (entry.bytes += chunk.length), (counts[mode].bytes += chunk.length);
      });
    const answer = (status, bytes, extra = {}) => {
      entry.status = status;
      res.writeHead(status, { ...headers, "Content-Length": bytes.length, ...extra });
      send(bytes);
      res.end();
    };
    const m = req.headers.range?.match(/^bytes=(\d+)-(\d+)$/);
    const size = body.length;
    const [start, end] = m ? [Number(m[1]), Math.min(Number(m[2]), size - 1)] : [0, size - 1];
    if (m && start > end) return answer(416, Buffer.alloc(0), { "Content-Range": `bytes */${size}` });
    const asked = body.subarray(start, end + 1);
    const claimed = { "Content-Range": `bytes ${start}-${end}/${size}` };
    const ok = () => (m ? answer(206, asked, claimed) : answer(200, body));
    const once = (status) => {
      if (failedOnce.has(`${mode} ${path}`)) return ok();
      failedOnce.add(`${mode} ${path}`);
      answer(status, Buffer.from(`${status}\n`), { "Content-Type": "text/plain" });
    };
    switch (mode) {
      case "ok":
        return ok();
      case "no-ranges":
        return answer(200, body, { "Accept-Ranges": "none" });
      case "no-ranges-damaged": {
        const copy = Buffer.from(body);
        copy[copy.length >> 1] ^= 0xff;
        return answer(200, copy, { "Accept-Ranges": "none" });
      }
      case "spa-fallback":
        return answer(200, SPA_PAGE, { "Content-Type": "text/html; charset=utf-8" });
      case "truncated":
        return m ? answer(206, asked.subarray(0, asked.length >> 1), claimed) : answer(200, body.subarray(0, size >> 1));
      case "truncated-whole":
        return answer(200, body.subarray(0, size >> 1));
      case "cut-off":
        entry.status = m ? 206 : 200;
        res.writeHead(entry.status, { ...headers, ...(m ? claimed : {}), "Content-Length": asked.length });
        send(asked.subarray(0, asked.length >> 1));
        return later(20, () => res.destroy());
      case "wrong-content-range":
        return m ? answer(206, asked, { "Content-Range": `bytes ${start + 1}-${end + 1}/${size}` }) : ok();
      case "missing-content-range":
        return m ? answer(206, asked) : ok();
      case "shifted":
      case "shifted-honest": {
        if (!m) return ok();
        // As many bytes from the next range of that length, or the one before, or else the next
        // going round the file's end (so that records of a records pack are whole records of
        // others); from half-way when the range is the whole file.
        const length = end + 1 - start;
        const from = start + 2 * length <= size ? start + length : start >= length ? start - length : (start + (length < size ? length : Math.max(1, length >> 1))) % size;
        const twice = Buffer.concat([body, body]);
        const bytes = twice.subarray(from, from + length);
        return answer(206, bytes, mode === "shifted" ? claimed : { "Content-Range": `bytes ${from}-${from + length - 1}/${size}` });
      }
      case "stall":
        return later(holdMs, () => res.destroy());
      case "stall-headers":
        entry.status = m ? 206 : 200;
        res.writeHead(entry.status, { ...headers, ...(m ? claimed : {}), "Content-Length": asked.length });
        res.flushHeaders();
        return later(holdMs, () => res.destroy());
      case "404-once":
        return once(404);
      case "500-once":
        return once(500);
      case "gzip-bomb":
      case "gzip-bomb-lying": {
        const lying = mode === "gzip-bomb-lying";
        return m ? answer(206, gzipBomb(asked.length, lying).slot, claimed) : answer(200, gzipBomb(size, lying).slot);
      }
      case "redirect":
        entry.status = 302;
        return res.writeHead(302, { Location: `/moved${req.url}`, "Content-Length": 0 }).end();
      case "redirect-cross-origin":
        entry.status = 302;
        return res.writeHead(302, { Location: `${other}${req.url}`, "Content-Length": 0 }).end();
      case "oversized": {
        // What was asked, then filler, in chunks, one a millisecond while the client reads, until
        // 300 MB, `holdMs`, or the client goes. Its Content-Length says 300 MB (Chromium refuses
        // by itself a chunked 206 longer than its Content-Range, and so never shows the client
        // such a body).
        entry.status = m ? 206 : 200;
        res.writeHead(entry.status, { ...headers, ...(m ? claimed : {}), "Content-Length": OVERSIZED });
        const chunk = Math.max(1024, asked.length);
        const stream = Buffer.concat([asked, Buffer.alloc(chunk, 0x61)]);
        let sent = 0;
        const stop = later(holdMs, () => res.destroy());
        const next = () => {
          if (res.destroyed || res.writableEnded) return;
          if (sent >= OVERSIZED) return clearTimeout(stop), res.end();
          const at = sent % stream.length;
          const piece = stream.subarray(at, Math.min(at + chunk, stream.length));
          sent += piece.length;
          if (send(piece)) later(1, next);
          else res.once("drain", () => later(1, next));
        };
        return next();
      }
      default:
        throw new Error(`no mode ${mode}`);
    }
  }

  const listen = (cors) =>
    new Promise((ok) => {
      const server = createServer((req, res) =>
        handle(req, res, cors).catch((e) => {
          if (!res.headersSent) res.writeHead(500).end(String(e));
          else res.destroy();
        }),
      );
      server.on("connection", (socket) => {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      server.listen(0, "127.0.0.1", () => ok(server));
    });
  const servers = [await listen(false), await listen(true)];
  const [url, second] = servers.map((s) => `http://127.0.0.1:${s.address().port}`);
  other = second;

  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    for (const t of timers) clearTimeout(t);
    for (const s of servers) s.close();
    for (const socket of sockets) socket.destroy();
  };
  const end = setTimeout(close, lifetimeMs);
  end.unref();
  return {
    url,
    other,
    counts,
    log,
    set(mode, paths) {
      if (!MODES.includes(mode)) throw new Error(`no mode ${mode}`);
      failedOnce.clear();
      if (paths === undefined) {
        global = mode;
        byPath.clear();
      } else for (const p of [paths].flat()) byPath.set(p, mode);
    },
    close() {
      clearTimeout(end);
      close();
    },
  };
}

/**
 * { requests, hits }: every request (`FragmentRequest`) a search of the fragmented index in
 * `dir` makes, each answered from the files, and its hits: run with `FragmentedIndex` (the Node
 * build's) apart from the loader under test, to tell which packs hold what the search reads,
 * and what it should answer.
 */
export function searchRequests(FragmentedIndex, dir, query, options) {
  const index = FragmentedIndex.fromMeta(readFileSync(join(dir, "meta.cairn")));
  const requests = [];
  try {
    for (let round = 0; round < 18; round++) {
      const step = index.search(query, options);
      if (!step.need) return { requests, hits: step.hits };
      for (const r of step.need) {
        requests.push(r);
        const bytes = readFileSync(join(dir, "p", r.pack)).subarray(r.offset, r.offset + r.length);
        if (r.row !== undefined) index.addStaticRow(r.row, bytes);
        else if (r.record !== undefined) index.addRecord(r.fragment, r.record, bytes);
        else index.addFragment(r.fragment, bytes);
      }
    }
    throw new Error(`${query}: the search did not settle`);
  } finally {
    index.free();
  }
}
