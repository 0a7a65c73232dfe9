#!/usr/bin/env bash
# Builds dpsosp, tests included, with MPI, and runs the tests on every core
# (ctest -j). Each test has labels (tests/CMakeLists.txt): its kind (unit, cli,
# python, mpi, install, lint, experiments) and `slow` for the few that take
# more than a few seconds each; `ctest --print-labels` lists them.
#
# Usage: scripts/test.sh [--all] [ctest args]
#   (default)  the fast set: every test not labelled slow (ctest -LE slow)
#   --all      every test (the fast set and the slow one; what .ci/run runs)
#   ctest args are passed on: -L cli, -R '^mpi$', --repeat until-fail:3, ...
# The timings go to build/ctest-junit.xml and build/test-run.txt, which
# scripts/test-times.py turns into docs/test-times.md.
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
ctest_args=()
for a in "$@"; do
  case "$a" in
    --all) all=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ctest_args+=("$a") ;;
  esac
done

started=$SECONDS
bash scripts/build.sh --all -DDPSOSP_MPI=ON
built=$((SECONDS - started))
cd build
select=()
if [ "$all" = 0 ] && [ ${#ctest_args[@]} -eq 0 ]; then
  select=(-LE slow)
  slow=$(ctest -N -L slow | sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')
  echo "test: the fast set; not run here (label slow): ${slow}(bash scripts/test.sh --all runs them)"
fi
# OpenMP threads that wait passively: ctest -j runs two tests at once, each with up to two
# threads, and libgomp's spinning waiters then take the cores their peers need (measured:
# the two PerfDeterminism.EveryAlgorithm* tests side by side 27 s -> 3.7 s, same bits).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
test_start=$SECONDS
set +e
ctest --output-on-failure -j"$(nproc)" --timeout 600 --output-junit "$PWD/ctest-junit.xml" \
  ${select[@]+"${select[@]}"} ${ctest_args[@]+"${ctest_args[@]}"}
status=$?
set -e
tested=$((SECONDS - test_start))
printf 'date %s\ncores %s\nbuild_s %s\nctest_s %s\nload_before %s\nload_after %s\nselection %s\n' \
  "$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)" "$built" "$tested" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "${select[*]:-all} ${ctest_args[*]:-}" > test-run.txt
echo "test: build $built s, tests $tested s (load average $load_before at the start)"
exit $status
