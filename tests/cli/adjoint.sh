#!/usr/bin/env bash
# `karman adjoint` and `karman verify` on DFG 2D-1 (coarse mesh):
#  - gradients (every parameter) and the objective agree between 1 and 2 ranks to 1e-8;
#  - the ParaView outputs (adjoint fields, surface sensitivity) and gradient.json exist;
#  - a second `karman adjoint` reuses the converged forward state;
#  - the error estimate (adjoint.error_estimate) is the same on 1 and 2 ranks, its effectivity
#    against the reference c_D lies in [0.8, 1.2], adjoint.pvd has the indicator; the unsteady
#    estimate (5 steps) is the same on 1 and 2 ranks and writes error.pvd;
#  - an adjoint preconditioner that cannot be applied transposed (-adj_pc_type kaczmarz) is
#    refused with a clear error naming it and the ones that can;
#  - an unconverged forward state in OUTDIR/flow.h5 is refused with a clear error;
#  - `karman verify` passes (finite differences over its step sweep, shape Taylor test) on
#    1 rank for the viscosity, the inlet velocity and the cylinder's wall velocity, and on 2 ranks
#    for the viscosity and the cylinder's rotation rate with the shape Taylor test (every
#    parameter's gradient on this mesh is checked against finite differences by
#    test_adjoint_solver.cpp, "adjoint parameter gradients equal finite differences (DFG 2D-1,
#    coarse)", and the 2-rank adjoint's every gradient equals the 1-rank one's to 1e-8 above:
#    the command's runs check the command and the parallel re-solves, not each parameter again;
#    all nine took 11.5 of this script's 29 s).
# usage: adjoint.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
case="$src/cases/dfg-2d1/case.yaml"
opts=(--set mesh.level=0 --set mesh.cache_dir="$work/cache")
fail() { echo "FAIL: $*"; exit 1; }
"$karman" adjoint "$case" -o np1 "${opts[@]}" > np1.log 2>&1 || { tail -3 np1.log; fail "adjoint on 1 rank"; }
mpirun -n 2 --oversubscribe "$karman" adjoint "$case" -o np2 "${opts[@]}" > np2.log 2>&1 ||
  { tail -3 np2.log; fail "adjoint on 2 ranks"; }
for f in gradient.json adjoint.pvd sensitivity_cylinder.pvd flow.h5; do
  [ -s np1/$f ] && [ -s np2/$f ] || fail "missing $f"
done
/usr/bin/python3 - <<'PY' || exit 1
import json
a, b = (json.load(open(d + "/gradient.json")) for d in ("np1", "np2"))
ja, jb = a["objective"]["value"], b["objective"]["value"]
assert abs(ja - jb) <= 1e-10 * abs(ja), (ja, jb)
scale = max(abs(v["gradient"]) for v in a["gradient"].values())
worst = 0.0
for name, v in a["gradient"].items():
    ga, gb = v["gradient"], b["gradient"][name]["gradient"]
    # relative 1e-8, or round-off for gradients that vanish (1e-12 of the largest)
    assert abs(ga - gb) <= 1e-8 * abs(ga) + 1e-12 * scale, (name, ga, gb)
    if abs(ga) > 1e-9 * scale:
        worst = max(worst, abs(ga - gb) / abs(ga))
print(f"objective {ja:.12g}; {len(a['gradient'])} gradients equal on 1 and 2 ranks (max relative difference {worst:.1e})")
print(f"adjoint / forward wall time: {a['adjoint_over_forward_time']:.3f}")
PY
"$karman" adjoint "$case" -o np1 "${opts[@]}" > again.log 2>&1 || fail "second adjoint"
grep -q "reusing the converged forward state" again.log || fail "the forward state was not reused"
# the error estimate (adjoint.error_estimate): the same on 1 and 2 ranks, and its effectivity
# against the DFG 2D-1 reference c_D (FeatFlow) within [0.8, 1.2] (measured: 1.01)
for np in 1 2; do
  mpirun -n $np --oversubscribe "$karman" adjoint "$case" -o np$np "${opts[@]}" \
    --set adjoint.error_estimate=true > estimate$np.log 2>&1 || { tail -3 estimate$np.log; fail "error estimate on $np rank(s)"; }
  grep -q 'Name="error_indicator"' np$np/adjoint_0000.pvtu ||
    fail "no error_indicator in np$np/adjoint_0000.pvtu"
done
/usr/bin/python3 - <<'PY' || exit 1
import json
a, b = (json.load(open(d + "/gradient.json"))["error_estimate"] for d in ("np1", "np2"))
for k in ("estimated_error", "corrected_value", "refined_value", "indicator_sum"):
    assert abs(a[k] - b[k]) <= 1e-8 * abs(a[k]), (k, a[k], b[k])
ref = 5.57953523384
effectivity = a["estimated_error"] / (ref - a["value"])
assert 0.8 <= effectivity <= 1.2, effectivity
assert abs(ref - a["corrected_value"]) <= 0.2 * abs(ref - a["value"]), a
print(f"error estimate: c_D {a['value']:.7f} estimated error {a['estimated_error']:+.3e}, "
      f"effectivity {effectivity:.3f}, corrected {a['corrected_value']:.7f}; equal on 1 and 2 ranks")
PY
# the unsteady error estimate (5 steps from rest): the same on 1 and 2 ranks, error.pvd
for np in 1 2; do
  mpirun -n $np --oversubscribe "$karman" adjoint "$case" -o un$np "${opts[@]}" \
    --set time.mode=unsteady --set time.dt=0.02 --set time.t_end=0.1 \
    --set adjoint.error_estimate=true > unsteady$np.log 2>&1 || { tail -3 unsteady$np.log; fail "unsteady error estimate on $np rank(s)"; }
  grep -q 'Name="error_indicator"' un$np/error_0000.pvtu ||
    fail "no error_indicator in un$np/error_0000.pvtu"
  [ ! -e un$np/trajectory-refined ] || fail "un$np/trajectory-refined left behind"
done
/usr/bin/python3 - <<'PY' || exit 1
import json
a, b = (json.load(open(d + "/gradient.json"))["error_estimate"] for d in ("un1", "un2"))
for k in ("estimated_error", "corrected_value", "refined_value", "indicator_sum"):
    assert abs(a[k] - b[k]) <= 1e-7 * abs(a[k]), (k, a[k], b[k])
print(f"unsteady error estimate: mean c_D {a['value']:.7f} estimated error "
      f"{a['estimated_error']:+.3e}; equal on 1 and 2 ranks")
PY
# (the direct solver's KSPSolveTranspose; the iterative adjoint solves J^T untransposed)
"$karman" adjoint "$case" -o np1 "${opts[@]}" --set solver.linear=direct -adj_pc_type kaczmarz > notranspose.log 2>&1 &&
  fail "a preconditioner without a transposed apply was accepted"
grep -q "karman: error: the adjoint preconditioner -adj_pc_type kaczmarz cannot be applied transposed; use one that can: -adj_pc_type lu" \
  notranspose.log || { tail -2 notranspose.log; fail "no clear error for -adj_pc_type kaczmarz"; }
echo "ok: $(grep 'karman: error' notranspose.log | cut -c1-120)..."
/usr/bin/python3 - <<'PY' || exit 1
import h5py
with h5py.File("np1/flow.h5", "r+") as h:
    h["fields/velocity"][5, 0] += 0.01
PY
"$karman" adjoint "$case" -o np1 "${opts[@]}" > unconverged.log 2>&1 && fail "an unconverged state was accepted"
grep -q "karman: error: .*flow.h5 holds an unconverged forward state" unconverged.log || { cat unconverged.log | tail -2; fail "no clear error"; }
echo "ok: $(grep 'karman: error' unconverged.log | cut -c1-120)..."
"$karman" verify "$case" -o verify1 "${opts[@]}" \
  --set "adjoint.parameters=[fluid.viscosity, boundaries.inlet.velocity, boundaries.cylinder.velocity.y]" \
  > verify1.log 2>&1 || { grep -E "FAILED|error" verify1.log; fail "verify on 1 rank"; }
grep -q "boundaries.cylinder.velocity.y " verify1.log || fail "verify on 1 rank: the parameters were not checked"
mpirun -n 2 --oversubscribe "$karman" verify "$case" -o verify2 "${opts[@]}" \
  --set "adjoint.parameters=[fluid.viscosity, boundaries.cylinder.omega]" > verify2.log 2>&1 ||
  { grep -E "FAILED|error" verify2.log; fail "verify on 2 ranks"; }
grep -A5 "shape: bump" verify2.log | sed 's/^karman: //'
echo "verify passed on 1 and 2 ranks"
