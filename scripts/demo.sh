#!/usr/bin/env bash
# The main demo, from nothing: installs the dependencies if missing, builds karman,
# meshes the Schäfer-Turek DFG 2D-1 channel, distributes it over 2 MPI ranks, checks
# its geometry and writes ParaView files (partition and cell-quality fields) to
# out/demo-dfg-2d1/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh
. scripts/mpi-env.sh
out=out/demo-dfg-2d1
mpirun -n 2 build/release/karman mesh cases/dfg-2d1/case.yaml -o "$out"
echo
echo "demo: ParaView files: $root/$out/mesh.pvd (cells, with rank and quality fields)"
echo "      and $root/$out/boundary_<name>.pvd (one per boundary); summary: $out/summary.json"
