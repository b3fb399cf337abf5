// Writes a small random cross-encoder in the Hugging Face BertForSequenceClassification layout
// (config.json, tokenizer.json, model.safetensors), for tests and cost benchmarks of the reranker.
//
//   node tests/tiny-cross-encoder.mjs <out-dir> [--shape tiny|minilm] [--seed N]
//
// or `import { writeTinyCrossEncoder } from './tiny-cross-encoder.mjs'`. The tokenizer is the real
// one of all-MiniLM-L6-v2 (models/all-MiniLM-L6-v2); the weights are seeded noise, so the scores
// mean nothing but are the same on every run.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TOKENIZER = fileURLToPath(new URL('../models/all-MiniLM-L6-v2/tokenizer.json', import.meta.url));

export const SHAPES = {
  tiny: { hidden: 32, layers: 2, heads: 2, intermediate: 64 },
  // The size of cross-encoder/ms-marco-MiniLM-L-6-v2.
  minilm: { hidden: 384, layers: 6, heads: 12, intermediate: 1536 },
};

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A safetensors file of `tensors` ([name, shape, init]: init a standard deviation, or 'one' /
 * 'zero'), filled from `seed`: its bytes, the values (Float32Array, in order) and their count. */
export function safetensors(tensors, seed) {
  if (endianness() !== 'LE') throw new Error('safetensors data is little-endian; this machine is not');
  const header = { __metadata__: { format: 'pt' } };
  let total = 0;
  for (const [name, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [total * 4, (total + n) * 4] };
    total += n;
  }
  const data = new Float32Array(total);
  const random = mulberry32(seed);
  let at = 0;
  for (const [, shape, init] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (init === 'one') data.fill(1, at, at + n);
    else if (typeof init === 'number') {
      // A sum of four uniforms, centred and scaled to unit variance: normal enough.
      const scale = init * Math.sqrt(3);
      for (let i = at; i < at + n; i++) data[i] = (random() + random() + random() + random() - 2) * scale;
    }
    at += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const bytes = Buffer.concat([length, Buffer.from(json), Buffer.from(data.buffer)]);
  return { bytes, data, parameters: total };
}

/** The tensors of a BERT-family encoder with its pooler, as [name, shape, init] (init a standard
 * deviation, or 'one' / 'zero'), under `prefix` ('bert.', or '' as sentence-transformers saves
 * an XLMRobertaModel). Dense layers get 1/sqrt(fan-in), not BERT's 0.02: at hidden 32, 0.02
 * leaves every text the same score ±2e-4. */
export function encoderTensors({ prefix, vocab, positions, types, hidden: H, intermediate: I, layers, embeddingStd = 0.02, biasStd = 'zero' }) {
  const tensors = [];
  const norm = (p) => tensors.push([`${p}.weight`, [H], 'one'], [`${p}.bias`, [H], 'zero']);
  const dense = (p, out, inp) => tensors.push([`${p}.weight`, [out, inp], 1 / Math.sqrt(inp)], [`${p}.bias`, [out], biasStd]);
  tensors.push(
    [`${prefix}embeddings.word_embeddings.weight`, [vocab, H], embeddingStd],
    [`${prefix}embeddings.position_embeddings.weight`, [positions, H], embeddingStd],
    [`${prefix}embeddings.token_type_embeddings.weight`, [types, H], 0.02],
  );
  norm(`${prefix}embeddings.LayerNorm`);
  for (let i = 0; i < layers; i++) {
    const l = `${prefix}encoder.layer.${i}`;
    for (const m of ['query', 'key', 'value']) dense(`${l}.attention.self.${m}`, H, H);
    dense(`${l}.attention.output.dense`, H, H);
    norm(`${l}.attention.output.LayerNorm`);
    dense(`${l}.intermediate.dense`, I, H);
    dense(`${l}.output.dense`, H, I);
    norm(`${l}.output.LayerNorm`);
  }
  dense(`${prefix}pooler.dense`, H, H);
  return tensors;
}

export function writeTinyCrossEncoder(dir, { shape = 'tiny', seed = 1 } = {}) {
  const s = SHAPES[shape];
  if (!s) throw new Error(`unknown shape ${shape}; use one of ${Object.keys(SHAPES).join(', ')}`);
  const vocab = 30522, positions = 512, types = 2, H = s.hidden, I = s.intermediate;
  const config = {
    architectures: ['BertForSequenceClassification'], model_type: 'bert',
    vocab_size: vocab, hidden_size: H, num_hidden_layers: s.layers, num_attention_heads: s.heads,
    intermediate_size: I, hidden_act: 'gelu', hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1, max_position_embeddings: positions, type_vocab_size: types,
    initializer_range: 0.02, layer_norm_eps: 1e-12, pad_token_id: 0,
    position_embedding_type: 'absolute', num_labels: 1,
    id2label: { 0: 'LABEL_0' }, label2id: { LABEL_0: 0 },
  };
  const tensors = encoderTensors({ prefix: 'bert.', vocab, positions, types, hidden: H, intermediate: I, layers: s.layers });
  tensors.push(['classifier.weight', [1, H], 0.5], ['classifier.bias', [1], 'zero']);

  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  copyFileSync(TOKENIZER, join(dir, 'tokenizer.json'));
  const { bytes, parameters } = safetensors(tensors, seed);
  writeFileSync(join(dir, 'model.safetensors'), bytes);
  return { dir, shape, seed, tensors: tensors.length, parameters };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const [value] = args.splice(i, 2).slice(1);
    if (value === undefined) throw new Error(`${name} needs a value`);
    return value;
  };
  const shape = option('--shape', 'tiny');
  const seed = Number(option('--seed', '1'));
  if (args.length !== 1 || !Number.isInteger(seed)) {
    console.error('usage: node tests/tiny-cross-encoder.mjs <out-dir> [--shape tiny|minilm] [--seed N]');
    process.exit(2);
  }
  const made = writeTinyCrossEncoder(args[0], { shape, seed });
  console.log(`${made.dir}: ${made.shape}, seed ${made.seed}, ${made.tensors} tensors, ${made.parameters} parameters`);
}
