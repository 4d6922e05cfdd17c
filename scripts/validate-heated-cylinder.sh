#!/usr/bin/env bash
# Validation of the passive scalar: the heated cylinder in an unbounded stream (cases/heated-
# cylinder: wall temperature 1, free stream 0, Pr = 0.7) at Re = 20 and 40, mean Nusselt number
# on mesh levels 0..2 (karman adjoint: the steady solve, Nu, and its gradient), against the
# computed reference of Lange, Durst & Breuer (1998): their fit of their own computations,
#   Nu = 0.082 Re^0.5 + 0.734 Re^x,  x = 0.05 + 0.226 Re^0.085   (Pr = 0.7)
# Writes results/heated-cylinder.{md,csv}.
# usage: scripts/validate-heated-cylinder.sh [LEVELS] [RANKS]   (default "0 1 2" 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2"}
np=${2:-2}
karman=${KARMAN:-$root/build/release/karman}
. scripts/mpi-env.sh
out=${VALIDATE_OUT:-$root/out/validate-heated-cylinder}
mkdir -p "$out" results
csv=results/heated-cylinder.csv
echo "re,level,cells,nusselt,reference,error_percent,cd,newton_iterations,wall_time_s" > "$csv"
for re in 20 40; do
  nu=$(/usr/bin/python3 -c "print(1.0 / $re)")
  kappa=$(/usr/bin/python3 -c "print(1.0 / $re / 0.7)")
  for level in $levels; do
    dir="$out/re$re-l$level"
    rm -rf "$dir"  # (karman adjoint would start from a flow.h5 left there)
    start=$(date +%s.%N)
    mpirun -n "$np" "$karman" adjoint cases/heated-cylinder/case.yaml -o "$dir" \
      --set mesh.level="$level" --set fluid.viscosity="$nu" --set scalar.diffusivity="$kappa" \
      > "$dir.log" 2>&1 || { tail -20 "$dir.log"; echo "FAIL: Re $re level $level"; exit 1; }
    end=$(date +%s.%N)
    /usr/bin/python3 - "$dir" "$re" "$level" "$start" "$end" >> "$csv" <<'PY'
import json, math, sys
d, re, level, t0, t1 = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
g = json.load(open(d + "/gradient.json"))
s = json.load(open(d + "/summary.json")) if __import__("os").path.exists(d + "/summary.json") else {}
nu = g["objective"]["value"]
x = 0.05 + 0.226 * re ** 0.085
ref = 0.082 * re ** 0.5 + 0.734 * re ** x
print(f"{int(re)},{level},{g['cells']},{nu:.5f},{ref:.4f},{100 * (nu - ref) / ref:.2f},"
      f"{s.get('cd', float('nan')):.4f},{s.get('newton_iterations', '')},{t1 - t0:.1f}")
PY
    tail -1 "$csv"
  done
done
/usr/bin/python3 - "$csv" > results/heated-cylinder.md <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("# Heated cylinder, Pr = 0.7: mean Nusselt number\n")
print("`scripts/validate-heated-cylinder.sh` (karman adjoint cases/heated-cylinder/case.yaml on "
      "each level; reference: Lange, Durst & Breuer 1998, fit of their computations).\n")
print("| Re | level | cells | Nu | reference | error [%] | c_D | Newton its | wall time [s] |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['re']} | {r['level']} | {r['cells']} | {r['nusselt']} | {r['reference']} | "
          f"{r['error_percent']} | {r['cd']} | {r['newton_iterations']} | {r['wall_time_s']} |")
PY
cat results/heated-cylinder.md
