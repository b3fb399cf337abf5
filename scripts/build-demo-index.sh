#!/usr/bin/env bash
# Indexes the project's own docs (README, ARCHITECTURE and docs/) into www/index for the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
target/debug/cairn index README.md ARCHITECTURE.md docs/*.md --out www/index --base-url /source/ --layout single
