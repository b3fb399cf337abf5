#!/usr/bin/env bash
# The main job: set up, build the CLI and the wasm package, index cairn's own docs, and serve
# the search page on http://127.0.0.1:${PORT:-8080}/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build
scripts/build-pkg.sh
scripts/build-demo-index.sh
exec node scripts/serve.mjs "${PORT:-8080}"
