#!/usr/bin/env python3
"""Generate reference sentence embeddings for all-MiniLM-L6-v2.

Independent of the Rust/candle implementation: tokenises with the HF
`tokenizers` Python package and runs the BERT forward pass in plain numpy
float64, then mean-pools over real tokens and L2-normalises, which is what
sentence-transformers does for this model.

Requirements: pip install numpy safetensors tokenizers

Usage (from repo root):
    python3 tests/data/make_reference_embeddings.py [MODEL_DIR]

MODEL_DIR defaults to models/all-MiniLM-L6-v2 and must hold
model.safetensors, tokenizer.json and config.json. Output is written to
tests/data/reference_embeddings.json.
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT_PATH = REPO_ROOT / "tests" / "data" / "reference_embeddings.json"
MAX_SEQ_LENGTH = 256  # sentence-transformers max_seq_length for this model

PARAGRAPH = (
    "Cairns are among the oldest and humblest structures built by people, "
    "little more than stones stacked one upon another, yet they have guided "
    "travellers across mountains for thousands of years. On a broad ridge "
    "wrapped in cloud, where every boulder looks like every other boulder and "
    "the path has faded into scree, a single well-built cairn can be the "
    "difference between a safe descent and a long, cold night spent lost. "
    "Walkers in Scotland, Norway, Iceland and the high Andes have all relied "
    "on them. Some cairns mark summits, standing proud on the highest point "
    "so that climbers know they have truly arrived; others mark passes, "
    "junctions, river crossings or the edge of a dangerous cliff. In many "
    "places there is a custom of adding a stone as you pass, so that a cairn "
    "grows slowly over generations, shaped by countless anonymous hands. "
    "Archaeologists also use the word for ancient burial mounds of piled "
    "rock, some of them older than the pyramids, which still crown hilltops "
    "across Europe. Modern land managers have a more complicated "
    "relationship with cairns. A proliferation of unofficial stacks can "
    "confuse route finding rather than help it, pulling hikers off the "
    "established trail and onto fragile alpine vegetation. Moving stones "
    "also disturbs the small creatures that shelter beneath them and "
    "accelerates erosion on thin mountain soils. For that reason, many "
    "national parks ask visitors not to build new cairns or knock down "
    "existing ones, leaving route marking to the rangers who maintain the "
    "paths. The best advice is simple: follow the cairns that are there, "
    "carry a map and compass, learn to read the terrain yourself, and leave "
    "the mountain as you found it, so that the next traveller finds the same "
    "quiet markers pointing the way home through the mist and over the "
    "rocky shoulder of the hill toward the valley far below."
)

SENTENCES = [
    "A man is eating food.",
    "The quick brown fox jumps over the lazy dog.",
    "How do I install the wasm32 target with rustup?",
    "Café naïve façade — résumé",
    "東京は日本の首都です。",
    "Search engines rank documents by relevance 🔍",
    PARAGRAPH,
]

_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    # exact (erf) GELU, as used by HF BERT "gelu"
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Bert:
    def __init__(self, model_dir: Path):
        cfg = json.loads((model_dir / "config.json").read_text())
        self.hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.layers = cfg["num_hidden_layers"]
        self.eps = cfg.get("layer_norm_eps", 1e-12)
        assert cfg.get("hidden_act", "gelu") == "gelu", cfg.get("hidden_act")
        raw = load_file(str(model_dir / "model.safetensors"))
        # accept both "bert.xxx" and "xxx" key layouts
        self.w = {
            (k[len("bert."):] if k.startswith("bert.") else k): v.astype(np.float64)
            for k, v in raw.items()
        }

    def p(self, name):
        return self.w[name]

    def linear(self, x, prefix):
        return x @ self.p(prefix + ".weight").T + self.p(prefix + ".bias")

    def forward(self, ids, type_ids, mask):
        """ids, type_ids, mask: 1-D int arrays of length T. Returns (T, H)."""
        T = len(ids)
        x = (
            self.p("embeddings.word_embeddings.weight")[ids]
            + self.p("embeddings.position_embeddings.weight")[np.arange(T)]
            + self.p("embeddings.token_type_embeddings.weight")[type_ids]
        )
        x = layer_norm(x, self.p("embeddings.LayerNorm.weight"),
                       self.p("embeddings.LayerNorm.bias"), self.eps)
        nh, hd = self.heads, self.hidden // self.heads
        # additive mask over keys: 0 for real tokens, large negative for padding
        add_mask = np.where(np.asarray(mask) > 0, 0.0, -1e9)[None, None, :]
        for i in range(self.layers):
            pre = f"encoder.layer.{i}"
            q = self.linear(x, pre + ".attention.self.query")
            k = self.linear(x, pre + ".attention.self.key")
            v = self.linear(x, pre + ".attention.self.value")
            q = q.reshape(T, nh, hd).transpose(1, 0, 2)  # (nh, T, hd)
            k = k.reshape(T, nh, hd).transpose(1, 0, 2)
            v = v.reshape(T, nh, hd).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd) + add_mask
            scores = scores - scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs = probs / probs.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(1, 0, 2).reshape(T, self.hidden)
            attn = self.linear(ctx, pre + ".attention.output.dense")
            x = layer_norm(attn + x, self.p(pre + ".attention.output.LayerNorm.weight"),
                           self.p(pre + ".attention.output.LayerNorm.bias"), self.eps)
            inter = gelu(self.linear(x, pre + ".intermediate.dense"))
            out = self.linear(inter, pre + ".output.dense")
            x = layer_norm(out + x, self.p(pre + ".output.LayerNorm.weight"),
                           self.p(pre + ".output.LayerNorm.bias"), self.eps)
        return x


def load_tokenizer(model_dir: Path) -> Tokenizer:
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json ships with truncation 128 + fixed padding 128; override to
    # match sentence-transformers (max_seq_length 256, no padding for 1 input).
    tok.no_padding()
    tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
    return tok


def embed(model: Bert, tok: Tokenizer, text: str):
    enc = tok.encode(text)
    ids = np.array(enc.ids, dtype=np.int64)
    type_ids = np.array(enc.type_ids, dtype=np.int64)
    mask = np.array(enc.attention_mask, dtype=np.float64)
    h = model.forward(ids, type_ids, mask)
    pooled = (h * mask[:, None]).sum(axis=0) / max(mask.sum(), 1e-9)
    emb = pooled / max(np.linalg.norm(pooled), 1e-12)
    return emb, len(enc.ids)


def main():
    model_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO_ROOT / "models" / "all-MiniLM-L6-v2"
    model = Bert(model_dir)
    tok = load_tokenizer(model_dir)
    tok_full = load_tokenizer(model_dir)
    tok_full.no_truncation()

    out = []
    for text in SENTENCES:
        if not text:
            continue
        emb, ntok = embed(model, tok, text)
        norm = float(np.linalg.norm(emb))
        assert abs(norm - 1.0) < 1e-9, norm
        full = len(tok_full.encode(text).ids)
        print(f"tokens={ntok:4d} (untruncated {full:4d}) norm={norm:.12f} text={text[:50]!r}")
        out.append({"text": text, "embedding": [round(float(v), 7) for v in emb]})

    # Sanity check against the published value (~0.75); not stored.
    a, _ = embed(model, tok, "A man is eating food.")
    b, _ = embed(model, tok, "A man is eating a piece of bread.")
    print(f"sanity cosine('A man is eating food.', 'A man is eating a piece of bread.') = {float(a @ b):.6f}")

    doc = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "method": (
            "HF tokenizers (tokenizer.json, truncation 256, no padding) + numpy float64 "
            "BERT forward pass (exact erf GELU, LayerNorm eps 1e-12), mean pooling over "
            "attention mask, L2 normalised; rounded to 7 decimals. "
            "Generated by tests/data/make_reference_embeddings.py"
        ),
        "sentences": out,
    }
    OUT_PATH.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT_PATH} ({len(out)} sentences)")


if __name__ == "__main__":
    main()
