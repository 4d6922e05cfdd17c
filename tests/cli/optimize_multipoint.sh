#!/usr/bin/env bash
# karman optimize on the multipoint case cases/naca0012-laminar/multipoint.yaml (three angles of
# attack, each point's lift held and its angle a design variable, the mean drag minimized) on the
# coarsest mesh of its geometry (gmsh -setnumber level -1: 24 segments per side), 6 evaluations:
#  1. on 2 ranks, the points on 2 groups of one rank (points_mode concurrent, uninterrupted) and
#     one after the other on both ranks (sequential, killed with SIGKILL after its third
#     evaluation and restarted with --restart: it replays the journal, and its first new
#     evaluation starts each point from that point's flow of the last good journaled evaluation,
#     OUTDIR/optimization-state-POINT.h5: in fewer Newton steps than the cold start of evaluation
#     0, at most one more than the uninterrupted campaign's) take the same designs (to 1e-8) with
#     the same objectives (to 1e-8); the same killed campaign restarted on 1 rank too;
#  2. the objective is the weighted sum of the points' objectives (optimization.csv), and the
#     summary's per-point values and angles are those of the best design;
#  3. bad input, one error line each: an empty points list, a constraint's unknown point, a
#     constraint with a point in a case without points, a restart whose point flow files are gone;
#     a best design that cannot be evaluated again at the end (a fault injected) leaves
#     summary.json with the figures of the evaluation that found it;
#  4. karman verify on a reduced copy (2 points, one bump, one point's angle free): every design
#     derivative of the weighted objective and of the constraints against finite differences of
#     re-solved designs and Taylor rates (verify.json: no failure; the angle's derivatives among
#     them, nonzero for its own point's lift, exactly 0 for the other point's).
# usage: optimize_multipoint.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
gmsh -2 -setnumber level -1 "$src/cases/naca0012-laminar/naca0012.geo" -o naca.msh > gmsh.log 2>&1 ||
  { tail -5 gmsh.log; fail "gmsh"; }
cp "$src/cases/naca0012-laminar/multipoint.yaml" case.yaml
set_common=(--set mesh.file="$work/naca.msh" --set optimization.max_evaluations=6)
run() { # $1 output folder, rest: more arguments
  local out=$1
  shift
  mpirun -n 2 --oversubscribe "$karman" optimize case.yaml -o "$out" "${set_common[@]}" "$@" \
    > "$out.log" 2>&1 || { tail -20 "$out.log"; fail "campaign $out"; }
}

# 1. concurrent; sequential, killed after the third evaluation and restarted
run concurrent --set optimization.points_mode=concurrent
grep -q "3 points (concurrent on 2 groups of ranks)" concurrent.log || fail "not concurrent"
mpirun -n 2 --oversubscribe "$karman" optimize case.yaml -o sequential "${set_common[@]}" \
  --set optimization.points_mode=sequential > killed.log 2>&1 &
pid=$!
for _ in $(seq 1 900); do
  grep -q "evaluation   2 " killed.log && break
  sleep 0.1
done
kill -9 $pid
wait $pid 2> /dev/null
grep -q "best design" killed.log && fail "the campaign finished before it could be killed"
grep -q "3 points (one after the other)" killed.log || fail "not sequential"
cp -r sequential killed-np1 # (the same kill, restarted on 1 rank below)
run sequential --set optimization.points_mode=sequential --restart
"$karman" optimize case.yaml -o killed-np1 "${set_common[@]}" --set optimization.points_mode=sequential \
  --restart > killed-np1.log 2>&1 || { tail -20 killed-np1.log; fail "restart on 1 rank"; }
grep -q "each point's flow of evaluation 2 started" killed-np1.log || fail "no warm restart on 1 rank"
grep -q "evaluations replayed from the journal; each point's flow of evaluation 2 started" \
  sequential.log || { grep restart: sequential.log; fail "no warm-started replay in the restart log"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
def load(d):
    rows = list(csv.DictReader(open(f"{d}/optimization.csv")))
    designs = [list(map(float, r[1:])) for r in list(csv.reader(open(f"{d}/designs.csv")))[1:]]
    return rows, designs
rc, dc = load("concurrent")
rs, ds = load("sequential")
r1, d1 = load("killed-np1")
x1 = max(abs(a - b) for u, v in zip(dc, d1) for a, b in zip(u, v))
print(f"restarted on 1 rank: designs within {x1:.1e} of the uninterrupted 2-rank campaign's")
assert len(r1) == 6 and x1 <= 1e-8
replayed = sum(int(r["replayed"]) for r in rs)
assert len(rc) == len(rs) == 6 and replayed >= 3, (len(rc), len(rs), replayed)
xw = max(abs(a - b) for u, v in zip(dc, ds) for a, b in zip(u, v))
jw = max(abs(float(a["objective"]) - float(b["objective"])) / abs(float(b["objective"]))
         for a, b in zip(rc, rs))
print(f"concurrent vs sequential ({replayed} evaluations replayed after the kill): designs within "
      f"{xw:.1e}, objectives within {jw:.1e}")
assert xw <= 1e-8 and jw <= 1e-8
first = next(i for i, r in enumerate(rs) if r["replayed"] == "0")
for p in ("a2", "a4", "a5"):
    n, warm, cold = (int(r[f"newton@{p}"]) for r in (rs[first], rc[first], rs[0]))
    print(f"{p}: the first evaluation after the restart {n} Newton steps (uninterrupted {warm}, "
          f"cold start {cold})")
    assert n < cold and n <= warm + 1, (p, n, warm, cold)
# 2. J = sum of w_k J_k at the points (weights 1/3); the summary
for r in rs:
    j = sum(float(r[f"J@{p}"]) for p in ("a2", "a4", "a5")) / 3
    assert abs(j - float(r["objective"])) <= 1e-11 * abs(j), (j, r["objective"])  # (13 digits)
s = json.load(open("sequential/summary.json"))
names = list(csv.reader(open("sequential/designs.csv")))[0][1:]
assert names[-3:] == [f"boundaries.farfield.angle_of_attack@{p}" for p in ("a2", "a4", "a5")], names
for p in s["points"]:
    assert abs(p["cd"] - p["J"]) <= 1e-14, p
assert abs(sum(p["J"] * p["weight"] for p in s["points"]) - s["objective"]) <= 1e-12
print("angles " + ", ".join(f"{s['design'][n]:.4f}" for n in names[-3:]) +
      "; c_L " + ", ".join(f"{p['cl']:.5f}" for p in s["points"]) + f"; mean c_D {s['objective']:.8f}")
PY

# 3. bad input: one error line each
bad() { # $1 case file, $2 expected fragment
  "$karman" optimize "$1" -o bad "${set_common[@]}" > bad.log 2>&1 && fail "accepted: $1"
  [ "$(grep -c '^karman: error:' bad.log)" = 1 ] || { cat bad.log; fail "not one error line: $1"; }
  grep -qF "$2" bad.log || { cat bad.log; fail "expected '$2'"; }
}
sed '/^points:/,/^constraints:/{/^constraints:/!d}' case.yaml > single.yaml
{ cat single.yaml; echo "points: []"; } > empty.yaml
sed 's/point: a2}/point: a3}/' case.yaml > unknown.yaml
bad empty.yaml "'points' must be a list of maps, at least one"
bad unknown.yaml "constraints[0].point: no point named 'a3'"
bad single.yaml "constraints[0].point: the case has no points: list"
# a restart whose point flow files are gone: one error line, on 2 ranks (both groups)
cp -r sequential nostate && rm -f nostate/optimization-state-a4*.h5
mpirun -n 2 --oversubscribe "$karman" optimize case.yaml -o nostate "${set_common[@]}" \
  --set optimization.points_mode=concurrent --restart > nostate.log 2>&1 && fail "restart without its flow files"
[ "$(grep -c '^karman: error:' nostate.log)" = 1 ] || { cat nostate.log; fail "not one error line: nostate"; }
grep -q "no saved flow state of evaluation 5 for every point in nostate (missing: optimization-state-a4.h5)" nostate.log || { cat nostate.log; fail "nostate message"; }
# the best design cannot be evaluated again at the end (KARMAN_TEST_FAIL_REEVALUATION, the
# concurrent campaign's journal replayed): summary.json from the evaluation that found it (its
# design, objective and points' values), an error line, no optimized files
rm -rf refail && cp -r concurrent refail && rm -rf refail/summary.json refail/optimized*
KARMAN_TEST_FAIL_REEVALUATION=1 mpirun -n 2 --oversubscribe -x KARMAN_TEST_FAIL_REEVALUATION \
  "$karman" optimize case.yaml -o refail "${set_common[@]}" --set optimization.points_mode=concurrent \
  --restart > refail.log 2>&1 && fail "a best design that could not be evaluated again ended without an error"
[ "$(grep -c '^karman: error:' refail.log)" = 1 ] || { tail -5 refail.log; fail "not one error line: refail"; }
grep -q "error: the best design of the optimizer could not be evaluated again" refail.log || fail "refail message"
/usr/bin/python3 - <<'PY' || exit 1
import json
ref, got = json.load(open("concurrent/summary.json")), json.load(open("refail/summary.json"))
assert got["reevaluated"] is False and got["design"] == ref["design"], "another design"
dj = abs(got["objective"] - ref["objective"]) / abs(ref["objective"])
dp = max(abs(a["cd"] - b["cd"]) / abs(a["cd"]) for a, b in zip(ref["points"], got["points"]))
print(f"multipoint best design not evaluated again: evaluation {got['best_evaluation']}'s figures, "
      f"objective within {dj:.1e}, points' c_D within {dp:.1e} of the evaluation again")
assert dj <= 1e-9 and dp <= 1e-8 and len(got["points"]) == len(ref["points"])
PY

# 4. karman verify of a multipoint case
sed -e 's/positions: \[0.05, 0.15, 0.3, 0.5, 0.7, 0.9\]/positions: [0.5]/' -e 's/surfaces: both/surfaces: upper/' \
  -e '/name: a5/,+1d' -e '/point: a5}/d' -e '/name: a4/,+1{s/,$/}/;/variable:/d}' case.yaml > verify.yaml
"$karman" verify verify.yaml -o verify --set mesh.file="$work/naca.msh" > verify.log 2>&1 ||
  { tail -30 verify.log; fail "karman verify of a multipoint case"; }
/usr/bin/python3 - <<'PY' || exit 1
import json
v = json.load(open("verify/verify.json"))
a = "boundaries.farfield.angle_of_attack@a2"
assert v["failures"] == 0 and a in v["design"], sorted(v["design"])
d = v["design"][a]
print(f"verify: {len(v['design'])} variables differenced; dc_L/dalpha at a2 {d['lift@a2']['adjoint']:.6e} "
      f"(differences {d['lift@a2']['fd']:.6e}), at a4 {d['lift@a4']['adjoint']}")
assert abs(d["lift@a2"]["adjoint"]) > 1e-3 and d["lift@a4"]["adjoint"] == 0
PY
echo "PASS"
