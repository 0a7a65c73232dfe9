#!/usr/bin/env bash
# Makes a folder that Opacus v1.4.0 runs from on Debian's python3-torch 1.13
# (the last Opacus release for torch 1.13): its `opacus` package out of a git
# snapshot of github.com/pytorch/opacus, and a stand-in for opt_einsum (not
# packaged by Debian) whose `contract` is torch.einsum. Not part of CI.
#
#   bash bench/peers/setup_opacus.sh OPACUS_GIT_DIR DEST
#   PYTHONPATH=DEST /usr/bin/python3 -c 'import opacus; print(opacus.__version__)'   # 1.4.0
#
# OPACUS_GIT_DIR: a clone or bare snapshot holding the tag v1.4.0.
# Needs: apt-get install python3-torch python3-scipy.
set -euo pipefail
src=${1:?usage: setup_opacus.sh OPACUS_GIT_DIR DEST}
dest=${2:?usage: setup_opacus.sh OPACUS_GIT_DIR DEST}
mkdir -p "$dest/opt_einsum"
git -C "$src" archive v1.4.0 opacus | tar -x -C "$dest"
printf 'from .contract import contract  # noqa: F401\n' > "$dest/opt_einsum/__init__.py"
cat > "$dest/opt_einsum/contract.py" <<'PY'
"""Stand-in for opt_einsum.contract (not in Debian): torch.einsum, without path optimization."""
import torch


def contract(*args, **kwargs):
    return torch.einsum(*args)
PY
PYTHONPATH="$dest" /usr/bin/python3 -c 'import opacus; print("opacus", opacus.__version__, "in '"$dest"'")'
