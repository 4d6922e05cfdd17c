#!/usr/bin/env bash
# A shape-optimization campaign killed with SIGKILL inside a phase of an evaluation, then
# restarted with --restart, follows the same path as an uninterrupted one
# (cases/dfg-2d1/optimize-cylinder.yaml, level 0, 8 evaluations).  KARMAN_TEST_KILL=PHASE:5 makes
# karman kill itself inside that phase of the 5th evaluation it computes (driver/shape_evaluation):
# forward (after the first Newton iteration), adjoint (after the drag adjoint, before the lift
# constraint's) and deformation (after the mesh deformation solve); the adjoint on 2 ranks.
# For each phase:
#  - the killed run stops with a non-zero status before its end, having finished 4 evaluations;
#  - what it wrote before the kill is intact: the journal (a header and 4 complete records with
#    the uninterrupted run's designs and objectives, bitwise), optimization.csv and designs.csv
#    (their first 4 rows equal the uninterrupted run's but for the timings), the ParaView series
#    (well-formed .pvd files whose entries exist), and the warm-start state
#    optimization-state.h5 (of evaluation 3, readable);
#  - the restarted campaign replays the 4 journaled evaluations and then takes bitwise the same
#    designs as the uninterrupted run, with objectives equal to 1e-12, and the same best design.
# usage: optimize_kill.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
sed "s|file: dfg-channel.geo, level: 0|file: $src/cases/dfg-2d1/dfg-channel.geo, level: 0, cache_dir: $work/cache|" \
  "$src/cases/dfg-2d1/optimize-cylinder.yaml" > case.yaml
grep -q "cache_dir: $work/cache" case.yaml || fail "the demo case's mesh line changed"
opts=(--set optimization.max_evaluations=8 --set optimization.vtk_every=2)
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
  KARMAN_TEST_KILL=$phase:5 "${launch[@]}" optimize case.yaml -o "$dir" "${opts[@]}" > "$dir.log" 2>&1 &&
    fail "$phase: the campaign was not killed"
  grep -q "best design" "$dir.log" && fail "$phase: the killed campaign finished"
  grep -q "evaluation   3 " "$dir.log" || fail "$phase: killed before its 4th evaluation"
  grep -q "evaluation   4 " "$dir.log" && fail "$phase: killed after its 5th evaluation"
  # what was written before the kill
  /usr/bin/python3 - "$dir" "ref$np" "$phase" <<'PY' || exit 1
import csv, json, os, sys, h5py
import xml.etree.ElementTree as ET
d, ref, phase = sys.argv[1:]
lines = open(f"{d}/optimization-journal.jsonl").read().split("\n")
assert lines[-1] == "", "the journal's last line is cut"
records = [json.loads(l) for l in lines[1:-1]]
json.loads(lines[0])  # the header
refs = [json.loads(l) for l in open(f"{ref}/optimization-journal.jsonl").read().split("\n")[1:-1]]
assert len(records) == 4, f"{len(records)} journal records"
for r, q in zip(records, refs):
    assert r["index"] == q["index"] and r["x"] == q["x"] and r["f"] == q["f"], (r["index"])
    assert r["c"] == q["c"] and r["df"] == q["df"], r["index"]
def rows(path):
    return list(csv.reader(open(path)))
for name, cols in (("optimization.csv", 9), ("designs.csv", None)):  # 9: up to |dJ/da|
    got, want = rows(f"{d}/{name}"), rows(f"{ref}/{name}")
    assert len(got) == 5, f"{name}: {len(got) - 1} rows"
    for a, b in zip(got, want):
        assert a[:cols] == b[:cols], (name, a[:cols], b[:cols])
series = [f for f in os.listdir(d) if f.endswith(".pvd")]
assert "shape_cylinder.pvd" in series and "flow.pvd" in series, series
for f in series:
    files = [e.get("file") for e in ET.parse(f"{d}/{f}").getroot().iter("DataSet")]
    for g in files:
        assert os.path.exists(os.path.join(d, g)), (f, g)
    if f.startswith("shape_"):
        assert len(files) == 4, (f, len(files))
with h5py.File(f"{d}/optimization-state.h5", "r") as h:
    assert int(h.attrs["evaluation"]) == 3, h.attrs["evaluation"]
    h.visit(lambda name: h[name][()] if isinstance(h[name], h5py.Dataset) else None)
print(f"{phase}: killed in evaluation 4; journal (4 records), optimization.csv, designs.csv, "
      f"{len(series)} ParaView series and the warm-start state intact")
PY
  "${launch[@]}" optimize case.yaml -o "$dir" "${opts[@]}" --restart > "$dir.restart.log" 2>&1 ||
    { tail -20 "$dir.restart.log"; fail "$phase: restart"; }
  grep -q "4 evaluations replayed from the journal" "$dir.restart.log" || fail "$phase: no replay of 4 evaluations"
  /usr/bin/python3 - "$dir" "ref$np" "$phase" "$np" <<'PY' || exit 1
import csv, json, sys
d, ref, phase, np = sys.argv[1:]
a = list(csv.DictReader(open(f"{ref}/optimization.csv")))
b = list(csv.DictReader(open(f"{d}/optimization.csv")))
assert len(a) == len(b) == 8, (len(a), len(b))
assert [r["replayed"] for r in b] == ["1"] * 4 + ["0"] * 4, [r["replayed"] for r in b]
assert list(csv.reader(open(f"{ref}/designs.csv"))) == list(csv.reader(open(f"{d}/designs.csv"))), \
    "the restarted campaign took other designs"
worst = max(abs(float(x["objective"]) - float(y["objective"])) / abs(float(x["objective"]))
            for x, y in zip(a, b) if x["ok"] == "1")
assert worst <= 1e-12, worst
sa, sb = json.load(open(f"{ref}/summary.json")), json.load(open(f"{d}/summary.json"))
assert sa["design"] == sb["design"], "another best design"
assert abs(sa["objective"] - sb["objective"]) <= 1e-12 * abs(sa["objective"])
print(f"{phase} ({np} rank{'s' if np == '2' else ''}): restarted, 4 evaluations replayed, 4 computed; "
      f"designs bitwise equal, objectives within {worst:.1e} of the uninterrupted run")
PY
done
echo "optimize_kill: all checks passed"
