#!/usr/bin/env bash
# Builds the npm package in pkg/: the wasm module for the web (pkg/web, a plain
# <script type="module">), for bundlers (pkg/bundler: Vite, webpack) and for Node (pkg/node),
# plus the worker client and the <cairn-search> element (js/), and its package.json.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in web bundler nodejs; do
  dir=$([ $target = nodejs ] && echo node || echo $target)
  wasm-pack build --release --target $target --out-dir pkg/$dir --out-name cairn >/dev/null
  rm -f pkg/$dir/.gitignore pkg/$dir/README.md
done
cp js/*.js js/*.d.ts pkg/
version=$(awk -F'"' '/^version = / { print $2; exit }' Cargo.toml)
cat > pkg/package.json <<JSON
{
  "name": "cairn-search",
  "version": "$version",
  "description": "Hybrid (BM25 + sentence embedding) search that runs entirely in the browser",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "types": "./client.d.ts",
  "exports": {
    ".": {
      "node": { "types": "./node/cairn.d.ts", "default": "./node/cairn.js" },
      "types": "./bundler/cairn.d.ts",
      "default": "./bundler/cairn.js"
    },
    "./web": { "types": "./web/cairn.d.ts", "default": "./web/cairn.js" },
    "./client": { "types": "./client.d.ts", "default": "./client.js" },
    "./element": "./element.js",
    "./worker": "./worker.js",
    "./package.json": "./package.json"
  },
  "files": ["web", "bundler", "node", "client.js", "client.d.ts", "element.js", "worker.js", "fetch.js", "README.md"],
  "sideEffects": ["./element.js", "./bundler/*.js"]
}
JSON
cp docs/npm-package.md pkg/README.md
echo "pkg/: cairn-search $version (web, bundler, node, client, element)"
