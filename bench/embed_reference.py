"""Reference embedding runtime for benchmarks: onnxruntime (CPU) on an ONNX sentence encoder.

Embeds chunk texts with an ONNX file made by bench/export_onnx.py (model.onnx, f32, or
model_q8.onnx, 8-bit weights) and prints one JSON line of throughput figures, to set cairn's
candle embedder against. With --check it also compares the vectors with cairn's.

Texts are tokenized with the `tokenizers` package from the model's tokenizer.json, truncated at
256 tokens (special tokens included), as cairn does and the model was trained; the file's own
padding setting is turned off. --batch 1 embeds each text alone (no padding); --batch N sorts the
texts by token length and pads each batch of N to its longest text. The session runs on the CPU
with intra_op_num_threads = --threads, one inter-op thread, graph optimizations ORT_ENABLE_ALL.

Only the embedding is timed (session.run calls plus building their input arrays): not reading
files, tokenizing, or creating the session. Over the same span it measures the process's CPU
time (time.process_time); cpu_utilisation = CPU seconds / wall seconds, so up to the thread
count. peak_rss_mb is the process's peak resident set (ru_maxrss) at the end, session and
tokenizer included. --warmup N (default 0) runs the first text N times, untimed, beforehand.

Set-up (once)
    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install onnx onnxruntime tokenizers safetensors numpy

Usage
    target/bench-venv/bin/python bench/embed_reference.py ONNX_FILE TOKENIZER_JSON TEXTS_JSONL \\
        [--threads 2] [--batch 1|32] [--warmup 0] [--check VECTORS_JSONL]

    TEXTS_JSONL: one JSON string a line. VECTORS_JSONL: one JSON array of floats a line, the same
    texts in the same order, as `cairn embed` prints them.

Output: one JSON line
    {"engine": "onnxruntime <version> <f32|q8> batch N", "chunks", "tokens" (real tokens,
     special included), "padded_fraction" (padding / all positions run), "seconds",
     "chunks_per_second", "tokens_per_second", "cpu_utilisation", "peak_rss_mb"}
    and with --check also "cosine_min" and "cosine_mean" (ORT against cairn, text by text).
"""

import argparse
import json
import os
import resource
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAX_TOKENS = 256


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def precision_of(session, path):
    meta = session.get_modelmeta().custom_metadata_map
    if "cairn.precision" in meta:
        return meta["cairn.precision"]
    name = os.path.basename(path).lower()
    return "q8" if any(tag in name for tag in ("q8", "quant", "int8", "uint8")) else "f32"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("onnx_file")
    parser.add_argument("tokenizer_json")
    parser.add_argument("texts_jsonl")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--check", metavar="VECTORS_JSONL")
    args = parser.parse_args()
    if args.batch < 1 or args.threads < 1:
        parser.error("--batch and --threads must be at least 1")

    texts = read_jsonl(args.texts_jsonl)
    if not texts or not all(isinstance(t, str) for t in texts):
        parser.error(f"{args.texts_jsonl} must hold one JSON string a line")

    tokenizer = Tokenizer.from_file(args.tokenizer_json)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    encodings = tokenizer.encode_batch(texts, add_special_tokens=True)
    ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
    types = [np.asarray(e.type_ids, dtype=np.int64) for e in encodings]
    lengths = [len(i) for i in ids]
    tokens = sum(lengths)

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.onnx_file, options, providers=["CPUExecutionProvider"])
    precision = precision_of(session, args.onnx_file)

    # Batches of text indices: each text alone, or sorted by length and cut into runs of N.
    if args.batch == 1:
        batches = [[i] for i in range(len(texts))]
    else:
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        batches = [order[s:s + args.batch] for s in range(0, len(order), args.batch)]
    positions = sum(len(b) * max(lengths[i] for i in b) for b in batches)

    def run(batch):
        width = max(lengths[i] for i in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        token_type_ids = np.zeros((len(batch), width), dtype=np.int64)
        attention_mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, i in enumerate(batch):
            n = lengths[i]
            input_ids[row, :n] = ids[i]
            token_type_ids[row, :n] = types[i]
            attention_mask[row, :n] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
        return session.run(["sentence_embedding"], feeds)[0]

    for _ in range(args.warmup):
        run([0])

    vectors = [None] * len(texts)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for batch in batches:
        out = run(batch)
        for row, i in enumerate(batch):
            vectors[i] = out[row]
    seconds = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux

    result = {
        "engine": f"onnxruntime {ort.__version__} {precision} batch {args.batch}",
        "chunks": len(texts),
        "tokens": tokens,
        "padded_fraction": round(1.0 - tokens / positions, 4),
        "seconds": round(seconds, 3),
        "chunks_per_second": round(len(texts) / seconds, 2),
        "tokens_per_second": round(tokens / seconds, 1),
        "cpu_utilisation": round(cpu / seconds, 3),
        "peak_rss_mb": round(peak_rss_mb, 1),
    }

    if args.check:
        reference = read_jsonl(args.check)
        if len(reference) != len(texts):
            raise SystemExit(f"{args.check} has {len(reference)} vectors for {len(texts)} texts")
        ours = np.stack(vectors).astype(np.float64)
        theirs = np.asarray(reference, dtype=np.float64)
        if theirs.shape != ours.shape:
            raise SystemExit(f"{args.check} vectors are {theirs.shape[1:]}, ours {ours.shape[1:]}")
        cos = (ours * theirs).sum(1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
        result["cosine_min"] = round(float(cos.min()), 6)
        result["cosine_mean"] = round(float(cos.mean()), 6)

    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
