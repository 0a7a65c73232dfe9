#!/usr/bin/env bash
# pip install --no-build-isolation of the source tree into a fresh venv (Debian's python3 with its numpy,
# scikit-learn: --system-site-packages), as a user does from a fresh clone (setup.py's module-only build in a
# temporary directory, here under $work/tmp), then again reusing the configured build directory's objects
# (DPSOSP_CMAKE_BUILD_DIR). After each: nothing new under the source folder (the build directory aside) and
# nothing left in the temporary directory; the installed package, imported from another directory, fits an
# estimator. Then cmake --install's package and dpsosp.pc. Usage: tests/pip_install.sh SOURCE BUILD
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$build/pip-test
rm -rf "$work"
mkdir -p "$work/tmp"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# Every path under the source folder but .git, the build directory (when it is inside) and what other tests
# running beside this one write there (the experiments' outputs, ctest's Testing/).
source_paths() {
  find "$src" \( -path "$src/.git" -o -path "$build" -o -path "$src/experiments/out" -o -path "$src/Testing" \) \
    -prune -o -print | sort
}
source_paths > "$work/source-before.txt"
fit() {
  (cd "$work" && "$work/venv/bin/python" - "$work/venv") <<'PY'
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
# A CSV table through the library's own loader (the module keeps the file loaders).
np.savetxt("t.csv", np.column_stack([y, X]), delimiter=",", header="label,a,b,c", comments="", fmt="%.6f")
r = dpsosp.run("logistic", data="t.csv", label="label", epsilon=1, noise_key=bytes(range(16)), seed=0)
assert r["n"] == 4000 and r["label"] == "label", (r["n"], r.get("label"))
print("pip_install: dpsosp", dpsosp.__version__, "from", dpsosp.__file__, "score", score)
PY
}
check_nothing_left() {
  source_paths > "$work/source-after.txt"
  if ! diff "$work/source-before.txt" "$work/source-after.txt" > "$work/source-diff.txt"; then
    echo "pip_install: pip install ($1) left paths under $src:" >&2
    grep '^>' "$work/source-diff.txt" | head -20 >&2
    exit 1
  fi
  if [ -n "$(ls -A "$work/tmp")" ]; then
    echo "pip_install: pip install ($1) left in the temporary directory: $(ls -A "$work/tmp")" >&2
    exit 1
  fi
}
pip_install() {
  TMPDIR=$work/tmp "$work/venv/bin/pip" install --quiet --no-build-isolation --no-deps --no-index \
    --force-reinstall "$src"
}
start=$SECONDS
pip_install
echo "pip_install: a fresh module-only build installed in $((SECONDS - start)) s"
check_nothing_left "fresh build"
fit
DPSOSP_CMAKE_BUILD_DIR=$build pip_install
check_nothing_left "DPSOSP_CMAKE_BUILD_DIR"
fit
# cmake --install puts the same package under a prefix, with dpsosp.pc for pkg-config. (From $work: ctest's
# directory, build/python, holds the build tree's package, which python -c would import first.)
cd "$work"
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
