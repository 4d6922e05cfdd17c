#!/usr/bin/env bash
# cases/naca0012-laminar/optimize.yaml on its coarsest mesh (level 0, 8.6k cells), 2 ranks:
# drag minimization of the NACA 0012 at Re = 1000, alpha = 4 deg, with the lift held (equality,
# tolerance 1e-8) and the thickness at x = 0.1 ... 0.8 at least the NACA 0012's.
#  1. karman run gives c_L of the NACA 0012 on level 0: the lift target (rounded to 4 digits);
#  2. karman optimize (at most 12 evaluations);
#  3. the case's own checks (cases/naca0012-laminar/plot_case.py optimization): the drag is
#     lower than the NACA 0012's, |c_L - target| <= 1e-6 at the best design, every thickness
#     constraint met (also on optimized.msh itself), and optimized.msh re-run by karman run
#     gives the optimizer's c_D (1e-7 relative) and c_L (1e-7);
#  4. the campaign on 1 rank takes the same designs (1e-8) to the same drag (1e-10 relative).
# A few minutes on 2 cores: ctest label `long` (not in `ctest -LE long`).
# usage: naca_optimize.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
case_dir=$src/cases/naca0012-laminar
mpirun -n 2 --oversubscribe "$karman" run "$case_dir/case.yaml" -o naca --set mesh.level=0 \
  --set mesh.cache_dir="$work/cache" --set output.vtk=false > naca.log 2>&1 ||
  { tail -5 naca.log; fail "karman run of the NACA 0012 on level 0"; }
target=$(/usr/bin/python3 -c "import json; print(f\"{json.load(open('naca/summary.json'))['cl']:.4f}\")")
sed -e "s|file: naca0012.geo, level: 1|file: $case_dir/naca0012.geo, level: 0, cache_dir: $work/cache|" \
  -e "s|value: 0.2066,|value: $target,|" "$case_dir/optimize.yaml" > optimize.yaml
grep -q "value: $target," optimize.yaml && grep -q "cache_dir: $work/cache" optimize.yaml ||
  fail "the mesh or lift line of optimize.yaml changed"
mpirun -n 2 --oversubscribe "$karman" optimize optimize.yaml -o opt --set optimization.max_evaluations=12 \
  --set optimization.vtk_every=0 > opt.log 2>&1 || { tail -20 opt.log; fail "karman optimize"; }
grep "optimizer:" opt.log
mpirun -n 2 --oversubscribe "$karman" run "$case_dir/case.yaml" -o opt/rerun --set mesh.file="$work/opt/optimized.msh" \
  --set output.vtk=false > rerun.log 2>&1 || { tail -5 rerun.log; fail "karman run of optimized.msh"; }
/usr/bin/python3 "$case_dir/plot_case.py" optimization opt --images "$work" > check.log 2>&1 ||
  { cat check.log; fail "the case's checks"; }
tail -1 check.log
# 4. the same campaign on 1 rank: the same designs and drag (to solver tolerance)
"$karman" optimize optimize.yaml -o np1 --set optimization.max_evaluations=12 --set optimization.vtk_every=0 \
  > np1.log 2>&1 || { tail -20 np1.log; fail "karman optimize on 1 rank"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
a, b = json.load(open("opt/summary.json")), json.load(open("np1/summary.json"))
da = [list(map(float, r[1:])) for r in list(csv.reader(open("opt/designs.csv")))[1:]]
db = [list(map(float, r[1:])) for r in list(csv.reader(open("np1/designs.csv")))[1:]]
dx = max(abs(x - y) for p, q in zip(da, db) for x, y in zip(p, q))
dj = abs(a["objective"] - b["objective"]) / a["objective"]
print(f"1 rank: {len(db)} evaluations (2 ranks: {len(da)}), designs within {dx:.1e}, best c_D within {dj:.1e}")
assert len(da) == len(db) and dx <= 1e-8 and dj <= 1e-10
PY
echo "naca_optimize: all checks passed"
