#!/usr/bin/env bash
# A compiler and linker launcher (CMAKE_CXX_COMPILER_LAUNCHER, scripts/build.sh
# sets it): runs the command and appends one line to LOG,
#   <wall s> <cpu s (user + sys of the command)> <output file>
# which scripts/test-times.py reads for docs/test-times.md.
# Usage: time-step.sh LOG COMMAND...
log=$1
shift
out=?
prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  prev=$a
done
start=$(date +%s%N)
"$@"
rc=$?
end=$(date +%s%N)
# times: the shell's user and sys, then its children's ("0m1.234s 0m0.100s"); it
# must run in this shell (a subshell's children are not the command).
times > "$log.$$"
cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.2f", s }' "$log.$$")
rm -f "$log.$$"
printf '%.2f %s %s\n' "$(( (end - start) / 1000000 ))e-3" "$cpu" "${out#"$PWD"/}" >> "$log"
exit $rc
