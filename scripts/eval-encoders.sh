#!/usr/bin/env bash
# nDCG@10 of each query encoder on every collection in ../shared/eval: the f32 model (the
# source weights, which the index also accepts for queries), the 8-bit model cairn writes for
# the browser (q8_0 linear layers, int8 word rows) and the static tier, semantic and hybrid, beside
# lexical. Indexes under ${OUT:-target/eval} (the q8 default, rebuilt) and copies of them beside
# it; prints a Markdown table. Usage: scripts/eval-encoders.sh (COLLECTIONS="cisi med" picks).
set -euo pipefail
cd "$(dirname "$0")/.."
eval_dir=${EVAL_DIR:-../shared/eval}
out=${OUT:-target/eval}
cairn=${CAIRN:-target/debug/cairn}
source_model=${MODEL:-models/all-MiniLM-L6-v2}
ndcg() { # index mode [options]
  $cairn eval "$1" --queries "$eval_dir/$c/queries.jsonl" --qrels "$eval_dir/$c/qrels/test.tsv" --mode "$2" --json ${3:+--options "$3"} \
    | python3 -c "import json,sys; print(f\"{json.load(sys.stdin)['ndcgAt10']:.4f}\")"
}
echo "| collection | lexical | semantic f32 | semantic 8-bit | semantic static | hybrid f32 | hybrid 8-bit | hybrid static |"
echo "|---|---|---|---|---|---|---|---|"
for c in ${COLLECTIONS:-cranfield cisi med cacm adi}; do
  [ -d "$eval_dir/$c" ] || continue
  $cairn index "$eval_dir/$c/corpus.jsonl" --out "$out/$c" --layout single >&2
  rm -rf "$out-f32/$c"
  mkdir -p "$out-f32"
  cp -r "$out/$c" "$out-f32/$c"
  rm -rf "$out-f32/$c/model" && mkdir "$out-f32/$c/model" && cp "$source_model"/{model.safetensors,tokenizer.json,config.json} "$out-f32/$c/model/"
  row="| $c | $(ndcg "$out/$c" lexical)"
  for mode in semantic hybrid; do
    row="$row | $(ndcg "$out-f32/$c" $mode) | $(ndcg "$out/$c" $mode) | $(ndcg "$out/$c" $mode '{"encoder":"static"}')"
  done
  echo "$row |"
done
