#!/usr/bin/env bash
# The tree's C++ in its style (.clang-format, clang-format 14):
#   bash scripts/format.sh           reformat every tracked .cpp/.hpp in place
#   bash scripts/format.sh --check   list the files that differ and fail (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$FORMAT" >/dev/null || { echo "format: $FORMAT not found (apt install clang-format-14)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [[ "${1:-}" == "--check" ]]; then
  bad=()
  for f in "${files[@]}"; do
    "$FORMAT" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (bash scripts/format.sh fixes them):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files in .clang-format's style"
else
  "$FORMAT" --style=file -i "${files[@]}"
fi
