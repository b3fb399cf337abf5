// A small static server for the demo and the browser tests: www/ at /, wasm-pack's pkg/ at
// /pkg/, the project's Markdown (what the demo's hits link to) at /source/. Sends Content-Length (so downloads report progress) and the wasm MIME type.
// Usage: node scripts/serve.mjs [port]   (port 0 picks a free one; the URL is printed)
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8", ".json": "application/json", ".wasm": "application/wasm", ".md": "text/plain; charset=utf-8",
  ".png": "image/png", ".svg": "image/svg+xml",
};

/** Serves www/ at / and pkg/ at /pkg/, plus `extra` mounts ([urlPrefix, folder] pairs). */
export function serve(port = 0, extra = []) {
  const mounts = [...extra, ["/pkg/", join(root, "pkg")], ["/source/", root], ["/", join(root, "www")]];
  const server = createServer(async (req, res) => {
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
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, { "Content-Type": types[extname(file)] ?? "application/octet-stream", "Content-Length": body.length, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff" });
      res.end(body);
    } catch {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
    }
  });
  return new Promise((ok) => server.listen(port, "127.0.0.1", () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve(Number(process.argv[2] ?? 8080));
  console.log(`cairn demo: http://127.0.0.1:${server.address().port}/`);
}
