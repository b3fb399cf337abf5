#!/usr/bin/env bash
# Embedding throughput of `cairn index` beside onnxruntime, on the same chunks, in one run.
#
# For each collection (the five of ../shared/eval/, the Rust book's HTML that rustup installs,
# and a long-text set: the book's chunks of 200 tokens or more), `examples/bench_embed.rs` reads and chunks it as `cairn index` does,
# writes the chunk texts and embeds them (f32, then int8: `--arithmetic int8`); then `bench/embed_reference.py` embeds the very same
# texts with onnxruntime (the same weights exported to ONNX by `bench/export_onnx.py`, f32 and
# 8-bit, each text alone and in length-sorted batches of 32), both on 2 threads. Prints one
# JSON line a run, then a Markdown table.
#
# Usage: bench/embed.sh [CHUNKS_PER_COLLECTION]   (default 300; the first chunks of each)
# Needs: scripts/setup.sh, and once: python3 -m venv target/bench-venv &&
#   target/bench-venv/bin/pip install onnx onnxruntime tokenizers safetensors numpy
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-300}
model=models/all-MiniLM-L6-v2
tdir=${CARGO_TARGET_DIR:-target}
py=$tdir/bench-venv/bin/python
out=$tdir/bench-embed
mkdir -p "$out"
# The release profile, as `cairn index` ships (the dev profile's code ran the layers 20% slower).
cargo build --quiet --release --example bench_embed
[ -f $tdir/onnx/model.onnx ] || $py bench/export_onnx.py $model $tdir/onnx

book="$(dirname "$(rustup doc --path)")/book"
sets=(adi:../shared/eval/adi/corpus.jsonl cacm:../shared/eval/cacm/corpus.jsonl
      cisi:../shared/eval/cisi/corpus.jsonl cranfield:../shared/eval/cranfield/corpus.jsonl
      med:../shared/eval/med/corpus.jsonl)
[ -d "$book" ] && sets+=("rust-book:$book" "rust-book-long:$book")
results=$out/results.jsonl
: > "$results"
for set in "${sets[@]}"; do
  name=${set%%:*}; input=${set#*:}
  texts=$out/$name.texts.jsonl
  long=0; [ "${name%-long}" != "$name" ] && long=200
  $tdir/release/examples/bench_embed $model "$texts" "$input" --limit "$limit" --min-tokens $long |
    sed "s/^{/{\"set\":\"$name\",/" | tee -a "$results"
  for run in "model.onnx --batch 1" "model.onnx --batch 32" "model_q8.onnx --batch 32"; do
    read -r file batch n <<<"$run"
    $py bench/embed_reference.py $tdir/onnx/$file $model/tokenizer.json "$texts" --threads 2 $batch $n |
      sed "s/^{/{\"set\":\"$name\",/" | tee -a "$results"
  done
done

$py - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| set | engine | chunks | tokens/chunk | chunks/s | tokens/s | CPU | peak MB | cairn ÷ this | cairn int8 ÷ this |")
print("|---|---|---|---|---|---|---|---|---|---|")
cairn = {r["set"]: r for r in rows if r["engine"] == "cairn"}
int8 = {r["set"]: r for r in rows if r["engine"] == "cairn int8"}
for r in rows:
    c, q = cairn[r["set"]], int8[r["set"]]
    cosine = f' (cosine to f32 ≥ {r["min_cosine_to_f32"]:.4f})' if r["engine"] == "cairn int8" else ""
    print(f'| {r["set"]} | {r["engine"]}{cosine} | {r["chunks"]} | {r["tokens"] / r["chunks"]:.0f} | '
          f'{r["chunks_per_second"]:.1f} | {r["tokens_per_second"]:.0f} | {r["cpu_utilisation"]:.2f} | '
          f'{r["peak_rss_mb"]:.0f} | {c["chunks_per_second"] / r["chunks_per_second"]:.2f} | '
          f'{q["chunks_per_second"] / r["chunks_per_second"]:.2f} |')
EOF
