#!/usr/bin/env bash
# RANS NACA 0012 (TMR 2DN00, SA-neg, Re 6e6): karman run at the angles of attack and mesh levels
# given, with the shipped defaults, then the grid-convergence table of the 10-degree runs
# (postprocess/tmr_study.py naca0012) when three or more levels were run, and for every angle
# the c_p and c_f distributions of its converged levels beside TMR's CFL3D data
# (postprocess/plot_naca_wall.py: OUT/wall-alphaA.png).
# usage: bash cases/naca0012-rans/run.sh [ANGLES [LEVELS]]   (default "10" "0 1 2")
# environment: KARMAN (default build/release/karman), NP (ranks for levels >= 2; default 2),
# OUT (default out/naca0012-rans); OUT/aA-LN holds the run at A degrees on level N; MESH: another
# mesh.file (e.g. naca0012-rans-wake-strips.geo, the mesh of the 0-degree runs).
# usage example: MESH=naca0012-rans-wake-strips.geo bash cases/naca0012-rans/run.sh 0 "0 1 2"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
karman=${KARMAN:-$root/build/release/karman}
np=${NP:-2}
out=${OUT:-$root/out/naca0012-rans}
angles=${1:-10}
levels=${2:-0 1 2}
. "$root/scripts/mpi-env.sh"
mkdir -p "$out"
for a in $angles; do
  # the free stream U = (cos a, sin a) and the wind axes (drag along U, lift across it)
  mapfile -t wind < <(/usr/bin/python3 - "$a" <<'PY'
import math, sys
a = math.radians(float(sys.argv[1])); c, s = math.cos(a), math.sin(a)
u = f"[{c:.16g},{s:.16g}]"
for key in ("boundaries.farfield.velocity", "boundaries.outlet.velocity", "initial.velocity",
            "objective.drag_direction"):
    print(f"--set={key}={u}")
print(f"--set=objective.lift_direction=[{-s:.16g},{c:.16g}]")
PY
  )
  for level in $levels; do
    n=1
    [ "$level" -ge 2 ] && n=$np
    dir=$out/a$a-L$level
    echo "run.sh: alpha $a, level $level, $n rank(s): $dir"
    mpirun -n "$n" "$karman" run "$here/case.yaml" -o "$dir" --set mesh.level="$level" \
      ${MESH:+--set mesh.file="$MESH"} "${wind[@]}" > "$dir.log" 2>&1 || { tail -3 "$dir.log"; continue; }
    /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"  {s['newton_iterations']} Newton steps, C_D {s['cd']:.7f}, C_L {s['cl']:.7f}, fallback {s['linear_fallback']}\")" "$dir/summary.json"
  done
done
set -- $levels
if [ $# -ge 3 ] && [[ " $angles " == *" 10 "* ]]; then
  /usr/bin/python3 "$root/postprocess/tmr_study.py" naca0012 $(for l in $levels; do echo "$out/a10-L$l"; done)
fi
for a in $angles; do
  dirs=()
  for level in $levels; do
    [ -f "$out/a$a-L$level/flow_wall_0000.pvtu" ] && dirs+=("$out/a$a-L$level")
  done
  if [ ${#dirs[@]} -gt 0 ]; then
    /usr/bin/python3 "$root/postprocess/plot_naca_wall.py" --alpha "$a" "${dirs[@]}" \
      -o "$out/wall-alpha$a.png"
  fi
done
