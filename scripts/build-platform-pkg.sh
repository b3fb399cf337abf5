#!/usr/bin/env bash
# Builds the platform package of this machine's native CLI, `@cairn-search/<os>-<cpu>` (as Node
# names them: linux-x64, darwin-arm64, win32-x64, …), into pkg-platform/<os>-<cpu>/: the
# binary and a package.json whose `os` and `cpu` let npm install it only where it runs.
# `npx cairn-search` (pkg/bin/cairn.mjs) runs it instead of the WebAssembly build when it is
# installed beside cairn-search. The release workflow (.github/workflows/release.yml) runs this on
# each platform's own runner; here it is built and tested for linux-x64 only.
# Usage: scripts/build-platform-pkg.sh [BINARY]   (default: cargo build --release's)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-}
if [ -z "$binary" ]; then
  cargo build --release --bin cairn
  binary=target/release/cairn
fi
platform=$(node -p 'process.platform + "-" + process.arch')
version=$(awk -F'"' '/^version = / { print $2; exit }' Cargo.toml)
dir=pkg-platform/$platform
rm -rf "$dir" && mkdir -p "$dir"
exe=cairn; [ "${platform%%-*}" = win32 ] && exe=cairn.exe
cp "$binary" "$dir/$exe"
cat > "$dir/package.json" <<JSON
{
  "name": "@cairn-search/$platform",
  "version": "$version",
  "description": "The native cairn command line for $platform, run by cairn-search's npx cairn-search",
  "license": "MIT OR Apache-2.0",
  "os": ["${platform%%-*}"],
  "cpu": ["${platform#*-}"],
  "files": ["$exe"],
  "preferUnplugged": true
}
JSON
echo "$dir: @cairn-search/$platform $version"
