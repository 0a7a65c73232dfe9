#!/usr/bin/env bash
# Builds dpsosp, tests included, with MPI (for the data-parallel test), and
# runs every test: the unit tests (ctest), the CLI tests, the Python tests, the
# MPI test and the find_package consumer test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --all -DDPSOSP_MPI=ON
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
