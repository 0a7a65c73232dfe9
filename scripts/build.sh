#!/usr/bin/env bash
# Configures and builds dpsosp (Release) into ./build. One line per stage on
# stdout, and the build's percentage (an updating line on a terminal, a line
# every 10% otherwise); the compiler's own output goes to build.log, whose
# tail is shown if a stage fails.
#
# Usage: scripts/build.sh [--all | --no-tests] [--python] [-j N] [extra cmake args]
#   (default)   the library and the dpsosp tool: what `./build/dpsosp demo` needs
#   --python    also the Python module (build/python; `pip install .` installs it)
#   --no-tests  the library, the tool and the Python module, with the tests not configured
#   --all       everything, tests included (scripts/test.sh)
#   -j N        parallel jobs (default: the number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=demo python=0 jobs="$(nproc)"
cmake_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --all) mode=all ;;
    --no-tests) mode=no-tests ;;
    --python) python=1 ;;
    -j) [ $# -ge 2 ] || { echo "build.sh: -j needs a number" >&2; exit 2; }; jobs="$2"; shift ;;
    -j*) jobs="${1#-j}" ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) cmake_args+=("$1") ;;
  esac
  shift
done

started=$SECONDS
stage_start=$SECONDS
say() { echo "build: $*"; }
elapsed() { echo "$((SECONDS - stage_start)) s"; }
fail() {
  echo "build: $1 failed; the end of build.log:" >&2
  tail -40 build.log >&2
  exit 1
}

: > build.log
say "[1/3] dependencies (scripts/install-deps.sh)"
bash scripts/install-deps.sh >> build.log 2>&1 || fail "installing the dependencies"
tail -1 build.log | sed 's/^/       /'

stage_start=$SECONDS
tests=ON
[ "$mode" = no-tests ] && tests=OFF
say "[2/3] configure (Release, tests $tests)"
# Each compile and link timed into build/build-steps.tsv (scripts/time-step.sh; read by
# scripts/test-times.py for docs/test-times.md), unless a launcher (ccache) is given.
launcher=()
case " ${cmake_args[*]-} " in
  *LAUNCHER*) ;;
  *) mkdir -p build; : > build/build-steps.tsv
     launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/scripts/time-step.sh;$PWD/build/build-steps.tsv"
               -DCMAKE_CXX_LINKER_LAUNCHER="$PWD/scripts/time-step.sh;$PWD/build/build-steps.tsv") ;;
esac
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDPSOSP_BUILD_TESTS=$tests "${launcher[@]}" \
  ${cmake_args[@]+"${cmake_args[@]}"} >> build.log 2>&1 || fail "configure"
echo "       done in $(elapsed)"

targets=()
case "$mode" in
  demo) targets=(--target dpsosp_cli); [ "$python" = 1 ] && targets+=(_core) ;;
  no-tests|all) ;;  # every configured target
esac
what="the library and ./build/dpsosp"
[ "$mode" = demo ] && [ "$python" = 1 ] && what="$what and the Python module"
[ "$mode" = no-tests ] && what="everything but the tests"
[ "$mode" = all ] && what="everything, tests included"

stage_start=$SECONDS
say "[3/3] compile $what ($jobs jobs)"
tty=0
[ -t 1 ] && tty=1
# The build tools' progress: "[ 45%] ..." (Makefiles) or "[12/80] ..." (Ninja).
set +e
cmake --build build -j"$jobs" ${targets[@]+"${targets[@]}"} 2>&1 | tee -a build.log | awk -v tty="$tty" '
  function show(p, what) {
    if (tty) { printf "\r       %3d%% %-60.60s", p, what; fflush() }
    else if (p >= next_line) { printf "       %3d%%\n", p; fflush(); while (next_line <= p) next_line += 10 }
  }
  BEGIN { next_line = 10 }
  match($0, /^\[ *[0-9]+%\]/) { p = substr($0, 2, RLENGTH - 3) + 0; rest = substr($0, RLENGTH + 2) }
  match($0, /^\[[0-9]+\/[0-9]+\]/) { split(substr($0, 2, RLENGTH - 2), kn, "/"); p = int(100 * kn[1] / kn[2]); rest = substr($0, RLENGTH + 2) }
  p != "" && p != last { sub(/^Building CXX object /, "", rest); show(p, rest); last = p }
  END { if (tty) printf "\r%80s\r", "" }'
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || fail "compile"
echo "       done in $(elapsed)"
say "ok in $((SECONDS - started)) s (./build/dpsosp$([ "$mode" = demo ] && [ "$python" = 0 ] && echo '; scripts/test.sh builds and runs the tests'))"
