// Writes a small random XLM-R-shaped sentence model in the layout sentence-transformers saves
// (config.json of an XLMRobertaModel, a SentencePiece-style Unigram tokenizer.json, unprefixed
// model.safetensors, mean pooling), another width and depth than all-MiniLM-L6-v2's, for tests
// of models a user brings. Beside it, reference.json: a few texts, the ids the tokenizer must
// give them and the vectors an XLMRobertaModel computes from these weights (by the forward pass
// below, written from the Hugging Face model's definition), and the vectors it would give with
// BERT's position ids instead, which a test can tell apart.
//
//   node tests/tiny-xlmr.mjs <out-dir> [--seed N]
//
// The weights are seeded noise: the vectors mean little, but are the same on every run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encoderTensors, safetensors } from './tiny-cross-encoder.mjs';

export const SHAPE = { hidden: 64, layers: 3, heads: 4, intermediate: 128, positions: 130, vocab: 1024 };
const PAD = 1;
const SPECIALS = ['<s>', '<pad>', '</s>', '<unk>'];

// Whole-word pieces (English, German and French words of the test fixtures and of everyday
// text); any other word is spelt from single characters.
const WORDS = `the a an of and or to in on for with by from is are was be it this that as at not
cairn cairns stone stones trail trails path paths mountain mountains valley river lake water snow
ice rock rocks summit ridge pass map maps walk walker walkers hike hiking build built builder
search index query queries page pages site document documents text word words meaning find found
house houses garden tree trees forest bird birds light night day weather rain wind cold warm
der die das und ist ein eine mit für von zu den im nicht Haus Häuser Garten Baum Berg Weg Stein
le la les et est un une des du pour dans avec pas maison jardin arbre montagne chemin pierre
marker markers guide guides mark marks pile piles route routes fog sign signs`.split(/\s+/);

export function writeTinyXlmr(dir, { seed = 7 } = {}) {
  const { hidden: H, layers: L, heads, intermediate: I, positions: P, vocab: V } = SHAPE;
  const pieces = [...SPECIALS.map((t) => [t, 0])];
  WORDS.forEach((w, i) => pieces.push([`▁${w}`, -4 - i / 1000]));
  const chars = [...new Set([...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789äöüßéèêàçâîôû.,;:!?\'"()-/'])];
  const words = new Set(WORDS);
  for (const c of chars) pieces.push(...(words.has(c) ? [] : [[`▁${c}`, -9]]), [c, -10]);
  if (pieces.length > V) throw new Error('the vocabulary outgrew the config');
  const id = new Map(pieces.map(([p], i) => [p, i]));
  const score = new Map(pieces);

  const config = {
    architectures: ['XLMRobertaModel'], model_type: 'xlm-roberta',
    vocab_size: V, hidden_size: H, num_hidden_layers: L, num_attention_heads: heads,
    intermediate_size: I, hidden_act: 'gelu', hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1, max_position_embeddings: P, type_vocab_size: 1,
    initializer_range: 0.02, layer_norm_eps: 1e-5, pad_token_id: PAD, bos_token_id: 0,
    eos_token_id: 2, position_embedding_type: 'absolute',
  };
  const special = (content, i) => ({ id: i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const token = (t) => ({ SpecialToken: { id: t, type_id: 0 } });
  const sequence = (s) => ({ Sequence: { id: s, type_id: 0 } });
  const metaspace = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  const tokenizer = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: SPECIALS.map(special),
    normalizer: { type: 'NFKC' },
    pre_tokenizer: metaspace,
    post_processor: {
      type: 'TemplateProcessing',
      single: [token('<s>'), sequence('A'), token('</s>')],
      pair: [token('<s>'), sequence('A'), token('</s>'), token('</s>'), sequence('B'), token('</s>')],
      special_tokens: {
        '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] },
        '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] },
      },
    },
    decoder: metaspace,
    model: { type: 'Unigram', unk_id: 3, vocab: pieces, byte_fallback: false },
  };

  const tensors = encoderTensors({ prefix: '', vocab: V, positions: P, types: 1, hidden: H, intermediate: I, layers: L, embeddingStd: 0.1, biasStd: 0.02 });
  const { bytes, data, parameters } = safetensors(tensors, seed);

  // The weights by name, for the reference forward pass.
  const w = {};
  let at = 0;
  for (const [name, shape] of tensors) {
    const n = shape.reduce((a, b) => a * b, 1);
    w[name] = data.subarray(at, at + n);
    at += n;
  }
  const texts = [
    'the stone cairn marks the trail',
    'Häuser und Garten',
    'a walker finds the path in fog',
    'zyx qwv',
  ];
  const reference = texts.map((text) => {
    const ids = [0, ...text.split(' ').flatMap((word) => spell(word, id, score)), 2];
    return { text, ids, embedding: embed(w, ids, PAD + 1), bertPositions: embed(w, ids, 0) };
  });

  mkdirSync(join(dir, '1_Pooling'), { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(join(dir, 'model.safetensors'), bytes);
  writeFileSync(join(dir, 'modules.json'), JSON.stringify([
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
  ]));
  writeFileSync(join(dir, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: P - PAD - 1, do_lower_case: false }));
  writeFileSync(join(dir, '1_Pooling/config.json'), JSON.stringify({ word_embedding_dimension: H, pooling_mode_mean_tokens: true }));
  writeFileSync(join(dir, 'reference.json'), JSON.stringify({ shape: SHAPE, texts: reference }));
  return { dir, parameters, pieces: pieces.length };
}

/** A word's ids as the Unigram model cuts it: the pieces of "▁word" whose scores sum highest
 * (Viterbi), a character without a piece as <unk>. */
function spell(word, id, score) {
  const chars = [...`▁${word}`];
  const best = [{ score: 0, ids: [] }];
  for (let end = 1; end <= chars.length; end++) {
    best[end] = { score: best[end - 1].score - 100, ids: [...best[end - 1].ids, 3] };
    for (let start = 0; start < end; start++) {
      const piece = chars.slice(start, end).join('');
      if (!id.has(piece)) continue;
      const total = best[start].score + score.get(piece);
      if (total > best[end].score) best[end] = { score: total, ids: [...best[start].ids, id.get(piece)] };
    }
  }
  return best[chars.length].ids;
}

/** XLMRobertaModel's last hidden state for `ids`, mean-pooled and normalized, with positions
 * numbered from `first` (pad_token_id + 1 for XLM-R, 0 for BERT). */
function embed(w, ids, first) {
  const { hidden: H, layers: L, heads, intermediate: I } = SHAPE;
  const T = ids.length;
  const row = (table, r) => table.subarray(r * H, (r + 1) * H);
  let x = ids.map((t, i) => {
    const v = new Float64Array(H);
    const [a, b, c] = [row(w['embeddings.word_embeddings.weight'], t), row(w['embeddings.position_embeddings.weight'], first + i), row(w['embeddings.token_type_embeddings.weight'], 0)];
    for (let k = 0; k < H; k++) v[k] = a[k] + b[k] + c[k];
    return v;
  });
  const norm = (xs, p) => xs.map((v) => {
    const mean = v.reduce((s, y) => s + y, 0) / v.length;
    const variance = v.reduce((s, y) => s + (y - mean) ** 2, 0) / v.length;
    const scale = 1 / Math.sqrt(variance + 1e-5);
    return v.map((y, k) => (y - mean) * scale * w[`${p}.weight`][k] + w[`${p}.bias`][k]);
  });
  const linear = (xs, p, out) => xs.map((v) => {
    const y = new Float64Array(out);
    const W = w[`${p}.weight`];
    for (let o = 0; o < out; o++) {
      let s = w[`${p}.bias`][o];
      for (let k = 0; k < v.length; k++) s += W[o * v.length + k] * v[k];
      y[o] = s;
    }
    return y;
  });
  const add = (a, b) => a.map((v, i) => v.map((y, k) => y + b[i][k]));
  x = norm(x, 'embeddings.LayerNorm');
  const d = H / heads;
  for (let l = 0; l < L; l++) {
    const p = `encoder.layer.${l}`;
    const [q, k, v] = ['query', 'key', 'value'].map((m) => linear(x, `${p}.attention.self.${m}`, H));
    const context = x.map(() => new Float64Array(H));
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < T; i++) {
        const scores = k.map((kj) => {
          let s = 0;
          for (let e = h * d; e < (h + 1) * d; e++) s += q[i][e] * kj[e];
          return s / Math.sqrt(d);
        });
        const top = Math.max(...scores);
        const exp = scores.map((s) => Math.exp(s - top));
        const sum = exp.reduce((a, b) => a + b, 0);
        for (let j = 0; j < T; j++) {
          for (let e = h * d; e < (h + 1) * d; e++) context[i][e] += (exp[j] / sum) * v[j][e];
        }
      }
    }
    const attended = norm(add(linear(context, `${p}.attention.output.dense`, H), x), `${p}.attention.output.LayerNorm`);
    const inner = linear(attended, `${p}.intermediate.dense`, I).map((v) => v.map((y) => 0.5 * y * (1 + erf(y / Math.SQRT2))));
    x = norm(add(linear(inner, `${p}.output.dense`, H), attended), `${p}.output.LayerNorm`);
  }
  const mean = new Float64Array(H);
  for (const v of x) for (let k = 0; k < H; k++) mean[k] += v[k] / T;
  const length = Math.hypot(...mean);
  return [...mean].map((y) => y / length);
}

/** erf to about 1e-7 (Abramowitz and Stegun 7.1.26). */
function erf(x) {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x < 0 ? -y : y;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--seed');
  const seed = at < 0 ? 7 : Number(args.splice(at, 2)[1]);
  if (args.length !== 1 || !Number.isInteger(seed)) {
    console.error('usage: node tests/tiny-xlmr.mjs <out-dir> [--seed N]');
    process.exit(2);
  }
  const made = writeTinyXlmr(args[0], { seed });
  console.log(`${made.dir}: XLM-R-shaped, ${made.pieces} Unigram pieces, ${made.parameters} parameters`);
}
