#!/usr/bin/env bash
# Checks that every C++ file of the tree is formatted with the checked-in .clang-format:
# lists the files clang-format would change and exits 1 if there is one.
# usage: check_format.sh SOURCE_DIR
set -u
root=$1
cd "$root" || exit 1
command -v clang-format > /dev/null || { echo "check_format: clang-format not found (Debian: clang-format)"; exit 1; }
bad=0 n=0
while IFS= read -r f; do
  n=$((n + 1))
  if ! clang-format --dry-run -Werror --style=file "$f" > /dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done < <(find include src tests python examples -name '*.cpp' -o -name '*.hpp' | sort)
echo "check_format: $n files, $bad not formatted"
[ "$bad" -eq 0 ]
