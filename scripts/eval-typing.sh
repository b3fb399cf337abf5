#!/usr/bin/env bash
# Search as you type, measured: on every collection in ../shared/eval, nDCG@10 of the full
# queries, of queries whose last word is cut to its first 60% of characters (at least 3), and of
# queries with one random typo (deletion, insertion, substitution or swap, seeded) in each word
# of 6 or more letters; each without and with `prefix` / `fuzzy`. Reuses the indexes that
# scripts/eval-all.sh writes under ${OUT:-target/eval} (builds any that are missing).
# Usage: scripts/eval-typing.sh [lexical|hybrid ...]   (default: lexical hybrid)
set -euo pipefail
cd "$(dirname "$0")/.."
eval_dir=${EVAL_DIR:-../shared/eval}
out=${OUT:-target/eval}
cairn=${CAIRN:-target/debug/cairn}
modes=${*:-lexical hybrid}
mkdir -p "$out"

# queries.jsonl → queries-cut.jsonl and queries-typo.jsonl beside the index.
make_queries() {
  python3 - "$1" "$2" <<'EOF'
import json, math, random, re, sys
src, dst = sys.argv[1], sys.argv[2]
cut, typo = open(f"{dst}/queries-cut.jsonl", "w"), open(f"{dst}/queries-typo.jsonl", "w")
letters = "abcdefghijklmnopqrstuvwxyz"
for line in open(src):
    if not line.strip():
        continue
    q = json.loads(line)
    words = q["text"].split()
    # The last word, without what follows it (punctuation), cut to 60% of its letters, at least 3.
    while words and not re.search(r"\w", words[-1]):
        words.pop()
    if words:
        last = re.match(r"^\W*(\w.*?)\W*$", words[-1]).group(1)
        keep = max(3, math.ceil(0.6 * len(last)))
        words[-1] = words[-1][: words[-1].index(last) + min(keep, len(last))]
    cut.write(json.dumps({"_id": q["_id"], "text": " ".join(words)}) + "\n")
    rng = random.Random(f"cairn-typo-{q['_id']}")
    def misspell(word):
        core = re.sub(r"\W", "", word)
        if len(core) < 6 or not core.isalpha():
            return word
        i = rng.randrange(1, len(word) - 1)
        kind = rng.choice(["delete", "insert", "substitute", "swap"])
        if kind == "delete":
            return word[:i] + word[i + 1 :]
        if kind == "insert":
            return word[:i] + rng.choice(letters) + word[i:]
        if kind == "substitute":
            return word[:i] + rng.choice([c for c in letters if c != word[i].lower()]) + word[i + 1 :]
        return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
    typo.write(json.dumps({"_id": q["_id"], "text": " ".join(misspell(w) for w in q["text"].split())}) + "\n")
EOF
}

ndcg() {
  $cairn eval "$1" --queries "$2" --qrels "$3" --mode "$4" --options "$5" --json | python3 -c "import json,sys; print(f\"{json.load(sys.stdin)['ndcgAt10']:.4f}\")"
}

echo "| collection | mode | full | full, prefix + fuzzy | cut | cut, prefix | typo | typo, fuzzy |"
echo "|---|---|---|---|---|---|---|---|"
for c in ${COLLECTIONS:-cranfield cisi med cacm adi}; do
  [ -d "$eval_dir/$c" ] || continue
  [ -f "$out/$c/index.cairn" ] || $cairn index "$eval_dir/$c/corpus.jsonl" --out "$out/$c" --layout single >&2
  make_queries "$eval_dir/$c/queries.jsonl" "$out/$c"
  qrels="$eval_dir/$c/qrels/test.tsv"
  for mode in $modes; do
    row="| $c | $mode"
    for run in "queries.jsonl {}" "queries.jsonl {\"prefix\":true,\"fuzzy\":true}" "cut {}" "cut {\"prefix\":true}" "typo {}" "typo {\"fuzzy\":true}"; do
      set -- $run
      queries=$eval_dir/$c/queries.jsonl
      [ "$1" = queries.jsonl ] || queries=$out/$c/queries-$1.jsonl
      row="$row | $(ndcg "$out/$c" "$queries" "$qrels" "$mode" "$2")"
    done
    echo "$row |"
  done
done
