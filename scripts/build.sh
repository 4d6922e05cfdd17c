#!/usr/bin/env bash
# Configures and builds karman (Release, with tests) in build/release.
# usage: scripts/build.sh [extra cmake arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build/release" -DCMAKE_BUILD_TYPE=Release "$@" > "$root/build-configure.log" 2>&1 ||
  { cat "$root/build-configure.log"; exit 1; }
rm -f "$root/build-configure.log"
cmake --build "$root/build/release" -j "$(nproc)"
