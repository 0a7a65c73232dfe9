#!/usr/bin/env bash
# Builds the library, the unit tests and the dpsosp tool with AddressSanitizer +
# UndefinedBehaviorSanitizer (-O1, line tables: -g1 gives a report's file:line
# and compiles faster than -g) into ./build-asan, and runs the tests labelled
# unit and cli there: every unit test (statistical ones included) and the CLI
# tests (the bad-input corpus and the interrupted runs) against the sanitized
# tool. Any sanitizer report fails the test that triggered it (UBSan does not
# recover; ASan aborts; LeakSanitizer runs at exit).
#
# Not built or run here (the Release build of scripts/test.sh --all runs them):
# the Python module and its tests (an ASan extension cannot be loaded into a
# plain interpreter), MPI (Open MPI's own allocations are not ours to check; the
# data-parallel arithmetic is the unit tests' ProcessGroup, run here), the
# benchmarks, the find_package consumer and pip install (install rules, no code
# of ours beyond the library), the experiments smoke test (full optimizer runs
# whose code the unit and CLI tests cover) and the architecture rules (no
# compiled code).
#
# allocator_may_return_null=1 lets a hopeless allocation (the bad-input case
# --synthetic n=d=2^32-1) fail as std::bad_alloc, as it does without ASan.
# Usage: scripts/sanitize.sh [ctest args, default: -L 'unit|cli']
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD=build-asan
mkdir -p "$BUILD"
LOG="$BUILD/sanitize-build.log"
start=$SECONDS
: > "$BUILD/build-steps.tsv"
echo "sanitize: not built or run under the sanitizers: the Python module and its tests, MPI, the benchmarks," \
     "install/consumer tests, experiments_quick, architecture (scripts/sanitize.sh says why; scripts/test.sh --all" \
     "runs them)"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DDPSOSP_SANITIZE=ON -DDPSOSP_BUILD_PYTHON=OFF -DDPSOSP_MPI=OFF -DDPSOSP_BUILD_BENCH=OFF \
      -DCMAKE_CXX_COMPILER_LAUNCHER="$PWD/scripts/time-step.sh;$PWD/$BUILD/build-steps.tsv" \
      -DCMAKE_CXX_LINKER_LAUNCHER="$PWD/scripts/time-step.sh;$PWD/$BUILD/build-steps.tsv" > "$LOG" 2>&1 ||
  { cat "$LOG"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target dpsosp_tests dpsosp_cli >> "$LOG" 2>&1 || { tail -50 "$LOG"; exit 1; }
built=$((SECONDS - start))
echo "sanitize: built the library, dpsosp_tests and dpsosp in $built s"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# OpenMP threads that wait passively: ctest -j runs two tests at once, each with up to two
# threads, and libgomp's spinning waiters then take the cores their peers need (measured:
# the two PerfDeterminism.EveryAlgorithm* tests side by side 27 s -> 3.7 s, same bits).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
cd "$BUILD"
select=(-L 'unit|cli')
[ $# -gt 0 ] && select=("$@")
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
test_start=$SECONDS
ctest --output-on-failure -j"$(nproc)" --timeout 1200 --output-junit "$PWD/ctest-junit.xml" "${select[@]}"
printf 'date %s\ncores %s\nbuild_s %s\nctest_s %s\nload_before %s\nload_after %s\nselection %s\n' \
  "$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)" "$built" "$((SECONDS - test_start))" "$load_before" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "${select[*]}" > test-run.txt
echo "sanitize: all tests clean; build $built s, tests $((SECONDS - test_start)) s"
