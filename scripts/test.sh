#!/usr/bin/env bash
# Builds dpsosp, tests included, and runs every test: the unit tests (ctest),
# the CLI tests, the Python tests and the find_package consumer test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --all
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
