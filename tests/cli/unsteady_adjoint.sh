#!/usr/bin/env bash
# The unsteady adjoint from the command line (the DFG 2D-2 flow in the coarse cylinder channel of
# the control tests, tests/data/control-cylinder.geo, 452 cells: what is checked here holds on any
# mesh; 10 steps, rotary oscillation of the cylinder, mean drag over the second half, adjoint state
# saved every 2 levels):
#  - an adjoint killed with SIGKILL during the backward sweep and continued with
#    `karman adjoint --restart` gives the gradient of an uninterrupted run (1e-10); the store-all
#    trajectory files (scratch) of the killed and of the finished runs are removed (this one with
#    30 steps, killed after level 20: on this mesh a level takes a few hundredths of a second, and
#    the kill must land before the sweep ends);
#  - killed by the fault injection KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE while a state is
#    written (level 6: temporary file complete, not renamed), resumed and killed again (level 4:
#    between the psi datasets and the gradient data), resumed again: the gradient and the
#    control gradient of an uninterrupted run (1e-10), resumed from the last complete states;
#  - a state saved on 2 ranks resumes on 1 rank (1e-8);
#  - a state of another case (t_end, viscosity) and a truncated state are refused, naming the file
#    and what differs;
#  - store-all on 2 ranks equals store-all on 1 rank (1e-8), and revolve with 3 snapshots
#    equals store-all (1e-9) while keeping at most 3 snapshots;
#  - control_gradient.csv has one row per step; the outputs exist;
#  - an adjoint preconditioner that cannot be applied transposed (-adj_pc_type kaczmarz) is
#    refused with a clear error before the first level, as in the steady adjoint.
# usage: unsteady_adjoint.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
cat > case.yaml <<YAML
mesh: {file: $src/tests/data/control-cylinder.geo, level: 0, cache_dir: $work/cache}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 1.0, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.5, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: sine, amplitude: 0.5, frequency: 2.0, phase: 0.3}}
initial: {velocity: [1, 0]}
time: {mode: unsteady, dt: 0.02, t_end: 0.2}
solver: {rtol: 1e-13, atol: 1e-15}
objective: {type: drag, walls: [cylinder], time: average, window: [0.1, 0.2]}
adjoint: {save_every: 2, rtol: 1e-12}   # resumed = uninterrupted to 1e-10 needs the tighter solves
output: {vtk_every: 5}
YAML
"$karman" adjoint case.yaml -o full > full.log 2>&1 || { tail -3 full.log; fail "uninterrupted adjoint"; }
for f in gradient.json control_gradient.csv adjoint.pvd initial_gradient.pvd sensitivity_cylinder.pvd initial_gradient.h5; do
  [ -s full/$f ] || fail "missing $f"
done
[ "$(wc -l < full/control_gradient.csv)" = 11 ] || fail "control_gradient.csv should have 10 rows"

# killed at a random moment of the backward sweep: 30 steps, against its own uninterrupted run
long=(--set time.t_end=0.6 --set "objective.window=[0.3, 0.6]")
"$karman" adjoint case.yaml -o full30 "${long[@]}" > full30.log 2>&1 || { tail -3 full30.log; fail "uninterrupted adjoint, 30 steps"; }
"$karman" adjoint case.yaml -o killed "${long[@]}" > killed.log 2>&1 &
pid=$!
# (polled every 0.01 s from the sweep's fifth level: on a quiet machine the 30 levels take about
# 0.2 s, so that a later or slower poll could miss them)
for _ in $(seq 1 9000); do
  grep -q "adjoint level    26 " killed.log && break
  sleep 0.01
done
kill -9 $pid
wait $pid 2> /dev/null
grep -q "adjoint level     1 " killed.log && fail "the adjoint finished before it could be killed"
[ "$(ls killed/trajectory/rank-*.bin 2> /dev/null | wc -l)" = 1 ] ||
  fail "the killed run (1 rank) left no trajectory file"
"$karman" adjoint case.yaml -o killed --restart "${long[@]}" > resumed.log 2>&1 || { tail -3 resumed.log; fail "resume"; }
grep -q "resuming at level" resumed.log || fail "did not resume"
# the store-all trajectory is scratch: the killed run's file and the resumed run's own are gone
[ -e killed/trajectory ] || [ -e full/trajectory ] || [ -e full30/trajectory ] && fail "trajectory files left behind"

# ({ } 2> /dev/null: no "Killed" notice from bash)
{ KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE=6 "$karman" adjoint case.yaml -o injected --set output.vtk=false \
  > injected.log 2>&1; } 2> /dev/null && fail "the fault injection at level 6 did not kill the adjoint"
[ -s injected/adjoint-state.h5.tmp ] || fail "no temporary state file after the kill at level 6"
{ KARMAN_TEST_ABORT_IN_ADJOINT_STATE_WRITE=4:partial "$karman" adjoint case.yaml -o injected --restart \
  --set output.vtk=false > injected2.log 2>&1; } 2> /dev/null &&
  fail "the fault injection at level 4 did not kill the adjoint"
grep -q "resuming at level 8 from" injected2.log || fail "the first resume did not start from level 8"
"$karman" adjoint case.yaml -o injected --restart --set output.vtk=false > injected3.log 2>&1 ||
  { tail -3 injected3.log; fail "resume after the fault injections"; }
grep -q "resuming at level 6 from" injected3.log || fail "the second resume did not start from level 6"

# a state of another case or a damaged one: refused before the forward run, with a clear message
mkdir -p other && cp injected/adjoint-state.h5 other/
refuse() { # OVERRIDE MESSAGE
  "$karman" adjoint case.yaml -o other --restart --set output.vtk=false $1 > refused.log 2>&1 &&
    fail "a state of another case was accepted ($1)"
  grep -qF "$2" refused.log || { tail -2 refused.log; fail "no clear message for a refused state ($1)"; }
}
refuse "--set time.t_end=0.16" \
  "other/adjoint-state.h5: adjoint state of a run with 10 steps of dt 0.02, case.yaml has 8 steps of dt 0.02"
refuse "--set fluid.viscosity=2e-3" "other/adjoint-state.h5: adjoint state of another problem"
head -c 100000 injected/adjoint-state.h5 > other/adjoint-state.h5
refuse "" "other/adjoint-state.h5: not a karman adjoint state (version 1), or corrupt or truncated"

# (the direct solver's KSPSolveTranspose; the iterative adjoint solves J^T untransposed)
"$karman" adjoint case.yaml -o notranspose --set output.vtk=false --set solver.linear=direct -adj_pc_type kaczmarz > notranspose.log 2>&1 &&
  fail "a preconditioner without a transposed apply was accepted"
grep -q "karman: error: the adjoint preconditioner -adj_pc_type kaczmarz cannot be applied transposed; use one that can: -adj_pc_type lu" \
  notranspose.log || { tail -2 notranspose.log; fail "no clear error for -adj_pc_type kaczmarz"; }
grep -q "adjoint level" notranspose.log && fail "a level was solved with -adj_pc_type kaczmarz"
echo "ok: $(grep 'karman: error' notranspose.log | cut -c1-120)..."

mpirun -n 2 --oversubscribe "$karman" adjoint case.yaml -o np2 --set output.vtk=false > np2.log 2>&1 ||
  { tail -3 np2.log; fail "2 ranks"; }
# the last state of the 2-rank run (level 2) resumed on 1 rank
mkdir -p np2to1 && cp np2/adjoint-state.h5 np2to1/
"$karman" adjoint case.yaml -o np2to1 --restart --set output.vtk=false > np2to1.log 2>&1 ||
  { tail -3 np2to1.log; fail "resume on 1 rank of a state saved on 2 ranks"; }
grep -q "resuming at level 2 from" np2to1.log || fail "the 1-rank run did not resume from level 2"
"$karman" adjoint case.yaml -o revolve --set adjoint.schedule=revolve --set adjoint.snapshots=3 \
  --set output.vtk=false > revolve.log 2>&1 || { tail -3 revolve.log; fail "revolve"; }

/usr/bin/python3 - <<'PY' || exit 1
import csv, json
def load(d):
    return json.load(open(d + "/gradient.json"))
def load_csv(d):
    rows = list(csv.reader(open(d + "/control_gradient.csv")))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]
def compare(name, other, tol, reference="full"):
    full = load(reference)
    scale = max(abs(v["gradient"]) for v in full["gradient"].values())
    g = load(other)
    assert abs(g["objective"]["value"] - full["objective"]["value"]) <= 1e-12 * abs(full["objective"]["value"]), other
    worst = 0.0
    for k, v in full["gradient"].items():
        a, b = v["gradient"], g["gradient"][k]["gradient"]
        assert abs(a - b) <= tol * abs(a) + 1e-12 * scale, (other, k, a, b)
        if abs(a) > 1e-9 * scale:
            worst = max(worst, abs(a - b) / abs(a))
    print(f"{name}: {len(full['gradient'])} gradients equal to the uninterrupted store-all run "
          f"(max relative difference {worst:.1e}, tolerance {tol})")
    return g
def compare_csv(name, other, tol):
    head, a = load_csv("full")
    head_b, b = load_csv(other)
    assert head == head_b and len(a) == len(b), (other, head_b, len(b))
    # as for gradient.json: relative tolerance, absolute floor 1e-12 of the largest value
    scale = max(abs(x) for r in a for x in r[2:])
    for j in range(2, len(head)):
        for ra, rb in zip(a, b):
            assert abs(ra[j] - rb[j]) <= tol * abs(ra[j]) + 1e-12 * scale, (other, head[j], ra[0], ra[j], rb[j])
    print(f"{name}: control_gradient.csv equal to the uninterrupted run ({len(a)} rows, tolerance {tol})")
g = compare("killed and resumed", "killed", 1e-10, "full30")
assert g.get("resumed_from_level", -1) > 1, "no resume recorded"
g = compare("killed twice by the fault injection and resumed", "injected", 1e-10)
assert g.get("resumed_from_level", -1) == 6, g.get("resumed_from_level")
compare_csv("killed twice by the fault injection and resumed", "injected", 1e-10)
compare("2 ranks", "np2", 1e-8)
g = compare("saved on 2 ranks, resumed on 1", "np2to1", 1e-8)
assert g.get("resumed_from_level", -1) == 2, g.get("resumed_from_level")
compare_csv("saved on 2 ranks, resumed on 1", "np2to1", 1e-8)
r = compare("revolve (3 snapshots)", "revolve", 1e-9)
s = r["schedule"]
assert s["snapshots_used"] <= 3, s
print(f"revolve: {s['snapshots_used']} snapshots, {s['recomputed_steps']} recomputed steps for {r['steps']} steps")
full = load("full")
print(f"dJ/dA {full['gradient']['boundaries.cylinder.omega.amplitude']['gradient']:.9e}, "
      f"dJ/df {full['gradient']['boundaries.cylinder.omega.frequency']['gradient']:.9e}")
PY
