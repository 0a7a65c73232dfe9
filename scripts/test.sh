#!/usr/bin/env bash
# Builds dpsosp (with MPI, for the data-parallel test) and runs every test:
# the unit tests (ctest), the CLI tests, the MPI test and the find_package
# consumer test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh -DDPSOSP_MPI=ON
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 600
