// cairn beside Pagefind on one built site, in Chromium, as each one's search box queries it: a
// server adds a round trip to every response (HTTP/1.1 as a plain static host serves it, or
// HTTP/2 over TLS with `--http2`), and a fresh browser context opens each setting cold, then
// runs every query of a known-item list in turn (each one typed whole). For each it prints:
// rounds of requests a query (requests that arrive at the server together, a round apart),
// requests, bytes (the first query with the page's scripts and wasm, later queries' median and
// max), search time p50/p95 (later queries), and the share of queries whose expected page is
// first and in the first 10 pages.
//
//   node bench/pagefind.mjs SITE_DIR QUERIES_TSV [--rtt 40] [--http2] [--pages 5] [--only cairn-lexical,...]
//
// VERBOSE=1 prints each query's rank, rounds, requests, bytes and time; VERBOSE=2 also its
// requests as they came, and when its first request came and its answer after the last
// response was due (the client's own time).
//
// SITE_DIR: the built site, with Pagefind's index in pagefind/ (`npx pagefind --site SITE_DIR`)
// and cairn's in search/ (`cairn index SITE_DIR --out SITE_DIR/search`, the model in
// search/model). QUERIES_TSV: a query and its expected page (a path under SITE_DIR) a line.
// How each is asked, as its own search box does by default:
// - Pagefind (its Component UI): `search(query)`, then the data (title, excerpt, sub-results)
//   of the first 5 results;
// - cairn (`<cairn-search>`): `search(query, { limit: 20, maxDocuments: 5, maxPerDocument: 4,
//   highlight, snippetLength: 160, prefix, fuzzy, maxLinks: 0 })` (its 5 pages, `--pages` to
//   change, 3 sections each besides the page's best) through the Cairn client in its worker,
//   then the first 10 pages untimed, for the ranking only; lexical
//   (`mode: "lexical"`), hybrid with the static tier (no model given), and hybrid with the model
//   (queries timed once it is in).
// Needs `scripts/build-pkg.sh`, `pagefind` from npm (bench/README: `npm install pagefind@1`
// somewhere; PAGEFIND names its binary) and an index of each.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { launchChromium } from "../tests/node/helpers.mjs";

const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const [siteArg, queriesFile] = args.filter((a, i) => !a.startsWith("--") && !["--rtt", "--only", "--pages"].includes(args[i - 1]));
const site = resolve(siteArg);
const rtt = Number(flag("--rtt", 40));
const http2 = args.includes("--http2");
const pages = Number(flag("--pages", 5));
const only = flag("--only", "pagefind,cairn-lexical,cairn-static,cairn-model").split(",");
const queries = readFileSync(queriesFile, "utf8")
  .split("\n")
  .filter((l) => l.trim() && !l.startsWith("#"))
  .map((l) => {
    const [query, expected] = l.split("\t");
    return { query, expected: expected.trim() };
  });

const entry = existsSync(join(site, "search/meta.cairn")) ? "meta.cairn" : "index.cairn";
let tls = null;
const made = []; // the folders this run makes, removed at its end
if (http2) {
  const dir = mkdtempSync(join(tmpdir(), "cairn-tls-"));
  made.push(dir);
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", `${dir}/key.pem`, "-out", `${dir}/cert.pem`, "-days", "1", "-subj", "/CN=localhost"], { stdio: "ignore" });
  tls = { key: readFileSync(`${dir}/key.pem`), cert: readFileSync(`${dir}/cert.pem`) };
}
const blank = mkdtempSync(join(tmpdir(), "cairn-blank-"));
made.push(blank);
writeFileSync(join(blank, "blank.html"), "<!doctype html><meta charset=utf-8><title>blank</title>");
const server = await serve(0, [["/blank/", blank], ["/site/", site]], { gzip: true, delay: rtt, tls });
const base = `${http2 ? "https" : "http"}://127.0.0.1:${server.address().port}`;
const browser = await launchChromium(http2 ? ["--ignore-certificate-errors"] : []);

/** A page's path under the site, as the expected pages are written: no origin, no leading
 * slash or site prefix, no fragment, and a folder's index.html spelled out. */
const pagePath = (url) => {
  let p = decodeURI(new URL(url, `${base}/site/`).pathname).replace(/^\/site\//, "").replace(/^\//, "");
  if (p === "" || p.endsWith("/")) p += "index.html";
  return p;
};

/** Requests that arrive within half a round trip of the round's first are one round. */
const rounds = (log) => {
  let n = 0;
  let start = -Infinity;
  for (const r of [...log].sort((a, b) => a.at - b.at)) if (r.at - start > rtt / 2) (n += 1), (start = r.at);
  return n;
};

async function run(kind) {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  await page.goto(`${base}/blank/blank.html`);
  const opened = server.log.length;
  await page.evaluate(
    async ({ kind, entry, pages }) => {
      if (kind === "pagefind") {
        window.ask = async (query) => {
          window.pf ??= await import("/site/pagefind/pagefind.js");
          const found = await window.pf.search(query);
          const data = await Promise.all(found.results.slice(0, 5).map((r) => r.data()));
          // The next 5 pages are read after the search is timed, for the ranking only.
          window.rest = () => Promise.all(found.results.slice(5, 10).map(async (r) => (await r.data()).url));
          return data.map((d) => d.url);
        };
        return;
      }
      const { Cairn } = await import("/pkg/client.js");
      const model = kind === "cairn-model";
      let ready;
      const modelReady = new Promise((ok) => (ready = ok));
      window.cairn = await Cairn.open({ index: `/site/search/${entry}`, model: model ? "/site/search/model" : undefined, onModelReady: ready });
      if (model) {
        await window.cairn.search("warm up", { limit: 1 });
        await modelReady;
      }
      const options = { limit: pages * 4, maxDocuments: pages, maxPerDocument: 4, highlight: true, snippetLength: 160, prefix: true, fuzzy: true, maxLinks: 0, ...(kind === "cairn-lexical" ? { mode: "lexical" } : {}) };
      const pagesOf = (hits) => {
        const pages = [];
        for (const h of hits) if (!pages.includes(h.citation.url)) pages.push(h.citation.url);
        return pages.map((u) => u ?? "");
      };
      window.ask = async (query) => {
        const hits = await window.cairn.search(query, options);
        // The first 10 pages are read after the search is timed, for the ranking only.
        window.rest = async () => pagesOf(await window.cairn.search(query, { ...options, limit: 10, maxDocuments: 10, maxPerDocument: 1 }));
        return pagesOf(hits);
      };
    },
    { kind, entry, pages },
  );
  const rows = [];
  for (const { query, expected } of queries) {
    // The first query pays for the page's scripts and wasm and the index's opening too; not for
    // the model and the full module, which load in the background.
    const from = rows.length ? server.log.length : opened;
    const t0 = performance.now();
    const urls = await page.evaluate((q) => window.ask(q), query);
    const ms = performance.now() - t0;
    // The model's own files and the full module load in the background; the word rows of a
    // query's tokens (the model's p/) are the query's, and counted.
    const log = server.log.slice(from).filter((r) => !/\/search\/model\/(?!p\/)/.test(r.path) && !r.path.startsWith("/pkg/web/"));
    urls.push(...(await page.evaluate(() => window.rest())));
    const pages = [...new Set(urls.map(pagePath))];
    if (process.env.VERBOSE > 1) {
      const t = log[0]?.at ?? 0;
      if (log.length) console.error(`${query}: first request ${(log[0].at - t0).toFixed(0)} ms after the search began; answer ${(t0 + ms - Math.max(...log.map((r) => r.at)) - rtt).toFixed(0)} ms after the last response was due`);
      console.error(query, log.map((r) => `${(r.at - t).toFixed(0)}ms ${r.path.includes("/model/") ? "model " : ""}${r.path.split("/").pop().slice(0, 6)} ${r.range ?? ""} ${r.bytes}`).join("\n  "));
    }
    rows.push({ query, ms, requests: log.length, bytes: log.reduce((n, r) => n + r.bytes, 0), rounds: rounds(log), rank: pages.slice(0, 10).indexOf(expected) });
  }
  await context.close();
  return rows;
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const kB = (b) => (b / 1000).toFixed(1);
console.log(`${site}: ${queries.length} queries, ${rtt} ms a round trip, ${http2 ? "HTTP/2 (TLS)" : "HTTP/1.1"}; cairn's ${entry}`);
console.log("| search | p50 | p95 | rounds a query (median, max) | requests a query (mean) | first query | later queries (median, max) | expected page first | in the first 10 |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const kind of only) {
  const rows = await run(kind);
  const later = rows.slice(1);
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `| ${kind} | ${pct(later.map((r) => r.ms), 0.5).toFixed(0)} ms | ${pct(later.map((r) => r.ms), 0.95).toFixed(0)} ms | ${pct(later.map((r) => r.rounds), 0.5)}, ${Math.max(...later.map((r) => r.rounds))} | ${mean(later.map((r) => r.requests)).toFixed(1)} | ${kB(rows[0].bytes)} kB | ${kB(pct(later.map((r) => r.bytes), 0.5))}, ${kB(Math.max(...later.map((r) => r.bytes)))} kB | ${((100 * rows.filter((r) => r.rank === 0).length) / rows.length).toFixed(0)}% | ${((100 * rows.filter((r) => r.rank >= 0).length) / rows.length).toFixed(0)}% |`,
  );
  if (process.env.VERBOSE) for (const r of rows) console.error(kind, r.query, r.rank, r.rounds, r.requests, kB(r.bytes), r.ms.toFixed(0));
}
await browser.close();
server.close();
for (const dir of made) rmSync(dir, { recursive: true, force: true });
