#!/usr/bin/env bash
# The adjoint error estimate of c_D (adjoint.error_estimate) on more cases, levels 0..2 each:
# the unbounded cylinder at Re 40, the laminar NACA 0012 at 4 degrees (Re 1000) and DFG 3D-1Z
# (hexahedra and prisms; reference c_D 6.18533, FeatFlow).  Per level: c_D, the estimated
# error, the corrected c_D, and both against the finest level's c_D and corrected c_D.
# Prints the table and writes results/error-estimate-cases.md.
# usage: scripts/bench-error-estimate-cases.sh [RANKS] [LEVELS_2D] [LEVELS_3D]
#        (default: 2 "0 1 2" "0 1 2")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
np=${1:-2}
levels2=${2:-"0 1 2"}
levels3=${3:-"0 1 2"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/error-estimate-cases
mkdir -p "$out"
run() { # name, level, case file
  local name=$1 l=$2 case=$3
  echo "bench-error-estimate-cases: $name level $l, $np rank(s)"
  mpirun -n "$np" build/release/karman adjoint "$case" -o "$out/$name-L$l" --set mesh.level="$l" \
    --set adjoint.error_estimate=true --set output.vtk=false > "$out/$name-L$l.log" 2>&1 ||
    { tail -5 "$out/$name-L$l.log"; exit 1; }
}
for l in $levels2; do run cylinder $l cases/cylinder-unbounded/case.yaml; done
for l in $levels2; do run naca0012 $l cases/naca0012-laminar/case.yaml; done
for l in $levels3; do run dfg3d $l cases/dfg-3d1z/case.yaml; done
/usr/bin/python3 - "$out" "$levels2" "$levels3" "$np" <<'PY'
import json, sys, datetime, platform
out, levels2, levels3, np = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
cases = [("cylinder", "unbounded cylinder, Re 40", levels2, None),
         ("naca0012", "laminar NACA 0012, Re 1000, 4°", levels2, None),
         ("dfg3d", "DFG 3D-1Z (reference c_D 6.18533)", levels3, 6.18533)]
lines = [f"Adjoint error estimate of c_D ({datetime.date.today()}, {platform.node()}, {np} ranks): "
         "each level against the finest level's c_D and corrected c_D", "",
         "| case | level | cells | c_D | estimated error | corrected c_D | finest c_D − c_D "
         "| finest corrected − corrected | reference − c_D | reference − corrected | estimate [s] "
         "| forward [s] |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for name, title, levels, ref in cases:
    if not levels:
        continue
    g = {l: json.load(open(f"{out}/{name}-L{l}/gradient.json")) for l in levels}
    fin = g[levels[-1]]["error_estimate"]
    for l in levels:
        e = g[l]["error_estimate"]
        r1 = f"{ref - e['value']:+.2e}" if ref else ""
        r2 = f"{ref - e['corrected_value']:+.2e}" if ref else ""
        lines.append(f"| {title} | {l} | {g[l]['cells']} | {e['value']:.6f} | "
                     f"{e['estimated_error']:+.2e} | {e['corrected_value']:.6f} | "
                     f"{fin['value'] - e['value']:+.2e} | "
                     f"{fin['corrected_value'] - e['corrected_value']:+.2e} | {r1} | {r2} | "
                     f"{e['wall_time']:.1f} | {g[l]['forward_wall_time']:.1f} |")
text = "\n".join(lines) + "\n"
print(text)
open(f"{out}/../error-estimate-cases.md", "w").write(text)
PY
