#!/usr/bin/env bash
# Every test of cairn, from a fresh clone: set-up, the Rust core and CLI (cargo test), the
# TypeScript consumer (tsc --strict), the wasm bindings in Node and in headless Chromium
# (wasm-pack test), the wasm module against the native CLI under Node, and the demo, the
# <cairn-search> element and the Vite example in Chromium (Playwright).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
step() { printf '\n\033[1m== %s\033[0m (%ds)\n' "$*" $((SECONDS - started)) >&2; }

step "set-up"
scripts/setup.sh

# Disk: temporary files go to a folder of this run's own, removed when it ends however it ends
# (each Node test file removes its own too; outside the clone, where the package.json would make
# wasm-bindgen-test-runner's CommonJS an ES module), and no build keeps incremental state, which
# a clean clone never reuses. The last line says what the build folders hold.
export CARGO_INCREMENTAL=0 TMPDIR
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/cairn-tests-XXXXXX")
trap 'rm -rf "$TMPDIR"' EXIT

step "module layers: no import cycle, no file over 800 lines (scripts/modgraph.py)"
python3 scripts/modgraph.py --quiet || { echo "a module change broke the layers; see ARCHITECTURE.md" >&2; exit 1; }

step "the library's unit tests type-check for wasm32 (fails fast, before the long native build)"
cargo check --target wasm32-unknown-unknown --profile test --lib

step "native build and cargo test"
cargo build
cargo test --no-fail-fast

step "fuzz smoke run: every target over its committed corpus, then 10 s of fuzzing (docs/reliability.md)"
# The same build as the long runs (no sanitizer: the crate is safe Rust natively; overflow
# checks on), so `run` below reuses it. Each target also writes fresh seeds (valid indexes of
# this format version) to a scratch folder it reads too; new inputs go there, not to the corpus.
(cd fuzz && cargo +nightly fuzz build -s none)
for target in $(cd fuzz && cargo +nightly fuzz list); do
  scratch=$(mktemp -d) log=$(mktemp)
  mkdir -p "$scratch/new" "$scratch/seeds/$target"
  # Inputs that once failed (fuzz/regressions/<target>/) are replayed with the corpus. A fixed
  # seed makes the mutations the same on every run (how many fit in 10 s varies with the
  # machine); the long, randomly seeded runs of docs/reliability.md look further. One input may
  # take 30 s: fragment_writer's 4 MB documents take about 4 s each with coverage counters on an
  # idle machine and over 10 s on a loaded one, while a writer whose time grows faster than its
  # input (the bug that target guards) takes minutes.
  regressions=() && [ -d "fuzz/regressions/$target" ] && regressions=("regressions/$target")
  if ! (cd fuzz && CAIRN_FUZZ_SEEDS="$scratch/seeds" cargo +nightly fuzz run -s none "$target" \
      "$scratch/new" "$scratch/seeds/$target" "corpus/$target" "${regressions[@]}" -- \
      -seed=1 -max_total_time=10 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1) >"$log" 2>&1; then
    cat "$log"; echo "fuzz target $target failed; the input is under fuzz/artifacts/$target/" >&2; exit 1
  fi
  printf '%s: %s executions\n' "$target" "$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")" >&2
  rm -rf "$scratch" "$log"
done

step "the npm package (web, bundler and Node builds) and the demo index"
target/debug/cairn index tests/fixtures/docs --no-embed --out target/test-fixtures/lexical >/dev/null
target/debug/cairn index tests/fixtures/linked --no-embed --summaries --chunk-words 12 --out target/test-fixtures/linked >/dev/null
scripts/build-pkg.sh
scripts/build-demo-index.sh
# A 100k-chunk site with vectors, for the fragmented index's browser test
# (tests/browser/fragments.test.mjs): the eval collections' text, blends of real embeddings of
# one subject, as a site has (the first 200 MED abstracts). Fixed inputs, so the site's figures
# move only with the code.
for c in cacm cisi cranfield; do
  target/debug/cairn index ../shared/eval/$c/corpus.jsonl --no-embed --layout single --out target/test-fixtures/text-$c >/dev/null
done
head -n 200 ../shared/eval/med/corpus.jsonl >target/test-fixtures/med-200.jsonl
target/debug/cairn index target/test-fixtures/med-200.jsonl --no-static --layout single --out target/test-fixtures/vectors-med >/dev/null
target/debug/examples/synthetic_site target/test-fixtures/vectors-med target/test-fixtures/site-100k 100000 20 --mix \
  --text target/test-fixtures/text-cacm,target/test-fixtures/text-cisi,target/test-fixtures/text-cranfield >/dev/null

step "TypeScript: a consumer of the generated types, tsc --strict"
npx tsc -p tests/ts

step "wasm-bindgen tests in Node and in headless Chromium"
export WASM_BINDGEN_TEST_TIMEOUT=300
wasm-pack test --release --node -- --test wasm
CHROMEDRIVER=$(command -v chromedriver) WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --release --headless --chrome -- --test wasm

step "the Vite example app builds"
# npm keeps an installed copy of a file: dependency whose version did not change, so the fresh
# pkg/ is copied in anew each time.
rm -rf examples/vite/node_modules/cairn-search
(cd examples/vite && npm install --no-audit --no-fund --install-links >/dev/null && npx vite build --logLevel warn)

step "wasm against native under Node; the demo, <cairn-search> and the Vite app in Chromium (Playwright)"
node --test --test-concurrency=1 tests/node/ tests/browser/

step "all tests passed in $((SECONDS - started)) s; $(du -sh target fuzz/target 2>/dev/null | awk '{print $1, $2}' | paste -sd, -) on disk"
