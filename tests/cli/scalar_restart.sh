#!/usr/bin/env bash
# The passive scalar through checkpoints (cases/heated-cylinder run unsteady at Re 100, level 0,
# 6 steps, checkpoints every 2):
#  1. an uninterrupted run (reference flow.h5 with the fields pressure, velocity, scalar);
#  2. the same run killed with SIGKILL after step 3, then `--restart`: the final scalar field
#     equals the reference to 1e-10 (relative to its largest value), and on 2 ranks (restart of
#     the 1-rank checkpoint) to 1e-7;
#  3. the checkpoint of the scalar case restarted by the same case without the scalar is refused
#     with one line naming the fields of both.
# usage: scalar_restart.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
case="$src/cases/heated-cylinder/case.yaml"
opts=(--set mesh.level=0 --set mesh.cache_dir="$work/cache" --set fluid.viscosity=0.01
      --set scalar.diffusivity=0.0142857142857 --set time.mode=unsteady --set time.dt=0.05
      --set time.t_end=0.3 --set output.checkpoint_every=2 --set output.vtk_every=100
      --set solver.tolerances=converged) # (2 ranks against 1: to solver tolerance)
fail() { echo "FAIL: $*"; exit 1; }

"$karman" run "$case" -o ref "${opts[@]}" > ref.log 2>&1 || { tail -5 ref.log; fail "reference run"; }

"$karman" run "$case" -o killed "${opts[@]}" > killed.log 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "step      3 " killed.log && break
  sleep 0.05
done
kill -9 $pid
wait $pid 2> /dev/null
grep -q "step      6 " killed.log && fail "the run finished before it could be killed"
cp -r killed killed2
cp -r killed other
"$karman" run "$case" -o killed "${opts[@]}" --restart > restart.log 2>&1 || { tail -5 restart.log; fail "restart"; }
grep -q "restart from" restart.log || fail "did not restart from a checkpoint"
mpirun -n 2 --oversubscribe "$karman" run "$case" -o killed2 "${opts[@]}" --restart > restart2.log 2>&1 ||
  { tail -5 restart2.log; fail "restart on 2 ranks"; }

/usr/bin/python3 - <<'PY' || exit 1
import h5py, numpy as np
ref = h5py.File("ref/flow.h5")["fields/scalar"][()]
assert ref.max() > 0.5, "no heat in the reference"
for name, tol in (("killed", 1e-10), ("killed2", 1e-7)):
    got = h5py.File(name + "/flow.h5")["fields/scalar"][()]
    d = np.abs(got - ref).max() / np.abs(ref).max()
    print(f"{name}: scalar field, max difference / max value {d:.2e} (tolerance {tol})")
    assert d <= tol, name
PY

# the checkpoint of a case with a scalar, restarted by a case without it
sed '/^scalar:/,/^objective:/{/^objective:/!d}' "$case" > noscalar.yaml
sed -i "s|file: ../cylinder-unbounded/cylinder.geo|file: $src/cases/cylinder-unbounded/cylinder.geo|" noscalar.yaml
sed -i 's/type: nusselt/type: drag/; /scalar_difference/d' noscalar.yaml
"$karman" run noscalar.yaml -o other "${opts[@]:0:6}" --set time.mode=unsteady --set time.dt=0.05 \
  --set time.t_end=0.3 --set output.checkpoint_every=2 --restart --accept-case-change > other.log 2>&1 &&
  fail "a checkpoint with a scalar was read by a case without one"
grep "karman: error" other.log | grep -q "scalar" || { tail -3 other.log; fail "no clear error naming the fields"; }
echo "ok: $(grep 'karman: error' other.log | head -1)"
echo "scalar_restart: all checks passed"
