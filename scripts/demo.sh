#!/usr/bin/env bash
# The main demo, from nothing: installs the dependencies if missing, builds karman,
# solves the Schäfer-Turek DFG 2D-1 benchmark (steady flow past a cylinder, Re = 20)
# on 2 MPI ranks, prints c_D, c_L and delta p beside the published reference values,
# then solves the discrete adjoint of the drag and prints its gradients; ParaView files
# (flow, adjoint, surface sensitivity of the drag on the cylinder) go to out/demo-dfg-2d1/.
# Last, a short shape optimization (cases/dfg-2d1/optimize-cylinder.yaml: the cylinder's drag
# at fixed area and centroid, 20 evaluations on the coarse mesh, about half a minute) with its
# history plot, shape series and optimized mesh in out/demo-optimize/.
# usage: scripts/demo.sh [MESH_LEVEL]      (default 1: 20 653 cells, a few seconds)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
level=${1:-1}
bash scripts/install-deps.sh
bash scripts/build.sh
. scripts/mpi-env.sh
out=out/demo-dfg-2d1
mpirun -n 2 build/release/karman run cases/dfg-2d1/case.yaml -o "$out" --set mesh.level="$level"
/usr/bin/python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ref = {"cd": (5.57953523384, 5.57, 5.59), "cl": (0.010618948146, 0.0104, 0.0110),
       "delta_p": (0.11752016697, 0.1172, 0.1176)}
print(f"\nDFG 2D-1, {s['cells']} cells on {s['ranks']} ranks, {s['newton_iterations']} Newton iterations, "
      f"{s['wall_time']:.1f} s")
print(f"{'':8s}{'karman':>14s}{'reference':>16s}{'rel. error':>12s}   published bounds")
for key, (value, lo, hi) in ref.items():
    print(f"{key:8s}{s[key]:14.6f}{value:16.11f}{(s[key] - value) / value:+12.2e}   [{lo}, {hi}]")
PY
mpirun -n 2 build/release/karman adjoint cases/dfg-2d1/case.yaml -o "$out" --set mesh.level="$level" |
  grep -E "objective|adjoint:|dJ/d"
# a short shape optimization: the cylinder's drag at fixed area and centroid (coarse mesh)
opt=out/demo-optimize
mpirun -n 2 build/release/karman optimize cases/dfg-2d1/optimize-cylinder.yaml -o "$opt" |
  grep -E "optimize |evaluation +[0-9]+ |optimizer:|best design"
/usr/bin/python3 postprocess/plot_optimization.py "$opt"
/usr/bin/python3 postprocess/plot_shapes.py "$opt" --titles "DFG 2D-1 cylinder, drag at fixed area"
echo
echo "demo: ParaView: $root/$out/flow.pvd (velocity, pressure, vorticity),"
echo "      $root/$out/flow_cylinder.pvd (pressure coefficient, skin friction on the cylinder),"
echo "      $root/$out/adjoint.pvd (adjoint fields, dJ/dX), $root/$out/sensitivity_cylinder.pvd (dc_D/dn)"
echo "      history: $out/forces.csv, summary: $out/summary.json, gradients: $out/gradient.json"
echo "      shape optimization: $root/$opt/shape_cylinder.pvd (the wall per evaluation),"
echo "      $root/$opt/flow_optimized.pvd, history $opt/optimization.csv and $opt/optimization.png,"
echo "      the shapes (initial, in between, optimized) $opt/shapes.png,"
echo "      the optimized mesh $opt/optimized.msh (karman run ... --set mesh.file=$opt/optimized.msh)"
