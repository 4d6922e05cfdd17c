#!/usr/bin/env bash
# A shape-optimization campaign killed with SIGKILL inside a phase of an evaluation, then
# restarted with --restart, follows the same path as an uninterrupted one
# (cases/dfg-2d1/optimize-cylinder.yaml, level 0, 6 evaluations).  KARMAN_TEST_KILL=PHASE:4 makes
# karman kill itself inside that phase of the 4th evaluation it computes (driver/shape_evaluation):
# forward (after the first Newton iteration), adjoint (after the drag adjoint, before the lift
# constraint's) and deformation (after the mesh deformation solve); the adjoint on 2 ranks.
# For each phase:
#  - the killed run stops with a non-zero status before its end, having finished 3 evaluations;
#  - what it wrote before the kill is intact: the journal (a header and 3 complete records with
#    the uninterrupted run's designs, objectives, constraints and gradients), optimization.csv and
#    designs.csv (their first 3 rows equal the uninterrupted run's but for the timings), the
#    ParaView series (well-formed .pvd files whose entries exist), and the warm-start state
#    optimization-state.h5 (of evaluation 2, readable);
#  - the restarted campaign replays the 3 journaled evaluations and then takes the same designs
#    as the uninterrupted run, with the same objectives and best design.
# On 1 rank "the same" is bitwise (designs, journal records, csv rows; objectives to 1e-12).  On 2
# ranks two uninterrupted runs already differ in the last bits (the parallel LU factorization
# does not sum in a fixed order: `karman run` twice on 2 ranks gives residuals that differ in the
# last digits), so there the designs must agree to 1e-9 and the objectives, constraints and
# gradients to 1e-10 relative.
# usage: optimize_kill.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
sed "s|file: dfg-channel.geo, level: 0|file: $src/cases/dfg-2d1/dfg-channel.geo, level: 0, cache_dir: $work/cache|" \
  "$src/cases/dfg-2d1/optimize-cylinder.yaml" > case.yaml
grep -q "cache_dir: $work/cache" case.yaml || fail "the demo case's mesh line changed"
opts=(--set optimization.max_evaluations=6 --set optimization.vtk_every=2)
mpi2=(mpirun -n 2 --oversubscribe)

# the uninterrupted campaigns (1 and 2 ranks)
"$karman" optimize case.yaml -o ref1 "${opts[@]}" > ref1.log 2>&1 || { tail -20 ref1.log; fail "uninterrupted campaign"; }
"${mpi2[@]}" "$karman" optimize case.yaml -o ref2 "${opts[@]}" > ref2.log 2>&1 ||
  { tail -20 ref2.log; fail "uninterrupted campaign on 2 ranks"; }

# a bad value of the hook is one clear error
KARMAN_TEST_KILL=solve:5 "$karman" optimize case.yaml -o bad "${opts[@]}" > bad.log 2>&1 &&
  fail "KARMAN_TEST_KILL=solve:5 was accepted"
grep -q "karman: error: environment variable KARMAN_TEST_KILL='solve:5'" bad.log || { tail -3 bad.log; fail "no clear error for KARMAN_TEST_KILL"; }

for run in forward:1 adjoint:2 deformation:1; do
  phase=${run%:*} np=${run#*:} dir=killed_$phase
  launch=("$karman")
  [ "$np" = 2 ] && launch=("${mpi2[@]}" "$karman")
  KARMAN_TEST_KILL=$phase:4 "${launch[@]}" optimize case.yaml -o "$dir" "${opts[@]}" > "$dir.log" 2>&1 &&
    fail "$phase: the campaign was not killed"
  grep -q "best design" "$dir.log" && fail "$phase: the killed campaign finished"
  grep -q "evaluation   2 " "$dir.log" || fail "$phase: killed before its 3rd evaluation"
  grep -q "evaluation   3 " "$dir.log" && fail "$phase: killed after its 4th evaluation"
  # what was written before the kill
  /usr/bin/python3 - "$dir" "ref$np" "$phase" "$np" <<'PY' || exit 1
import csv, json, os, sys, h5py
import xml.etree.ElementTree as ET
d, ref, phase, np = sys.argv[1:]
def flat(a):
    return [y for x in a for y in flat(x)] if isinstance(a, list) else [a]
def same(a, b, tol):  # equal (tol 0), or within tol of the largest entry
    a, b = flat(a), flat(b)
    if tol == 0:
        return a == b
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) <= tol * max(map(abs, a + b))
lines = open(f"{d}/optimization-journal.jsonl").read().split("\n")
assert lines[-1] == "", "the journal's last line is cut"
records = [json.loads(l) for l in lines[1:-1]]
json.loads(lines[0])  # the header
refs = [json.loads(l) for l in open(f"{ref}/optimization-journal.jsonl").read().split("\n")[1:-1]]
assert len(records) == 3, f"{len(records)} journal records"
tol = 0 if np == "1" else 1e-10
for r, q in zip(records, refs):
    assert r["index"] == q["index"] and r["ok"] and q["ok"], r["index"]
    for key in ("x", "f", "c", "df", "dc"):
        assert same(r[key], q[key], tol), (r["index"], key)
def rows(path):
    return list(csv.reader(open(path)))
for name, cols in (("optimization.csv", 9), ("designs.csv", None)):  # 9: up to |dJ/da|
    got, want = rows(f"{d}/{name}"), rows(f"{ref}/{name}")
    assert len(got) == 4, f"{name}: {len(got) - 1} rows"
    assert got[0] == want[0], name
    for a, b in zip(got[1:], want[1:]):
        if np == "1":
            assert a[:cols] == b[:cols], (name, a[:cols], b[:cols])
        else:
            fa, fb = [float(x) for x in a[:cols]], [float(x) for x in b[:cols]]
            ok = (all(same(x, y, 1e-10) for x, y in zip(fa, fb)) if name == "optimization.csv"
                  else fa[0] == fb[0] and same(fa[1:], fb[1:], 1e-10))
            assert ok, (name, a, b)
series = [f for f in os.listdir(d) if f.endswith(".pvd")]
assert "shape_cylinder.pvd" in series and "flow.pvd" in series, series
for f in series:
    files = [e.get("file") for e in ET.parse(f"{d}/{f}").getroot().iter("DataSet")]
    for g in files:
        assert os.path.exists(os.path.join(d, g)), (f, g)
    if f.startswith("shape_"):
        assert len(files) == 3, (f, len(files))
with h5py.File(f"{d}/optimization-state.h5", "r") as h:
    assert int(h.attrs["evaluation"]) == 2, h.attrs["evaluation"]
    h.visit(lambda name: h[name][()] if isinstance(h[name], h5py.Dataset) else None)
print(f"{phase}: killed in evaluation 3; journal (3 records), optimization.csv, designs.csv, "
      f"{len(series)} ParaView series and the warm-start state intact")
PY
  "${launch[@]}" optimize case.yaml -o "$dir" "${opts[@]}" --restart > "$dir.restart.log" 2>&1 ||
    { tail -20 "$dir.restart.log"; fail "$phase: restart"; }
  grep -q "3 evaluations replayed from the journal" "$dir.restart.log" || fail "$phase: no replay of 3 evaluations"
  /usr/bin/python3 - "$dir" "ref$np" "$phase" "$np" <<'PY' || exit 1
import csv, json, sys
d, ref, phase, np = sys.argv[1:]
a = list(csv.DictReader(open(f"{ref}/optimization.csv")))
b = list(csv.DictReader(open(f"{d}/optimization.csv")))
assert len(a) == len(b) == 6, (len(a), len(b))
assert [r["replayed"] for r in b] == ["1"] * 3 + ["0"] * 3, [r["replayed"] for r in b]
assert all(r["ok"] == "1" for r in a + b)
da = [list(map(float, r[1:])) for r in list(csv.reader(open(f"{ref}/designs.csv")))[1:]]
db = [list(map(float, r[1:])) for r in list(csv.reader(open(f"{d}/designs.csv")))[1:]]
dx = max(abs(x - y) for p, q in zip(da, db) for x, y in zip(p, q))
jw = max(abs(float(x["objective"]) - float(y["objective"])) / abs(float(x["objective"]))
         for x, y in zip(a, b))
sa, sb = json.load(open(f"{ref}/summary.json")), json.load(open(f"{d}/summary.json"))
bx = max(abs(sa["design"][n] - sb["design"][n]) for n in sa["design"])
if np == "1":
    assert list(csv.reader(open(f"{ref}/designs.csv"))) == list(csv.reader(open(f"{d}/designs.csv"))), \
        "the restarted campaign took other designs"
    assert jw <= 1e-12 and sa["design"] == sb["design"], (jw, "another best design")
else:
    assert dx <= 1e-9 and bx <= 1e-9 and jw <= 1e-10, (dx, bx, jw)
assert abs(sa["objective"] - sb["objective"]) <= (1e-12 if np == "1" else 1e-10) * abs(sa["objective"])
print(f"{phase} ({np} rank{'s' if np == '2' else ''}): restarted, 3 evaluations replayed, 3 computed; "
      f"designs within {dx:.1e} (best design {bx:.1e}), objectives within {jw:.1e} of the "
      f"uninterrupted run")
PY
done
echo "optimize_kill: all checks passed"
