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

step "native build and cargo test"
cargo build
cargo test

step "the npm package (web, bundler and Node builds) and the demo index"
target/debug/cairn index tests/fixtures/docs --no-embed --out target/test-fixtures/lexical >/dev/null
target/debug/cairn index tests/fixtures/linked --no-embed --chunk-words 12 --out target/test-fixtures/linked >/dev/null
scripts/build-pkg.sh
scripts/build-demo-index.sh

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

step "all tests passed in $((SECONDS - started)) s"
