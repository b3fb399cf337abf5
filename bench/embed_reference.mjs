// onnxruntime-node on an ONNX sentence encoder (bench/export_onnx.py's model.onnx or
// model_q8.onnx): the Node counterpart of bench/embed_reference.py, for bench/indexers.mjs.
// Embeds chunk texts each alone (no padding, as `cairn index` does), intra-op threads as given,
// and prints one JSON line: chunks, tokens, seconds (session.run and its inputs only: not
// reading, tokenizing or creating the session), chunks and tokens a second, peak RSS (MB).
// Texts are tokenized by @huggingface/tokenizers from the model's tokenizer.json, truncated at
// 256 tokens with the special tokens, as cairn does.
//
//   node bench/embed_reference.mjs NODE_MODULES ONNX_FILE TOKENIZER_JSON TEXTS_JSONL [THREADS]
//
// NODE_MODULES: a folder where `npm install --ignore-scripts onnxruntime-node
// @huggingface/tokenizers` ran (the install script fetches GPU libraries from NuGet, which this
// machine cannot reach; the CPU library is in the package).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, onnxFile, tokenizerJson, textsFile, threadsArg = "2"] = process.argv.slice(2);
if (!textsFile) throw new Error("usage: node bench/embed_reference.mjs NODE_MODULES ONNX_FILE TOKENIZER_JSON TEXTS_JSONL [THREADS]");
const require = createRequire(join(modules, "x.js"));
const ort = require("onnxruntime-node");
const { Tokenizer } = require("@huggingface/tokenizers");
const MAX_TOKENS = 256;

const texts = readFileSync(textsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const tokenizer = new Tokenizer(JSON.parse(readFileSync(tokenizerJson, "utf8")), {});
const encoded = texts.map((t) => {
  let ids = tokenizer.encode(t).ids;
  if (ids.length > MAX_TOKENS) ids = [...ids.slice(0, MAX_TOKENS - 1), ids.at(-1)];
  return ids;
});
const tokens = encoded.reduce((n, ids) => n + ids.length, 0);
const session = await ort.InferenceSession.create(onnxFile, {
  executionProviders: ["cpu"],
  intraOpNumThreads: Number(threadsArg),
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
});
const int64 = (values) => BigInt64Array.from(values, (v) => BigInt(v));
const started = performance.now();
for (const ids of encoded) {
  const shape = [1, ids.length];
  await session.run({
    input_ids: new ort.Tensor("int64", int64(ids), shape),
    attention_mask: new ort.Tensor("int64", int64(ids.map(() => 1)), shape),
    token_type_ids: new ort.Tensor("int64", new BigInt64Array(ids.length), shape),
  });
}
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({
  engine: `onnxruntime-node ${ort.env.versions.node} ${onnxFile.includes("q8") ? "q8" : "f32"}`,
  chunks: texts.length,
  tokens,
  seconds: Number(seconds.toFixed(3)),
  chunks_per_second: Number((texts.length / seconds).toFixed(2)),
  tokens_per_second: Number((tokens / seconds).toFixed(1)),
  peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
}));
