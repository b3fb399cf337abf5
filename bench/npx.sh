#!/usr/bin/env bash
# The npm package's indexer (`npx cairn-search index`: the CLI as WASI under Node) beside the
# native CLI, on the same documents in one run: seconds, chunks a second, the ratio, and peak
# memory (max RSS), for a lexical build and one with the model (the static tier and the
# browser's model written too, as a user's build does); then the browser's mutable index
# (bench/mutable.mjs) on the same records, with the model folder the native build wrote.
#
# Usage: bench/npx.sh [DOCUMENTS]   (default 300: the first records of ../shared/eval/cacm)
# Needs: scripts/build-pkg.sh (pkg/cli/cairn.wasm) and the native CLI (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300}
out=target/bench-npx
rm -rf "$out" && mkdir -p "$out"
head -n "$n" ../shared/eval/cacm/corpus.jsonl > "$out/docs.jsonl"
cargo build --quiet --release --bin cairn
printf '| build | indexer | seconds | chunks | chunks/s | max RSS (MB) |\n|---|---|---|---|---|---|\n'
for kind in lexical model; do
  extra=(); [ $kind = lexical ] && extra=(--no-embed)
  for who in native npx; do
    cmd=(target/release/cairn); [ $who = npx ] && cmd=(node pkg/bin/cairn.mjs)
    log=$out/$kind-$who.log
    /usr/bin/time -f '%M' -o "$out/rss" "${cmd[@]}" index "$out/docs.jsonl" --out "$out/$kind-$who" \
      --model models/all-MiniLM-L6-v2 "${extra[@]}" >"$log" 2>&1
    line=$(grep '^indexed' "$log")
    chunks=$(sed -E 's/.* documents, ([0-9]+) chunks.*/\1/' <<<"$line")
    seconds=$(sed -E 's/.* in ([0-9.]+) s.*/\1/' <<<"$line")
    rss=$(( $(cat "$out/rss") / 1024 ))
    printf '| %s | %s | %s | %s | %s | %s |\n' $kind $who "$seconds" "$chunks" \
      "$(awk -v c="$chunks" -v s="$seconds" 'BEGIN { printf "%.1f", c / s }')" "$rss"
  done
done
# The third indexer: the mutable index in Chromium, embedding with the 8-bit model in its worker.
node bench/mutable.mjs "$out/model-native" "$out/docs.jsonl" "$n"
