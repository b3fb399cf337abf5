#!/usr/bin/env bash
# What hostile input costs the CLI, from the user's side (docs/reliability.md):
#   1. the time to index one document of 1, 2, 4, 8 and 16 MB (a one-line Markdown file and a
#      JSONL record) as fragments and as a single file: writing must grow linearly with size;
#   2. the peak memory (RSS) of `cairn search` against gzip bombs: a meta file that inflates to
#      2 GiB and a fragment that inflates to 1 GiB (examples/bombs.rs writes them), each refused.
# Usage: bench/hostile.sh   (the dev profile is optimized: opt-level 2, dependencies 3)
set -euo pipefail
cd "$(dirname "$0")/.."
cli=target/debug/cairn
[ -x "$cli" ] && [ -x target/debug/examples/bombs ] || cargo build --bin cairn --example bombs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "one document of N MB: seconds to index (--no-embed), fragments and single file"
printf '%-6s %-10s %12s %12s %12s\n' MB format fragments single ratio
for mb in ${SIZES-1 2 4 8 16}; do
  python3 - "$work/in-$mb" "$mb" <<'EOF'
import os, sys, random
out, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(out + "/md", exist_ok=True); os.makedirs(out + "/jsonl", exist_ok=True)
random.seed(mb)
words = [f"word{i}" for i in range(5000)]
text = " ".join(random.choice(words) for _ in range(mb * 1024 * 1024 // 8))[: mb * 1024 * 1024]
open(out + "/md/huge.md", "w").write("# One long page\n\n" + text + "\n")
open(out + "/jsonl/huge.jsonl", "w").write('{"id":"huge","title":"One record","text":"' + text + '"}\n')
EOF
  for format in md jsonl; do
    times=()
    for layout in fragments single; do
      start=$(date +%s.%N)
      "$cli" index "$work/in-$mb/$format" --no-embed --layout "$layout" --out "$work/out-$mb-$format-$layout" >/dev/null
      times+=("$(echo "$(date +%s.%N) - $start" | bc)")
    done
    printf '%-6s %-10s %12.2f %12.2f %12.2f\n' "$mb" "$format" "${times[0]}" "${times[1]}" "$(echo "${times[0]} / ${times[1]}" | bc -l)"
  done
done

echo
echo "gzip bombs: peak RSS of cairn search (KB), and what it said"
"$cli" index tests/fixtures/docs --no-embed --layout single --out "$work/docs" >/dev/null
target/debug/examples/bombs "$work/docs" "$work/bombs"
for bomb in meta-bomb meta-bomb-lying fragment-bomb fragment-bomb-lying; do
  set +e
  /usr/bin/time -f "%M" -o "$work/rss" "$cli" search "$work/bombs/$bomb" "install" --mode lexical >/dev/null 2>"$work/err"
  status=$?
  set -e
  printf '%-20s exit %d, peak RSS %s KB: %s\n' "$bomb" "$status" "$(tail -1 "$work/rss")" "$(grep -m1 error "$work/err" | cut -c1-160)"
done
# For scale: the same search on the index the bomb was made from.
/usr/bin/time -f "%M" -o "$work/rss" "$cli" search "$work/docs" "install" --mode lexical >/dev/null
printf '%-20s peak RSS %s KB\n' "(the real one)" "$(tail -1 "$work/rss")"
