#!/usr/bin/env bash
# karman optimize on a short campaign (DFG 2D-1 channel, coarse mesh, Re = 20): the cylinder's
# drag minimized with an FFD box around it, its area and centroid held (equality constraints)
# and its lift coefficient bounded (a flow constraint: one more adjoint), SLSQP, 20 evaluations:
#  1. the campaign lowers the drag, holds the area to 1e-8 relative at the best design, and its
#     optimized.msh re-run with `karman run` gives the reported drag (to 1e-7);
#  2. the same campaign (stopped after 8 evaluations: the budget only stops the path, it does not
#     change it) killed with SIGKILL after its third evaluation and restarted with --restart
#     replays the journal (no finished evaluation recomputed) and follows the same path: the
#     designs and objectives of its 8 evaluations equal the uninterrupted run's first 8 (bitwise
#     designs, objectives to 1e-12);
#  3. a design box that holds no vertex of its wall is one error line naming the key;
#  4. 2 ranks take the same first evaluations; the wall-shape CSV files are rank-independent (the
#     shape gradient to 1e-8) and
#     the optimized one holds the cylinder of optimized.msh (postprocess/plot_shapes.py draws them);
#     their shape gradient dJ/dd_B chained through the FFD box equals the optimizer's dJ/da;
#  5. (2 ranks) a best design that cannot be evaluated again at the end (a fault injected) leaves
#     summary.json with the design and the figures of the evaluation that found it, and an error.
# usage: optimize.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# the demo case (cases/dfg-2d1/optimize-cylinder.yaml), its mesh cached in the work folder
sed "s|file: dfg-channel.geo, level: 0|file: $src/cases/dfg-2d1/dfg-channel.geo, level: 0, cache_dir: $work/cache|" \
  "$src/cases/dfg-2d1/optimize-cylinder.yaml" > case.yaml
grep -q "cache_dir: $work/cache" case.yaml || fail "the demo case's mesh line changed"

"$karman" optimize case.yaml -o ref > ref.log 2>&1 || { tail -20 ref.log; fail "uninterrupted campaign"; }
for f in optimization.csv designs.csv optimized.msh summary.json shape_cylinder.pvd flow.pvd flow_optimized.pvd; do
  [ -s "ref/$f" ] || fail "ref/$f missing"
done

# 1. lower drag, area held, optimized.msh re-runs to the same drag
"$karman" run case.yaml -o rerun --set mesh.file="$work/ref/optimized.msh" > rerun.log 2>&1 ||
  { tail -5 rerun.log; fail "karman run on optimized.msh"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
rows = list(csv.DictReader(open("ref/optimization.csv")))
s = json.load(open("ref/summary.json"))
j0, jb = float(rows[0]["objective"]), s["objective"]
area = s["constraints"]["area(cylinder)"]
print(f"drag {j0:.8f} -> {jb:.8f} ({100 * (jb - j0) / j0:+.3f} %) in {len(rows)} evaluations; "
      f"area {area['value']:.12g} (bound {area['bound']:.12g})")
assert jb < j0 - 1e-4, "the drag did not decrease"
assert abs(area["value"] - area["bound"]) <= 1e-8 * abs(area["bound"]), "area not held"
rerun = json.load(open("rerun/summary.json"))["cd"]
print(f"optimized.msh re-run: c_D {rerun:.10f} (optimizer: {jb:.10f})")
assert abs(rerun - jb) <= 1e-7 * abs(jb), "the optimized mesh does not give the reported drag"
PY

# 2. killed after the third evaluation, restarted (8 evaluations: 5 computed after the restart
# instead of 17)
"$karman" optimize case.yaml -o killed --set optimization.max_evaluations=8 > killed.log 2>&1 &
pid=$!
for _ in $(seq 1 900); do
  grep -q "evaluation   3 " killed.log && break
  sleep 0.1
done
kill -9 $pid
wait $pid 2> /dev/null
grep -q "best design" killed.log && fail "the campaign finished before it could be killed"
"$karman" optimize case.yaml -o killed --restart --set optimization.max_evaluations=8 > restart.log 2>&1 ||
  { tail -20 restart.log; fail "restart"; }
grep -q "evaluations replayed from the journal" restart.log || fail "no replay in the restart log"
/usr/bin/python3 - <<'PY' || exit 1
import csv
ref = list(csv.DictReader(open("ref/optimization.csv")))
got = list(csv.DictReader(open("killed/optimization.csv")))
dref = list(csv.reader(open("ref/designs.csv")))
dgot = list(csv.reader(open("killed/designs.csv")))
replayed = sum(int(r["replayed"]) for r in got)
assert replayed >= 3, f"only {replayed} evaluations replayed"
assert len(got) == 8 and len(ref) > 8, f"{len(got)} evaluations after the restart, {len(ref)} uninterrupted"
assert dgot == dref[:len(dgot)], "the restarted campaign took other designs"
worst = max(abs(float(a["objective"]) - float(b["objective"])) / abs(float(a["objective"]))
            for a, b in zip(ref, got) if a["ok"] == "1")
print(f"restart: {replayed} evaluations replayed, {len(got) - replayed} computed; same designs; "
      f"objectives within {worst:.1e} of the uninterrupted run")
assert worst <= 1e-12
PY

# 4. on 2 ranks: the same first evaluations (to solver tolerance)
mpirun -n 2 --oversubscribe "$karman" optimize case.yaml -o np2 --set optimization.max_evaluations=6 \
  > np2.log 2>&1 || { tail -20 np2.log; fail "campaign on 2 ranks"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv
ref = list(csv.DictReader(open("ref/optimization.csv")))
got = list(csv.DictReader(open("np2/optimization.csv")))
dref = [list(map(float, r[1:])) for r in list(csv.reader(open("ref/designs.csv")))[1:]]
dgot = [list(map(float, r[1:])) for r in list(csv.reader(open("np2/designs.csv")))[1:]]
n = len(got)
jw = max(abs(float(a["objective"]) - float(b["objective"])) / abs(float(a["objective"])) for a, b in zip(ref[:n], got))
xw = max(abs(x - y) for a, b in zip(dref[:n], dgot) for x, y in zip(a, b))
print(f"2 ranks: {n} evaluations, objectives within {jw:.1e} (relative), designs within {xw:.1e} of 1 rank")
assert n == 6 and jw <= 1e-8 and xw <= 1e-8
PY
# the wall shapes as CSV (postprocess/plot_shapes.py): the same file on 1 and 2 ranks for the
# reference design, and the optimized one holds exactly the cylinder nodes of optimized.msh
/usr/bin/python3 - <<'PY' || exit 1
import csv
a = list(csv.reader(open("ref/shapes/shape_0000.csv")))
b = list(csv.reader(open("np2/shapes/shape_0000.csv")))
assert a[0] == b[0] and len(a) == len(b), "another set of faces on 2 ranks"
assert all(r[:5] == q[:5] for r, q in zip(a[1:], b[1:])), "other wall coordinates on 2 ranks"
gmax = max(abs(float(v)) for r in a[1:] for v in r[5:])
gdiff = max(abs(float(v) - float(w)) for r, q in zip(a[1:], b[1:]) for v, w in zip(r[5:], q[5:]))
print(f"shapes/shape_0000.csv: same faces and coordinates on 2 ranks, dJ/dd_B within {gdiff / gmax:.1e}")
assert gdiff <= 1e-8 * gmax
PY
/usr/bin/python3 - <<'PY' || exit 1
import csv
rows = [r for r in csv.DictReader(open("ref/shapes/optimized.csv")) if r["wall"] == "cylinder"]
csv_pts = {(float(r["x"]), float(r["y"])) for r in rows}
lines = open("ref/optimized.msh").read().split("\n")
names = {l.split()[2].strip('"'): int(l.split()[1]) for l in lines[lines.index("$PhysicalNames") + 2:lines.index("$EndPhysicalNames")]}
nodes = {}
for l in lines[lines.index("$Nodes") + 2:lines.index("$EndNodes")]:
    i, x, y, z = l.split()
    nodes[int(i)] = (float(x), float(y))
msh_pts = set()
for l in lines[lines.index("$Elements") + 2:lines.index("$EndElements")]:
    e = list(map(int, l.split()))
    if e[1] == 1 and e[3] == names["cylinder"]:
        msh_pts |= {nodes[e[5]], nodes[e[6]]}
print(f"shapes/optimized.csv: {len(rows) // 2} cylinder faces, {len(csv_pts)} vertices = optimized.msh's")
assert csv_pts == msh_pts and len(rows) == 2 * len(csv_pts)
PY
/usr/bin/python3 - <<'PY' || exit 1
import csv, json, math
# the shape gradient dJ/dd_B of the cylinder vertices in shapes/shape_0000.csv, chained through
# the FFD box of the case (Bernstein polynomials, eq. 23 of src/adjoint/README.md), equals the
# design gradient dJ/da the optimizer got (the journal's df of evaluation 0)
j = [json.loads(l) for l in open("ref/optimization-journal.jsonl")]
names, df = j[0]["names"], j[1]["df"]
g = {}
for r in csv.DictReader(open("ref/shapes/shape_0000.csv")):
    if r["wall"] == "cylinder":
        g[(float(r["x"]), float(r["y"]))] = (float(r["gx"]), float(r["gy"]))
B = lambda i, s: math.comb(4, i) * s**i * (1 - s)**(4 - i)
worst = 0
for name, d in zip(names, df):
    i, k = map(int, name[name.index("[") + 1:name.index("]")].split(","))
    ax = 0 if name.endswith(".x") else 1
    chain = sum(B(i, (x - 0.13) / 0.14) * B(k, (y - 0.13) / 0.14) * gv[ax] for (x, y), gv in g.items())
    worst = max(worst, abs(chain - d) / max(abs(v) for v in df))
print(f"shapes/shape_0000.csv: dJ/dd_B on {len(g)} cylinder vertices chained through the FFD box "
      f"= the optimizer's dJ/da to {worst:.1e} (relative to max |dJ/da|)")
assert worst <= 1e-10
PY
/usr/bin/python3 "$src/postprocess/plot_shapes.py" ref -o shapes.png > /dev/null || fail "plot_shapes.py"

# 5. karman verify: dJ/da and dc/da through deformation and re-solve against finite differences
# (the design gradients are the point here: of the parameters only the viscosity; every parameter
# of the DFG 2D-1 case is verified by adjoint.sh).  The case's design, constraints and flow in the
# coarse cylinder channel of the control tests (tests/data/control-cylinder.geo: the same cylinder
# and FFD box, 452 cells instead of 5634): 48 re-solves with deformation and 2 Taylor tests, whose
# agreement with the adjoint does not depend on the mesh (on the DFG mesh they took 168 of the 272
# s of this test on a busy machine)
"$karman" verify case.yaml -o verify --set "adjoint.parameters=[fluid.viscosity]" \
  --set mesh.file="$src/tests/data/control-cylinder.geo" > verify.log 2>&1 ||
  { grep -E "FAILED|error" verify.log | head; fail "karman verify of the design gradients"; }
/usr/bin/python3 - <<'PY' || exit 1
import json
v = json.load(open("verify/verify.json"))
d = v["design"]
worst = max(f["relative_difference"] for var in d.values() for f in var.values())
rates = [s["rate"] for s in v["design_taylor"][1:]]
n = sum(len(var) for var in d.values())
print(f"verify: {len(d)} design variables x {n // len(d)} functions, max relative difference "
      f"adjoint vs FD {worst:.1e}; Taylor rates {', '.join(f'{r:.3f}' for r in rates)}")
assert worst <= 1e-6 and min(rates) >= 1.9 and v["failures"] == 0
PY

# 3. a box without the wall's vertices
sed 's/origin: \[0.13, 0.13\]/origin: [0.5, 0.1]/' case.yaml > bad.yaml
"$karman" optimize bad.yaml -o bad > bad.log 2>&1 && fail "an FFD box without wall vertices was accepted"
grep -q "design\[0\]" bad.log || { tail -3 bad.log; fail "the error does not name design[0]"; }
grep "error:" bad.log | head -1

# 5. the best design cannot be evaluated again at the end (KARMAN_TEST_FAIL_REEVALUATION; 2
# ranks, the uninterrupted campaign's journal replayed): summary.json still has its design,
# objective, constraints and KKT check, from the evaluation that found it; the error says what was
# not written; the history files stay whole
rm -rf refail && cp -r ref refail && rm -rf refail/summary.json refail/optimized.msh refail/flow_optimized*
KARMAN_TEST_FAIL_REEVALUATION=1 mpirun -n 2 --oversubscribe -x KARMAN_TEST_FAIL_REEVALUATION \
  "$karman" optimize case.yaml -o refail --restart > refail.log 2>&1 &&
  fail "a best design that could not be evaluated again ended without an error"
grep -q "error: the best design of the optimizer could not be evaluated again" refail.log ||
  { tail -5 refail.log; fail "no error line for the best design"; }
[ -e refail/optimized.msh ] && fail "optimized.msh written without the best design's evaluation"
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
ref, got = json.load(open("ref/summary.json")), json.load(open("refail/summary.json"))
assert got["reevaluated"] is False and "KARMAN_TEST_FAIL_REEVALUATION" in got["reevaluation_failure"]
assert got["design"] == ref["design"], "another design"
rows = list(csv.DictReader(open("refail/optimization.csv")))
k = got["best_evaluation"]
assert len(rows) == len(list(csv.DictReader(open("ref/optimization.csv")))), "history rows lost"
# (optimization.csv has 13 significant digits)
assert abs(float(rows[k]["objective"]) - got["objective"]) <= 1e-11 * abs(got["objective"]), \
    "not the figures of the evaluation that found it"
dj = abs(got["objective"] - ref["objective"]) / abs(ref["objective"])
dc = max(abs(got["constraints"][n]["value"] - c["value"]) for n, c in ref["constraints"].items())
dk = abs(got["kkt"]["residual"] - ref["kkt"]["residual"])
print(f"best design not evaluated again: evaluation {k}'s figures: objective within {dj:.1e} of the "
      f"evaluation again, constraints within {dc:.1e}, KKT residual within {dk:.1e}")
assert dj <= 1e-9 and dc <= 1e-9 and dk <= 1e-6 * max(1.0, ref["kkt"]["residual"])
PY
echo "optimize: all checks passed"
