#!/usr/bin/env bash
# Installs dpsosp's build and test dependencies from Debian 12 packages (as root).
# Skips apt entirely when everything is already installed.
set -euo pipefail
PACKAGES=(cmake g++ make libeigen3-dev libcli11-dev nlohmann-json3-dev libspectra-dev librandom123-dev
          zlib1g-dev libssl-dev libgtest-dev libbenchmark-dev libomp-dev dataset-fashion-mnist
          python3-numpy python3-matplotlib python3-pybind11 pybind11-dev python3-dev
          python3-scipy python3-sklearn python3-pandas python3-jsonschema
          python3-pip python3-venv python3-setuptools python3-wheel pkg-config
          python3-torch                # dpsosp.torch and its tests (torch 1.13 with functorch)
          python3-statsmodels          # its bundled tables: experiments/other_tables.py
          ninja-build                  # pip install builds with Ninja when it is there (setup.py)
          openmpi-bin libopenmpi-dev   # MPI: data-parallel runs (DPSOSP_MPI; about 16 s to install)
          clang-format-14)             # the C++ style (.clang-format; scripts/format.sh --check in CI)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
