#!/usr/bin/env bash
# The test suite, from nothing: installs the dependencies if missing, builds karman
# with its tests and runs ctest (unit, mpi and cli tiers; long validation cases are
# labelled `long` and left to the scripts/bench-* scripts).
# usage: scripts/test.sh [ctest arguments, e.g. -L unit]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh
. scripts/mpi-env.sh
cd build/release
# -j: the tests run side by side, one per core (a 2-rank test takes two: PROCESSORS 2)
ctest --output-on-failure -LE long -j "$(nproc)" "$@"
