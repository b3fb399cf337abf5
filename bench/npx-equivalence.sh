#!/usr/bin/env bash
# The npm package's indexer (`npx cairn-search`, WASI under Node, on both cores) against the
# native CLI on the five collections in ../shared/eval/: lexical index bytes (a --no-embed build
# of each, compared with cmp), the chunk vectors (lowest and median cosine), the hybrid top 10 of
# every query (how many queries differ), and nDCG@10 of each build.
#
# Usage: bench/npx-equivalence.sh [COLLECTIONS...]   (default: adi cacm cisi cranfield med)
# Needs: scripts/build-pkg.sh (pkg/cli/cairn.wasm) and models/all-MiniLM-L6-v2.
set -euo pipefail
cd "$(dirname "$0")/.."
eval_dir=../shared/eval
out=target/bench-npx-equivalence
rm -rf "$out" && mkdir -p "$out"
cargo build --quiet --release --bin cairn --example compare_vectors
collections=("$@"); [ ${#collections[@]} -gt 0 ] || collections=(adi cacm cisi cranfield med)
printf '| collection | lexical bytes | vectors (cosine) | hybrid top 10 | nDCG@10 native | nDCG@10 npx | npx seconds |\n|---|---|---|---|---|---|---|\n'
for c in "${collections[@]}"; do
  corpus=$eval_dir/$c/corpus.jsonl
  for who in native npx; do
    cmd=(target/release/cairn); [ $who = npx ] && cmd=(node pkg/bin/cairn.mjs)
    "${cmd[@]}" index "$corpus" --no-embed --layout single --out "$out/$c-$who-lexical" >/dev/null 2>&1
    start=$(date +%s.%N)
    CAIRN_THREADS=2 "${cmd[@]}" index "$corpus" --model models/all-MiniLM-L6-v2 --layout single --out "$out/$c-$who" >"$out/$c-$who.log" 2>&1
    echo "$(date +%s.%N) - $start" | bc > "$out/$c-$who.seconds"
    target/release/cairn search "$out/$c-$who" --queries "$eval_dir/$c/queries.jsonl" --limit 10 --json \
      | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n").filter(Boolean)){const r=JSON.parse(l);console.log(JSON.stringify((r.hits??r).map(h=>h.id)))}})' > "$out/$c-$who.top10"
    target/release/cairn eval "$out/$c-$who" --queries "$eval_dir/$c/queries.jsonl" --qrels "$eval_dir/$c/qrels/test.tsv" --json > "$out/$c-$who.eval"
  done
  lexical=$(cmp -s "$out/$c-native-lexical/index.cairn" "$out/$c-npx-lexical/index.cairn" && echo identical || echo DIFFER)
  vectors=$(target/release/examples/compare_vectors "$out/$c-native/index.cairn" "$out/$c-npx/index.cairn")
  differ=$(diff <(cat "$out/$c-native.top10") <(cat "$out/$c-npx.top10") | grep -c '^<' || true)
  total=$(wc -l < "$out/$c-native.top10")
  ndcg() { node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(r.ndcgAt10.toFixed(4))' "$1"; }
  printf '| %s | %s | %s | %s of %s queries differ | %s | %s | %s |\n' "$c" "$lexical" "$vectors" "$differ" "$total" \
    "$(ndcg "$out/$c-native.eval")" "$(ndcg "$out/$c-npx.eval")" "$(printf '%.0f' "$(cat "$out/$c-npx.seconds")")"
done
