#!/usr/bin/env bash
# Laminar NACA 0012 at Re = 1000: every figure of cases/naca0012-laminar/README.md.
#  1. far field: level 1, alpha = 4 deg, far-field radius R = 15, 30, 60, 120 chords;
#  2. validation: alpha = 0, 2, 4, 5 deg on mesh levels 0, 1, 2 (R = 30), c_D and c_L with
#     their pressure and viscous parts, against the published values (validation.md, .png);
#  3. optimization: optimize.yaml (level 1, lift held, thickness >= NACA 0012 at 0.1 ... 0.8),
#     its history, the lift held, the shapes and the thicknesses (optimization.md, .png), checked:
#     drag lower, |c_L - target| <= 1e-6, every thickness constraint met, optimized.msh re-run
#     gives the reported drag and lift.
# usage: bash cases/naca0012-laminar/run.sh [full|quick]
#   quick: levels 0 and 1, far field R = 30 and 60, the optimization on level 0 (its own lift
#   target: c_L of the NACA 0012 on level 0 from step 2), at most 25 evaluations.
# environment: KARMAN (default build/release/karman), NP (2 ranks), OUT (out/naca0012-laminar,
# quick: out/naca0012-laminar-quick);
# the PNGs go to OUT/images (and, with IMAGES=1, to cases/naca0012-laminar/images).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
karman=${KARMAN:-$root/build/release/karman}
np=${NP:-2}
mode=${1:-full}
suffix=
[ "$mode" = quick ] && suffix=-quick
out=${OUT:-$root/out/naca0012-laminar$suffix}
py=/usr/bin/python3
. "$root/scripts/mpi-env.sh"
mkdir -p "$out/images"
log() { echo "run.sh: $*"; }

# the free stream at alpha degrees and the wind axes: --set options for karman
wind() {
  $py - "$1" <<'PY'
import math, sys
a = math.radians(float(sys.argv[1])); c, s = math.cos(a), math.sin(a)
u = f"[{c:.16g},{s:.16g}]"
print(f"--set boundaries.farfield.velocity={u} --set initial.velocity={u} "
      f"--set objective.drag_direction={u} --set objective.lift_direction=[{-s:.16g},{c:.16g}]")
PY
}
# karman run unless OUT/summary.json is there already (delete a folder to recompute it)
solve() {
  local dir=$1
  shift
  [ -s "$dir/summary.json" ] && return 0
  mkdir -p "$(dirname "$dir")"
  log "karman run -o $dir $*"
  # shellcheck disable=SC2046
  mpirun -n "$np" "$karman" run "$here/case.yaml" -o "$dir" --set output.vtk=false "$@" > "$dir.log" 2>&1 ||
    { tail -5 "$dir.log"; exit 1; }
}

if [ "$mode" = quick ]; then levels="0 1" radii="30 60" opt_level=0; else levels="0 1 2" radii="15 30 60 120" opt_level=1; fi

# 1. far field
for R in $radii; do
  msh=$out/farfield/naca0012-L1-R$R.msh
  mkdir -p "$out/farfield"
  [ -s "$msh" ] || gmsh "$here/naca0012.geo" -2 -setnumber level 1 -setnumber R "$R" -format msh41 -bin \
    -nt 1 -v 1 -o "$msh" > /dev/null
  # shellcheck disable=SC2046
  solve "$out/farfield/R$R" --set mesh.file="$msh" $(wind 4)
done

# 2. validation
for level in $levels; do
  for alpha in 0 2 4 5; do
    # shellcheck disable=SC2046
    solve "$out/validation/L$level-a$alpha" --set mesh.level="$level" $(wind "$alpha")
  done
done
$py "$here/plot_case.py" validation "$out" --images "$out/images"
$py "$here/plot_case.py" mesh "$out" --images "$out/images"

# 3. optimization
opt=$out/optimize-L$opt_level
yaml=$here/optimize.yaml
extra=()
if [ "$opt_level" != 1 ]; then
  # the lift target of this level: c_L of the NACA 0012 at 4 degrees, rounded to 4 digits
  target=$($py -c "import json; print(f\"{json.load(open('$out/validation/L$opt_level-a4/summary.json'))['cl']:.4f}\")")
  yaml=$out/optimize-L$opt_level.yaml
  sed -e "s|file: naca0012.geo, level: 1|file: $here/naca0012.geo, level: $opt_level|" \
    -e "s|value: 0.2066,|value: $target,|" "$here/optimize.yaml" > "$yaml"
  grep -q "value: $target," "$yaml" || { echo "run.sh: optimize.yaml's lift line changed"; exit 1; }
  extra=(--set optimization.max_evaluations=25)
fi
if [ ! -s "$opt/summary.json" ]; then
  log "karman optimize $yaml -o $opt"
  start=$(date +%s)
  mpirun -n "$np" "$karman" optimize "$yaml" -o "$opt" "${extra[@]}" > "$opt.log" 2>&1 ||
    { tail -20 "$opt.log"; exit 1; }
  echo "$(($(date +%s) - start))" > "$opt/run_seconds.txt"
  echo "$np" > "$opt/ranks.txt"
fi
# the optimized mesh re-run by karman run: the same drag and lift as the optimizer reports
# shellcheck disable=SC2046
solve "$opt/rerun" --set mesh.file="$opt/optimized.msh" $(wind 4)
$py "$root/postprocess/plot_optimization.py" "$opt" "$out/images/optimization-history.png"
$py "$here/plot_case.py" optimization "$opt" --images "$out/images"
$py "$root/postprocess/plot_shapes.py" "$opt" -o "$out/images/shapes.png" --titles "NACA 0012 at Re 1000 and 4 degrees"
if [ "${IMAGES:-0}" = 1 ]; then
  cp "$out"/images/*.png "$here/images/"
  log "copied the PNGs to $here/images"
fi
log "done: $out/validation.md, $opt/optimization.md, $out/images/"
