// The mutable index in Debian's headless Chromium (`Cairn.create`, in its worker, with the
// 8-bit model of a model folder `cairn index` wrote): the first records of a JSONL corpus added
// in one edit (all but 50), then in edits of 10 (a notes app adding as the user writes); chunks embedded a
// second, what one small edit costs once the index is large (it builds again from the chunks,
// embedding only new ones, and saves the whole file), a search's time, a removal's, the saved
// file's bytes, and the time to open it again after a reload.
//
//   node bench/mutable.mjs [MODEL_INDEX_DIR] [CORPUS_JSONL] [N]
//     (default: www/index, ../shared/eval/cacm/corpus.jsonl, 300)
//
// Needs `scripts/build-pkg.sh` and an index built with the model (scripts/build-demo-index.sh).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { serve } from "../scripts/serve.mjs";
import { launchChromium } from "../tests/node/helpers.mjs";

const root = resolve(new URL("..", import.meta.url).pathname);
const dir = resolve(process.argv[2] ?? `${root}/www/index`);
const corpus = resolve(process.argv[3] ?? `${root}/../shared/eval/cacm/corpus.jsonl`);
const n = Number(process.argv[4] ?? 300);
const documents = readFileSync(corpus, "utf8").split("\n").filter(Boolean).slice(0, n).map((line) => JSON.parse(line));

const server = await serve(0, [["/bench/", dir]]);
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
const page = await browser.newPage();
await page.goto(`${base}/`);
const result = await page.evaluate(async ({ documents }) => {
  const { Cairn } = await import("/pkg/client.js");
  const t = () => performance.now();
  let start = t();
  const cairn = await Cairn.create({ model: "/bench/model", store: "bench" });
  const open = t() - start;
  await cairn.remove(cairn.info.documentCount ? documents.map((d) => String(d._id ?? d.id)) : []);
  const half = Math.max(0, documents.length - 50); // the last 50 go in edits of 10
  start = t();
  const bulk = await cairn.add(documents.slice(0, half));
  const bulkMs = t() - start;
  const small = [];
  for (let i = half; i + 10 <= documents.length && small.length < 5; i += 10) {
    start = t();
    const report = await cairn.add(documents.slice(i, i + 10));
    small.push({ ms: t() - start, embedded: report.embedded, chunks: report.chunkCount });
  }
  const queries = documents.slice(0, 20).map((d) => d.title.split(/\s+/).slice(0, 4).join(" "));
  const times = [];
  for (const q of queries) {
    start = t();
    await cairn.search(q, { limit: 10 });
    times.push(t() - start);
  }
  start = t();
  const removed = await cairn.remove(documents.slice(0, 10).map((d) => String(d._id ?? d.id)));
  const removeMs = t() - start;
  const bytes = (await cairn.export()).length;
  cairn.close();
  start = t();
  const again = await Cairn.create({ model: "/bench/model", store: "bench" });
  const reopen = t() - start;
  const info = again.info;
  await again.remove(documents.map((d) => String(d._id ?? d.id)));
  return { open, bulk, bulkMs, small, times, removeMs, removed, bytes, reopen, info };
}, { documents });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(0)} ms`;
console.log(`the mutable index in Chromium (worker, 8-bit model), ${documents.length} records of ${corpus.split("/").slice(-2).join("/")}`);
console.log(`| step | result |\n|---|---|`);
console.log(`| open empty, with the model (cold cache) | ${ms(result.open)} |`);
console.log(`| add ${result.bulk.added} records in one edit | ${ms(result.bulkMs)}: ${result.bulk.embedded} chunks embedded, ${(result.bulk.embedded / (result.bulkMs / 1000)).toFixed(1)} chunks/s |`);
console.log(`| add 10 records to ${result.small[0]?.chunks - result.small[0]?.embedded} chunks (median of ${result.small.length}) | ${ms(median(result.small.map((s) => s.ms)))}: ${median(result.small.map((s) => s.embedded))} chunks embedded |`);
console.log(`| search, hybrid (median of ${result.times.length}) | ${ms(median(result.times))} |`);
console.log(`| remove 10 | ${ms(result.removeMs)} |`);
console.log(`| saved index file | ${(result.bytes / 1000).toFixed(1)} kB, ${result.removed.documentCount} documents, ${result.removed.chunkCount} chunks |`);
console.log(`| open it again (model from the Cache API) | ${ms(result.reopen)} |`);
await browser.close();
server.close();
