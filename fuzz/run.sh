#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, AddressSanitizer + UBSan) and runs
# each for N seconds, two at a time. Fails if any fuzzer reports a crash, a
# leak, a sanitizer error, a timeout or running out of memory.
#
#   bash fuzz/run.sh [SECONDS_EACH=60] [BUILD_DIR=build-fuzz] [FUZZERS="csv libsvm idx result"]
#
# fuzz_records (record files, the loader and the read-ahead scan) is built
# too but left out of the default list, which .ci/run runs: name it to run
# it (bash fuzz/run.sh 60 build-fuzz records).
#
# Seeds come from fuzz/corpus/<name>/ (in the repository, read only); what the
# fuzzers find goes to BUILD_DIR/corpus/<name>/ and a crashing input to
# BUILD_DIR/artifacts/. Reproduce a finding with BUILD_DIR/fuzz_<name> FILE.
#
# FUZZ_MERGE=1 adds to fuzz/corpus/<name>/ the inputs of a clean run that reach
# coverage the seeds do not (libFuzzer's -merge=1): a long run offline
# (FUZZ_MERGE=1 bash fuzz/run.sh 600) grows the corpus that CI's short runs start from.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
BUILD=${2:-build-fuzz}
FUZZERS=${3:-"csv libsvm idx result"}
JOBS=${FUZZ_JOBS:-2}

CXX=${FUZZ_CXX:-clang++-14}
if ! command -v "$CXX" > /dev/null || [ ! -d /usr/lib/llvm-14/lib/clang ] ||
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1; then
  echo "fuzz: installing clang-14 and libclang-rt-14-dev"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev libomp-14-dev
fi

mkdir -p "$BUILD"
start=$(date +%s)
cmake -S fuzz -B "$BUILD" -DCMAKE_CXX_COMPILER="$CXX" > "$BUILD/build.log" 2>&1 || { cat "$BUILD/build.log"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" >> "$BUILD/build.log" 2>&1 || { tail -50 "$BUILD/build.log"; exit 1; }
echo "fuzz: built in $(( $(date +%s) - start )) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_one() {
  local name=$1
  mkdir -p "$BUILD/corpus/$name" "$BUILD/artifacts"
  # -rss_limit_mb/-malloc_limit_mb: a small input must not need gigabytes.
  if "$BUILD/fuzz_$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
       -max_len=8192 -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$name-" \
       "$BUILD/corpus/$name" "fuzz/corpus/$name" > "$BUILD/$name.log" 2>&1; then
    # How long the corpus needed: the coverage after the seeds (INITED), at the end, and
    # when the last input with new coverage came (its run number, in seconds at the mean rate).
    awk -v name="$name" -v secs="$SECONDS_EACH" '
      $2 == "INITED" { for (i = 1; i <= NF; i++) if ($i == "cov:") init = $(i + 1) }
      $2 == "NEW" { for (i = 1; i <= NF; i++) if ($i == "cov:") cov = $(i + 1); last = substr($1, 2) }
      /stat::number_of_executed_units/ { runs = $2 }
      END { if (cov == "") cov = init
            printf "fuzz: %s clean (%d runs in %d s; coverage %s after the seeds, %s at the end, the last new at run %d, about %.0f s)\n",
                   name, runs, secs, init, cov, last, runs ? secs * last / runs : 0 }' "$BUILD/$name.log"
  else
    echo "fuzz: $name FAILED"; tail -60 "$BUILD/$name.log"; return 1
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    local before
    before=$(ls "fuzz/corpus/$name" | wc -l)
    "$BUILD/fuzz_$name" -merge=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=8192 \
      "fuzz/corpus/$name" "$BUILD/corpus/$name" > "$BUILD/$name-merge.log" 2>&1 ||
      { echo "fuzz: $name merge FAILED"; tail -20 "$BUILD/$name-merge.log"; return 1; }
    echo "fuzz: $name merged: fuzz/corpus/$name $before -> $(ls "fuzz/corpus/$name" | wc -l) inputs"
  fi
}
export -f run_one
export BUILD SECONDS_EACH
failed=0
printf '%s\n' $FUZZERS | xargs -P "$JOBS" -I{} bash -c 'run_one {}' || failed=1
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a fuzzer found a problem; inputs in $BUILD/artifacts/"
  exit 1
fi
echo "fuzz: all clean in $(( $(date +%s) - start )) s"
