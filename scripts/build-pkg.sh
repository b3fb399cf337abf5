#!/usr/bin/env bash
# Builds the npm package in pkg/: the wasm module for the web (pkg/web, a plain
# <script type="module">), for bundlers (pkg/bundler: Vite, webpack) and for Node (pkg/node);
# the lean modules for the web, without the model: pkg/web-core (what the client opens an index
# file with) and pkg/web-fragments (what it opens a fragmented index with); pkg/web-edit (the
# full module with the mutable index); the worker client and the <cairn-search> element (js/),
# the command line and the Node API, and its package.json.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in web bundler nodejs; do
  dir=$([ $target = nodejs ] && echo node || echo $target)
  wasm-pack build --release --target $target --out-dir pkg/$dir --out-name cairn >/dev/null
  rm -f pkg/$dir/.gitignore pkg/$dir/README.md
done
# The mutable index's module (`Cairn.create`): the full module with the build path (reading
# records, chunking, building), which a page that only searches never downloads.
wasm-pack build --release --target web --out-dir pkg/web-edit --out-name cairn -- --features edit >/dev/null
rm -f pkg/web-edit/.gitignore pkg/web-edit/README.md
# The lean modules are what every page downloads first, built for size: one codegen unit, fat
# LTO, dependencies at opt-level z (serde, JSON and the bindings are cold code), each with the
# class of one layout. An index file's module keeps cairn's own code at opt-level s (its searches
# run on the whole index in memory: z made them 30 to 50% slower); the fragments' module has it
# at z too (its searches run on the few fragments a query fetched, in 1 to 3 ms, and
# its bytes are on every cold query's path). docs/benchmarks.md ("The lean modules") has the figures.
# The lean modules abort on a panic without formatting its message: std rebuilt by nightly with
# its immediate-abort panic strategy, 22 kB gzip less for each. A panic is a trap in wasm either
# way (the message was only logged to the console). Where the nightly cannot (a toolchain without
# the strategy or rust-src), the stable build is used, and the script says so.
lean() {
  CARGO_PROFILE_RELEASE_OPT_LEVEL=$3 CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    wasm-pack build --release --target web --out-dir pkg/$1 --out-name cairn -- --no-default-features \
    --features $2 --config 'profile.release.package."*".opt-level="z"' "${@:4}" >/dev/null
}
for module in "web-core single s" "web-fragments fragments z"; do
  set -- $module
  # std itself stays at opt-level 3, as the stable toolchain ships it: at z, prefix and typo
  # searches took a fifth longer.
  if ! RUSTUP_TOOLCHAIN=nightly RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort" \
      lean "$@" -Zbuild-std=std,panic_abort --config profile.release.package.core.opt-level=3 \
      --config profile.release.package.alloc.opt-level=3 --config profile.release.package.std.opt-level=3 \
      2>/tmp/cairn-lean.log; then
    echo "warning: nightly's immediate-abort build of pkg/$1 failed (tail of /tmp/cairn-lean.log below); building it with the stable toolchain, 22 kB gzip larger" >&2
    tail -5 /tmp/cairn-lean.log >&2
    lean "$@"
  fi
  rm -f pkg/$1/.gitignore pkg/$1/README.md
done
# The command line, `npx cairn-search` (js/bin/cairn.mjs): the native CLI's code as WASI, which
# Node runs; the same flags, messages and index bytes, with no Rust toolchain on the user's side.
cargo build --release --target wasm32-wasip1 --bin cairn
mkdir -p pkg/cli pkg/bin
cp "${CARGO_TARGET_DIR:-target}"/wasm32-wasip1/release/cairn.wasm pkg/cli/cairn.wasm
# The launcher with its WASI implementation (@tybys/wasm-util) bundled in: the package keeps no
# dependencies, and installs offline.
npx esbuild js/bin/cairn.mjs --bundle --platform=node --format=esm --target=node20 --log-level=warning \
  --outfile=pkg/bin/cairn.mjs
# The Node API (`cairn-search/indexer`: createIndex, addDirectory, addHTMLFile, addRecord, write).
npx esbuild js/node/indexer.mjs --bundle --platform=node --format=esm --target=node20 --log-level=warning \
  --outfile=pkg/indexer.mjs
cp js/node/indexer.d.mts pkg/indexer.d.mts
# The site-generator integrations (`cairn-search/vite`, `/astro`, `/docusaurus`), over the Node API.
cp js/node/site.mjs js/node/vite.mjs js/node/vite.d.mts js/node/astro.mjs js/node/astro.d.mts js/node/docusaurus.mjs js/node/docusaurus.d.mts pkg/
rm -rf pkg/docusaurus-theme && cp -r js/node/docusaurus-theme pkg/
# The Snowball stemmers of the other languages, one small module each (`stem/`; js/stem.js loads
# the one an index's language needs), named by the codes of analyze/language.rs's table.
rm -rf pkg/stem && mkdir -p pkg/stem
sed -nE 's/^    \("([a-z]+)", "[^"]+", Some\("([a-z]+)"\).*/\1 \2/p' src/analyze/language.rs |
  while read -r code snowball; do
    [ "$snowball" = english ] && continue
    cargo build -q --release --target wasm32-unknown-unknown --manifest-path stem/Cargo.toml \
      --target-dir target/stem --features "$snowball"
    cp target/stem/wasm32-unknown-unknown/release/cairn_stem.wasm "pkg/stem/$code.wasm"
  done
# Function names serve only stack traces: a tenth of each module.
node scripts/strip-names.mjs pkg/stem/*.wasm pkg/cli/cairn.wasm pkg/web/cairn_bg.wasm pkg/web-edit/cairn_bg.wasm pkg/web-core/cairn_bg.wasm pkg/web-fragments/cairn_bg.wasm pkg/bundler/cairn_bg.wasm pkg/node/cairn_bg.wasm >/dev/null
cp js/*.js js/*.d.ts pkg/
# What a page downloads is minified (esbuild, each file alone: imports and exports stay as they
# are): 10 kB less gzip than the readable sources in js/. Bundlers and Node minify their own.
for f in pkg/client.js pkg/worker.js pkg/fetch.js pkg/fragments.js pkg/mutable.js pkg/stem.js pkg/element.js pkg/strings.js pkg/web/cairn.js pkg/web-edit/cairn.js pkg/web-core/cairn.js pkg/web-fragments/cairn.js; do
  npx esbuild "$f" --minify --log-level=warning --outfile="$f" --allow-overwrite
done
version=$(awk -F'"' '/^version = / { print $2; exit }' Cargo.toml)
cat > pkg/package.json <<JSON
{
  "name": "cairn-search",
  "version": "$version",
  "description": "Hybrid (BM25 + sentence embedding) search that runs entirely in the browser",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "types": "./client.d.ts",
  "bin": { "cairn-search": "./bin/cairn.mjs" },
  "engines": { "node": ">=20" },
  "exports": {
    ".": {
      "node": { "types": "./node/cairn.d.ts", "default": "./node/cairn.js" },
      "types": "./bundler/cairn.d.ts",
      "default": "./bundler/cairn.js"
    },
    "./web": { "types": "./web/cairn.d.ts", "default": "./web/cairn.js" },
    "./web-edit": { "types": "./web-edit/cairn.d.ts", "default": "./web-edit/cairn.js" },
    "./web-core": { "types": "./web-core/cairn.d.ts", "default": "./web-core/cairn.js" },
    "./web-fragments": { "types": "./web-fragments/cairn.d.ts", "default": "./web-fragments/cairn.js" },
    "./client": { "types": "./client.d.ts", "default": "./client.js" },
    "./indexer": { "types": "./indexer.d.mts", "default": "./indexer.mjs" },
    "./vite": { "types": "./vite.d.mts", "default": "./vite.mjs" },
    "./astro": { "types": "./astro.d.mts", "default": "./astro.mjs" },
    "./docusaurus": { "types": "./docusaurus.d.mts", "default": "./docusaurus.mjs" },
    "./element": "./element.js",
    "./worker": "./worker.js",
    "./package.json": "./package.json"
  },
  "files": ["bin", "cli", "indexer.mjs", "indexer.d.mts", "site.mjs", "vite.mjs", "vite.d.mts", "astro.mjs", "astro.d.mts", "docusaurus.mjs", "docusaurus.d.mts", "docusaurus-theme", "web", "web-edit", "web-core", "web-fragments", "bundler", "node", "client.js", "client.d.ts", "element.js", "strings.js", "worker.js", "fetch.js", "fragments.js", "mutable.js", "stem.js", "stem", "README.md"],
  "sideEffects": ["./element.js", "./bundler/*.js"]
}
JSON
cp docs/npm-package.md pkg/README.md
echo "pkg/: cairn-search $version (web, web-edit, web-core, web-fragments, bundler, node, client, element, the npx command line)"
