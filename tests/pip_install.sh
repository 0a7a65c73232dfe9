#!/usr/bin/env bash
# pip install --no-build-isolation of the source tree into a fresh venv (Debian's python3 with its
# numpy, scikit-learn: --system-site-packages), reusing the configured build directory's objects
# (DPSOSP_CMAKE_BUILD_DIR; a fresh clone's `pip install` compiles the library itself), then imports the
# installed package from another directory and fits an estimator. Usage: tests/pip_install.sh SOURCE BUILD
set -euo pipefail
src=$1
build=$(cd "$2" && pwd)
work=$build/pip-test
rm -rf "$work"
mkdir -p "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
DPSOSP_CMAKE_BUILD_DIR=$build "$work/venv/bin/pip" install --quiet --no-build-isolation --no-deps --no-index "$src"
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY'
import sys
import numpy as np
import dpsosp
assert dpsosp.__file__.startswith(sys.argv[1]), dpsosp.__file__  # the installed package, not the tree's
X = np.random.default_rng(0).standard_normal((4000, 3)) / 2
y = (X[:, 0] > 0.2).astype(int)
from dpsosp import DPClassifier
# The tests' public noise key: a reproducible fit (this one scores 0.9+; the rule's accuracy is 1).
clf = DPClassifier(epsilon=1, classes=[0, 1], random_state=0, noise_key=bytes(range(16)))
score = clf.fit(X, y).score(X, y)
assert score > 0.8, score
print("pip_install: dpsosp", dpsosp.__version__, "from", dpsosp.__file__, "score", score)
PY
# cmake --install puts the same package under a prefix, with dpsosp.pc for pkg-config.
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > /dev/null
site=$(find "$prefix" -name _core*.so -path "*dpsosp*" -printf '%h\n' | head -1)
test -n "$site" && test -f "$site/__init__.py" && test -f "$site/sklearn.py"
PYTHONPATH=$(dirname "$site") /usr/bin/python3 -c "import dpsosp, sys; assert dpsosp.__file__.startswith('$prefix')"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --exists dpsosp
cat > "$work/app.cpp" <<'CPP'
#include <dpsosp/dpsosp.hpp>
int main() { return dpsosp::make_model("logistic", 3)->dim() == 3 ? 0 : 1; }
CPP
c++ -std=c++17 "$work/app.cpp" -o "$work/app" $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs dpsosp)
"$work/app"
echo "pip_install: cmake --install (Python package, dpsosp.pc) ok"
