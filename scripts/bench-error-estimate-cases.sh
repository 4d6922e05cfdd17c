#!/usr/bin/env bash
# The adjoint error estimate of c_D (adjoint.error_estimate) on more cases, levels 0..2 each:
# the unbounded cylinder at Re 40, the laminar NACA 0012 at 4 degrees (Re 1000), DFG 3D-1Z
# (hexahedra and prisms; reference c_D 6.18533, FeatFlow) and the RANS flat plate (TMR, SA-neg,
# Re 5e6; reference: karman's C_D extrapolated from levels 1-3, 0.0028827, cases/tmr-flat-plate).
# Per level: c_D, the estimated error, the corrected c_D, and both against the finest level's c_D
# and corrected c_D.  Prints the table and writes results/error-estimate-cases.md (the rows of the
# cases not run this time, "" levels, are kept from the file's last version).
# usage: scripts/bench-error-estimate-cases.sh [RANKS] [LEVELS_2D] [LEVELS_3D] [LEVELS_RANS]
#        (default: 2 "0 1 2" "0 1 2" "0 1 2")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
np=${1:-2}
levels2=${2-"0 1 2"}
levels3=${3-"0 1 2"}
levelsr=${4-"0 1 2"}
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
for l in $levelsr; do run flatplate $l cases/tmr-flat-plate/case.yaml; done
/usr/bin/python3 - "$out" "$levels2" "$levels3" "$levelsr" "$np" <<'PY'
import json, os, sys, datetime, platform
out, np = sys.argv[1], sys.argv[5]
levels2, levels3, levelsr = (a.split() for a in sys.argv[2:5])
cases = [("cylinder", "unbounded cylinder, Re 40", levels2, None, 6),
         ("naca0012", "laminar NACA 0012, Re 1000, 4°", levels2, None, 6),
         ("dfg3d", "DFG 3D-1Z (reference c_D 6.18533)", levels3, 6.18533, 6),
         ("flatplate", "RANS flat plate, SA-neg, Re 5e6 (reference: levels 1–3 extrapolated, "
          "0.0028827)", levelsr, 0.0028827, 8)]
lines = [f"Adjoint error estimate of c_D ({datetime.date.today()}, {platform.node()}, {np} ranks): "
         "each level against the finest level's c_D and corrected c_D", "",
         "| case | level | cells | c_D | estimated error | corrected c_D | finest c_D − c_D "
         "| finest corrected − corrected | reference − c_D | reference − corrected | estimate [s] "
         "| forward [s] |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
# the rows of a case not run this time: from the file's last version
previous = f"{out}/../error-estimate-cases.md"
kept = [line.rstrip("\n") for line in open(previous)] if os.path.exists(previous) else []
if any(not levels for _, _, levels, _, _ in cases):
    lines[0] += " (the rows of cases not run this time from the table's last version)"
for name, title, levels, ref, digits in cases:
    if not levels:
        lines += [line for line in kept if line.startswith(f"| {title} |")]
        continue
    f = lambda v: f"{v:.{digits}f}"
    g = {l: json.load(open(f"{out}/{name}-L{l}/gradient.json")) for l in levels}
    fin = g[levels[-1]]["error_estimate"]
    for l in levels:
        e = g[l]["error_estimate"]
        r1 = f"{ref - e['value']:+.2e}" if ref else ""
        r2 = f"{ref - e['corrected_value']:+.2e}" if ref else ""
        lines.append(f"| {title} | {l} | {g[l]['cells']} | {f(e['value'])} | "
                     f"{e['estimated_error']:+.2e} | {f(e['corrected_value'])} | "
                     f"{fin['value'] - e['value']:+.2e} | "
                     f"{fin['corrected_value'] - e['corrected_value']:+.2e} | {r1} | {r2} | "
                     f"{e['wall_time']:.1f} | {g[l]['forward_wall_time']:.1f} |")
text = "\n".join(lines) + "\n"
print(text)
open(f"{out}/../error-estimate-cases.md", "w").write(text)
PY
