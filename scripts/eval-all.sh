#!/usr/bin/env bash
# Retrieval quality on every collection in ../shared/eval (BEIR layout), three modes.
# Builds one index per collection (with embeddings) under ${OUT:-target/eval}, then prints a
# Markdown table of nDCG@10, MRR@10 and recall@100. Usage: scripts/eval-all.sh [extra index flags]
# (COLLECTIONS="cisi med" picks collections; CAIRN names the binary.)
set -euo pipefail
cd "$(dirname "$0")/.."
eval_dir=${EVAL_DIR:-../shared/eval}
out=${OUT:-target/eval}
cairn=${CAIRN:-target/debug/cairn}
mkdir -p "$out"
echo "| collection | mode | nDCG@10 | MRR@10 | recall@100 |"
echo "|---|---|---|---|---|"
for c in ${COLLECTIONS:-cranfield cisi med cacm adi}; do
  [ -d "$eval_dir/$c" ] || continue
  $cairn index "$eval_dir/$c/corpus.jsonl" --out "$out/$c" --layout single "$@" >&2
  for mode in lexical semantic hybrid; do
    $cairn eval "$out/$c" --queries "$eval_dir/$c/queries.jsonl" --qrels "$eval_dir/$c/qrels/test.tsv" --mode $mode --json \
      | python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"| $c | $mode | {r['ndcgAt10']:.3f} | {r['mrrAt10']:.3f} | {r['recallAt100']:.3f} |\")"
  done
done
