#!/usr/bin/env bash
# The unsteady adjoint from the command line (DFG 2D-2, coarse mesh, 10 steps, rotary
# oscillation of the cylinder, mean drag over the second half, adjoint state saved every
# 2 levels):
#  - an adjoint killed with SIGKILL during the backward sweep and continued with
#    `karman adjoint --restart` gives the gradient of an uninterrupted run (1e-10);
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
mesh: {file: $src/cases/dfg-2d1/dfg-channel.geo, level: 0, cache_dir: $work/cache}
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
adjoint: {save_every: 2}
output: {vtk_every: 5}
YAML
"$karman" adjoint case.yaml -o full > full.log 2>&1 || { tail -3 full.log; fail "uninterrupted adjoint"; }
for f in gradient.json control_gradient.csv adjoint.pvd initial_gradient.pvd sensitivity_cylinder.pvd initial_gradient.h5; do
  [ -s full/$f ] || fail "missing $f"
done
[ "$(wc -l < full/control_gradient.csv)" = 11 ] || fail "control_gradient.csv should have 10 rows"

"$karman" adjoint case.yaml -o killed > killed.log 2>&1 &
pid=$!
for _ in $(seq 1 900); do
  grep -q "adjoint level     5 " killed.log && break
  sleep 0.1
done
kill -9 $pid
wait $pid 2> /dev/null
grep -q "adjoint level     1 " killed.log && fail "the adjoint finished before it could be killed"
"$karman" adjoint case.yaml -o killed --restart > resumed.log 2>&1 || { tail -3 resumed.log; fail "resume"; }
grep -q "resuming at level" resumed.log || fail "did not resume"

"$karman" adjoint case.yaml -o notranspose --set output.vtk=false -adj_pc_type kaczmarz > notranspose.log 2>&1 &&
  fail "a preconditioner without a transposed apply was accepted"
grep -q "karman: error: the adjoint preconditioner -adj_pc_type kaczmarz cannot be applied transposed; use one that can: -adj_pc_type lu" \
  notranspose.log || { tail -2 notranspose.log; fail "no clear error for -adj_pc_type kaczmarz"; }
grep -q "adjoint level" notranspose.log && fail "a level was solved with -adj_pc_type kaczmarz"
echo "ok: $(grep 'karman: error' notranspose.log | cut -c1-120)..."

mpirun -n 2 --oversubscribe "$karman" adjoint case.yaml -o np2 --set output.vtk=false > np2.log 2>&1 ||
  { tail -3 np2.log; fail "2 ranks"; }
"$karman" adjoint case.yaml -o revolve --set adjoint.schedule=revolve --set adjoint.snapshots=3 \
  --set output.vtk=false > revolve.log 2>&1 || { tail -3 revolve.log; fail "revolve"; }

/usr/bin/python3 - <<'PY' || exit 1
import json
def load(d):
    return json.load(open(d + "/gradient.json"))
full = load("full")
scale = max(abs(v["gradient"]) for v in full["gradient"].values())
def compare(name, other, tol):
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
g = compare("killed and resumed", "killed", 1e-10)
assert g.get("resumed_from_level", -1) > 1, "no resume recorded"
compare("2 ranks", "np2", 1e-8)
r = compare("revolve (3 snapshots)", "revolve", 1e-9)
s = r["schedule"]
assert s["snapshots_used"] <= 3, s
print(f"revolve: {s['snapshots_used']} snapshots, {s['recomputed_steps']} recomputed steps for {r['steps']} steps")
print(f"dJ/dA {full['gradient']['boundaries.cylinder.omega.amplitude']['gradient']:.9e}, "
      f"dJ/df {full['gradient']['boundaries.cylinder.omega.frequency']['gradient']:.9e}")
PY
