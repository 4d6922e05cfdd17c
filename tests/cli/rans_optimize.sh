#!/usr/bin/env bash
# The turbulent airfoil optimization (cases/naca0012-rans/optimize.yaml: SA-neg, Re 6e6, drag
# minimized at c_L = 0.5 with the angle of attack a design variable, the thickness at ten
# stations held, 12 Hicks-Henne bumps) on its coarsest mesh (level 0, 6 080 cells, y+ about 1),
# 2 ranks:
#  1. karman verify: every design gradient -- the bumps through the mesh deformation's reverse,
#     the wall distance and the turbulence model, and the angle of attack through the far-field
#     stream and the turned force directions -- against fourth-order differences of re-solved
#     designs (1e-6), and the Taylor rates;
#  2. karman optimize (at most 12 evaluations): no failed evaluation, the best design's c_L within
#     1e-6 of 0.5 and its thickness constraints met, its drag below the first evaluation's
#     (whose c_L is that of the NACA 0012 at the start angle, 0.496) and below the drag of the
#     NACA 0012 trimmed to c_L 0.5 (its angle from the first evaluation's lift slope); the
#     summary's answer the best evaluation within the case's own lift tolerance (1e-8).
# About 4 minutes on 2 cores: ctest label `long`.
# usage: rans_optimize.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
case_file=$src/cases/naca0012-rans/optimize.yaml
common=(--set mesh.level=0 --set mesh.cache_dir="$work/cache")
mpirun -n 2 --oversubscribe "$karman" verify "$case_file" -o verify "${common[@]}" > verify.log 2>&1 ||
  { grep -E "FAILED|error" verify.log | head; fail "karman verify of the design gradients"; }
grep "all checks passed" verify.log
# the NACA 0012 trimmed to c_L 0.5: its angle from the start's lift and lift slope (verify.json)
trim=$(/usr/bin/python3 -c "
import json
v = json.load(open('verify/verify.json'))
a = 'boundaries.farfield.angle_of_attack@cruise'
print(4.5 + (0.5 - v['design_functions']['lift@cruise']) / v['design_gradient'][a]['lift@cruise'])")
mpirun -n 2 --oversubscribe "$karman" run "$case_file" -o trim "${common[@]}" --set output.vtk=false \
  --set boundaries.farfield.angle_of_attack="$trim" > trim.log 2>&1 || { tail -5 trim.log; fail "trim"; }
mpirun -n 2 --oversubscribe "$karman" optimize "$case_file" -o opt "${common[@]}" \
  --set optimization.max_evaluations=12 > opt.log 2>&1 || { tail -20 opt.log; fail "karman optimize"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
rows = list(csv.DictReader(open("opt/optimization.csv")))
s = json.load(open("opt/summary.json"))
failed = [r for r in rows if r["ok"] != "1"]
feasible = [r for r in rows if r["ok"] == "1" and abs(float(r["lift@cruise"]) - 0.5) <= 1e-6]
best = min(feasible, key=lambda r: float(r["objective"]))
thick = [k for k in rows[0] if k.startswith("thickness")]
first = rows[0]
print(f"{len(rows)} evaluations, {len(failed)} failed; first c_D {float(first['objective']):.7f} "
      f"(c_L {float(first['lift@cruise']):.6f}); best c_D {float(best['objective']):.7f} "
      f"(c_L {float(best['lift@cruise']):.8f}), evaluation {best['evaluation']}")
assert not failed, "failed evaluations"
for k in thick:
    assert float(best[k]) >= float(first[k]) * (1 - 1e-9), f"{k}: {best[k]} < {first[k]}"
assert float(best["objective"]) < float(first["objective"])
trim = json.load(open("trim/summary.json"))
print(f"NACA 0012 trimmed: c_D {trim['cd']:.7f}, c_L {trim['cl']:.6f}")
assert abs(trim["cl"] - 0.5) <= 1e-3
assert float(best["objective"]) < trim["cd"]
# the summary's answer is the optimizer's best: feasible within the case's lift tolerance, 1e-8
# (a design within 1e-6 but not 1e-8 of c_L 0.5 can be the best above and not the answer)
answer = min((r for r in rows if r["ok"] == "1" and abs(float(r["lift@cruise"]) - 0.5) <= 1e-8),
             key=lambda r: float(r["objective"]))
assert abs(s["objective"] - float(answer["objective"])) <= 1e-12 * float(answer["objective"])
PY
echo "rans_optimize: all checks passed"
