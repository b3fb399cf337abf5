// The first answers on a slow link, with and without the model given: Debian's headless
// Chromium opens an index through the `Cairn` client (in its worker) from a server that adds a
// round trip to every response and sends every body through one shared link of a set rate
// (scripts/serve.mjs `delay`, `rate`), then searches at once, as a reader who types straight
// away, and again for each later query. Prints, for each setting: the time from `Cairn.open` to
// the first answer and the bytes sent until then, the later queries' time (median), and when the
// model was ready. A fresh browser context each time: nothing cached.
//
//   node bench/throttled.mjs [INDEX_DIR] [MBIT_S] [RTT_MS]   (default: www/index, 10, 40)
//
// Needs `scripts/build-pkg.sh` and an index built with the model (scripts/build-demo-index.sh).
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { launchChromium } from "../tests/node/helpers.mjs";

const root = resolve(new URL("..", import.meta.url).pathname);
const dir = resolve(process.argv[2] ?? `${root}/www/index`);
const mbit = Number(process.argv[3] ?? 10);
const rtt = Number(process.argv[4] ?? 40);
const entry = existsSync(join(dir, "meta.cairn")) ? "meta.cairn" : "index.cairn";
const queries = ["how do I install it", "search without a server", "highlight offsets", "typo tolerance", "embedding model in the browser", "filter by tag"];

const blank = mkdtempSync(join(tmpdir(), "cairn-blank-"));
writeFileSync(join(blank, "blank.html"), "<!doctype html><title>blank</title>");
const server = await serve(0, [["/bench/", dir], ["/blank/", blank]], { gzip: true, delay: rtt, rate: (mbit * 1e6) / 8 });
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
const kB = (n) => `${(n / 1000).toFixed(0)} kB`;
console.log(`${dir}/${entry}: ${mbit} Mbit/s, ${rtt} ms a round trip, gzip; ${queries.length} queries`);
console.log("| model | first answer | responses begun before it | later queries (median) | model ready after |\n|---|---|---|---|---|");
for (const model of [false, true]) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/blank/blank.html`);
  const from = server.log.length;
  let marked = from;
  await page.exposeFunction("markFirstAnswer", () => (marked = server.log.length));
  const t = await page.evaluate(
    async ({ queries, model, entry }) => {
      const { Cairn } = await import("/pkg/client.js");
      const t0 = performance.now();
      let ready = null;
      const cairn = await Cairn.open({ index: `/bench/${entry}`, model: model ? "/bench/model" : undefined, onModelReady: () => (ready = performance.now() - t0) });
      await cairn.search(queries[0], { limit: 10 });
      const first = performance.now() - t0;
      await window.markFirstAnswer();
      const later = [];
      for (const q of queries.slice(1)) {
        const t1 = performance.now();
        await cairn.search(q, { limit: 10 });
        later.push(performance.now() - t1);
      }
      if (model) while (ready === null && performance.now() - t0 < 300_000) await new Promise((ok) => setTimeout(ok, 100));
      return { first, later, ready };
    },
    { queries, model, entry },
  );
  // The bodies of the responses begun before the first answer (some may not have been sent whole).
  const sent = server.log.slice(from, marked).reduce((n, r) => n + r.bytes, 0);
  const median = [...t.later].sort((a, b) => a - b)[Math.floor(t.later.length / 2)];
  console.log(`| ${model ? "given" : "not given"} | ${t.first.toFixed(0)} ms | ${kB(sent)} | ${median.toFixed(0)} ms | ${t.ready === null ? "–" : `${(t.ready / 1000).toFixed(1)} s`} |`);
  await context.close();
}
await browser.close();
server.close();
