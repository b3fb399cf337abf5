#!/usr/bin/env bash
# nDCG@10 of each query encoder on every collection in ../shared/eval: lexical alone, then
# semantic and hybrid with the model and with the static tier (`"encoder": "static"`). Reuses the
# indexes scripts/eval-all.sh writes under ${OUT:-target/eval} (builds any that are missing).
# Usage: scripts/eval-encoders.sh   (COLLECTIONS="cisi med" picks collections)
set -euo pipefail
cd "$(dirname "$0")/.."
eval_dir=${EVAL_DIR:-../shared/eval}
out=${OUT:-target/eval}
cairn=${CAIRN:-target/debug/cairn}
ndcg() {
  $cairn eval "$out/$1" --queries "$eval_dir/$1/queries.jsonl" --qrels "$eval_dir/$1/qrels/test.tsv" --mode "$2" --options "$3" --json \
    | python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["ndcgAt10"])'
}
echo "| collection | lexical | semantic, model | semantic, static | static / model | hybrid, model | hybrid, static |"
echo "|---|---|---|---|---|---|---|"
for c in ${COLLECTIONS:-cranfield cisi med cacm adi}; do
  [ -d "$eval_dir/$c" ] || continue
  [ -f "$out/$c/index.cairn" ] || $cairn index "$eval_dir/$c/corpus.jsonl" --out "$out/$c" >&2
  lex=$(ndcg $c lexical '{}')
  sm=$(ndcg $c semantic '{"encoder": "model"}')
  ss=$(ndcg $c semantic '{"encoder": "static"}')
  hm=$(ndcg $c hybrid '{"encoder": "model"}')
  hs=$(ndcg $c hybrid '{"encoder": "static"}')
  echo "| $c | $lex | $sm | $ss | $(python3 -c "print('%.0f%%' % (100 * $ss / $sm))") | $hm | $hs |"
done
