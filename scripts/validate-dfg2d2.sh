#!/usr/bin/env bash
# Validation of the unsteady solver on Schäfer-Turek DFG 2D-2 (Re = 100): the full case
# (cases/dfg-2d2, t in [0, 6], statistics over [4, 6]) for each (mesh level, dt) pair;
# c_D max, c_L max and the Strouhal number against the published intervals
# c_D,max in [3.22, 3.24], c_L,max in [0.99, 1.01], St in [0.295, 0.305].
# Writes the dt- and mesh-convergence table to results/dfg2d2-convergence.{md,csv}.
# usage: scripts/validate-dfg2d2.sh ["LEVEL:DT ..."] [RANKS]   (default "0:0.01 0:0.005 1:0.01 1:0.005 2:0.005" 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pairs=${1:-"0:0.01 0:0.005 1:0.01 1:0.005 2:0.005"}
np=${2:-2}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/dfg2d2
mkdir -p "$out"
for p in $pairs; do
  l=${p%%:*} dt=${p##*:}
  dir="$out/L$l-dt$dt"
  if [ -s "$dir/summary.json" ] && [ "${VALIDATE_RERUN:-0}" != 1 ]; then
    echo "validate-dfg2d2: level $l, dt $dt: done before ($dir)"
    continue
  fi
  echo "validate-dfg2d2: level $l, dt $dt on $np rank(s)"
  mpirun -n "$np" build/release/karman run cases/dfg-2d2/case.yaml -o "$dir" --set mesh.level="$l" \
    --set time.dt="$dt" --set output.vtk_every=1000000 > "$dir.log" 2>&1 || { tail -5 "$dir.log"; exit 1; }
done
/usr/bin/python3 - "$out" "$pairs" <<'PY'
import json, sys, datetime
out, pairs = sys.argv[1], sys.argv[2].split()
bounds = {"cd": (3.22, 3.24), "cl": (0.99, 1.01), "st": (0.295, 0.305)}
head = "| level | cells | dt | steps | c_D max | c_L max | St | periods | wall time [min] | ranks |"
lines = [f"DFG 2D-2 validation ({datetime.date.today()}): statistics over t in [4, 6]; published intervals "
         "c_D,max [3.22, 3.24], c_L,max [0.99, 1.01], St [0.295, 0.305] (✓: inside)", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,cells,dt,steps,cd_max,cl_max,strouhal,periods,wall_time,ranks"]
for p in pairs:
    l, dt = p.split(":")
    s = json.load(open(f"{out}/L{l}-dt{dt}/summary.json"))
    cd, cl, st = s["cd_stats"]["max"], s["cl_stats"]["max"], s["strouhal"]
    mark = lambda k, v: "✓" if bounds[k][0] <= v <= bounds[k][1] else ""
    lines.append(f"| {l} | {s['cells']} | {dt} | {s['steps']} | {cd:.4f}{mark('cd', cd)} | {cl:.4f}{mark('cl', cl)} "
                 f"| {st:.4f}{mark('st', st)} | {s['lift_periods']} | {s['wall_time'] / 60:.1f} | {s['ranks']} |")
    csv.append(f"{l},{s['cells']},{dt},{s['steps']},{cd:.6f},{cl:.6f},{st:.6f},{s['lift_periods']},{s['wall_time']:.1f},{s['ranks']}")
open(f"{out}-convergence.md", "w").write("\n".join(lines) + "\n")
open(f"{out}-convergence.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
