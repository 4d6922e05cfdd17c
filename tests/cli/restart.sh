#!/usr/bin/env bash
# Crash safety and restart of an unsteady run (DFG 2D-2's case on the 452-cell cylinder channel
# of tests/data/control-cylinder.geo -- what is checked does not depend on the mesh --, 24 steps,
# checkpoints every 4 steps):
#  1. an uninterrupted run (reference forces.csv);
#  2. the same run killed with SIGKILL mid-way, then `--restart`: the force history equals
#     the reference to 1e-10 (relative) and has no duplicated steps;
#  3. a restart of the killed run on 2 ranks (checkpoint written on 1): equal to the
#     reference to solver tolerance (1e-7);
#  4. a corrupt record (data changed, checksum not) is an error naming the file and the
#     record; a truncated newest checkpoint file falls back to the previous one;
#  5. a restart with a new time.dt (the reference forked at its record of t = 0.24, then
#     dt 0.01): the history up to the fork is kept, the rest continues with the new step
#     (times 0.25 ... 0.48, no gap, no duplicate) and ends near the reference;
#  6. a restart with another solver.upwind or solver.stabilization (keys of the residual)
#     is refused with one line naming the case file and the key with both values; with
#     --accept-case-change it continues (two more steps) with a warning naming the key;
#  7. with karman run's default forward tolerances (each step stopped at its truncation error),
#     a run restarted from its checkpoint of step 12 repeats the uninterrupted run: steps 13-24
#     equal to 1e-10;
#  8. time.dt auto (error-controlled steps): the run takes steps of several sizes and ends on
#     t_end; restarted from its checkpoint of step 12 it repeats the uninterrupted run's steps
#     (times to 1e-12: the checkpoint holds the controller's next step) and forces (1e-10).
# usage: restart.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
case="$src/cases/dfg-2d2/case.yaml"
# (converged steps, solver.tolerances converged: the 2-rank restart is compared to solver
# tolerance; karman run's default forward tolerances are checked at the end, 7.)
opts=(--set mesh.file="$src/tests/data/control-cylinder.geo" --set mesh.level=0
      --set mesh.cache_dir="$work/cache" --set time.dt=0.02 --set time.t_end=0.48
      --set output.checkpoint_every=4 --set output.vtk_every=8 --set solver.tolerances=converged)
fail() { echo "FAIL: $*"; exit 1; }
keep_records_until() { # DIR T: drop DIR's checkpoint records after time T
  /usr/bin/python3 - "$1" "$2" <<'PY' || exit 1
import glob, sys, h5py
d, t = sys.argv[1], float(sys.argv[2])
for f in sorted(glob.glob(f"{d}/checkpoints/run-*.h5")):
    with h5py.File(f, "r+") as h:
        n = int((h["info"][: h["checksum"].shape[0], 1] <= t + 1e-9).sum())
        for name in ("state", "previous", "info", "checksum"):
            h[name].resize(n, axis=0)
PY
}

"$karman" run "$case" -o ref "${opts[@]}" > ref.log 2>&1 || { tail -5 ref.log; fail "reference run"; }

# killed run: SIGKILL once step 14 is done (the checkpoint of step 12 is complete; with the
# multigrid a step takes ~0.03 s, so the run may reach the checkpoint of step 16 or 20 before the
# signal lands, but not its end)
"$karman" run "$case" -o killed "${opts[@]}" > killed.log 2>&1 &
pid=$!
for _ in $(seq 1 3000); do
  grep -q "step     14 " killed.log && break
  sleep 0.02
done
kill -9 $pid
wait $pid 2> /dev/null
grep -q "step     24 " killed.log && fail "the run finished before it could be killed"
cp -r killed killed2
"$karman" run "$case" -o killed "${opts[@]}" --restart > restart.log 2>&1 || { tail -5 restart.log; fail "restart"; }
grep -qE "restart from .*step (12|16|20)," restart.log || { grep restart restart.log; fail "did not restart from step 12, 16 or 20"; }
mpirun -n 2 --oversubscribe "$karman" run "$case" -o killed2 "${opts[@]}" --restart > restart2.log 2>&1 ||
  { tail -5 restart2.log; fail "restart on 2 ranks"; }

/usr/bin/python3 - <<'PY' || exit 1
import csv
def load(path):
    rows = list(csv.DictReader(open(path)))
    return {int(r["step"]): r for r in rows}, [int(r["step"]) for r in rows]
ref, ref_steps = load("ref/forces.csv")
for name, tol in (("killed", 1e-10), ("killed2", 1e-7)):
    got, steps = load(name + "/forces.csv")
    assert steps == ref_steps, f"{name}: steps {steps} != {ref_steps} (missing or duplicated rows)"
    worst = 0.0
    for s in ref_steps:
        for key in ("cd", "cl", "delta_p"):
            a, b = float(ref[s][key]), float(got[s][key])
            worst = max(worst, abs(a - b) / max(abs(a), 1e-3))
    print(f"{name}: {len(steps)} rows, max relative difference to the uninterrupted run {worst:.2e} (tolerance {tol})")
    assert worst <= tol, name
PY

# corrupt record: change one value of the last record without updating its checksum
cp -r killed corrupt
/usr/bin/python3 - <<'PY' || exit 1
import glob, h5py
f = sorted(glob.glob("corrupt/checkpoints/run-*.h5"))[-1]
with h5py.File(f, "r+") as h:
    h["state"][-1, 7] += 1e-3
PY
"$karman" run "$case" -o corrupt "${opts[@]}" --restart > corrupt.log 2>&1 && fail "a corrupt record was read"
grep -q "karman: error: .*run-0002.h5: record .* (step 24) is corrupt" corrupt.log ||
  { cat corrupt.log | tail -3; fail "no clear error for the corrupt record"; }
echo "ok: $(grep 'karman: error' corrupt.log)"

# truncated newest file: fall back to the previous checkpoint file, with a warning
cp -r killed truncated
f=truncated/checkpoints/run-0002.h5
truncate -s $(($(stat -c %s $f) / 3)) $f
"$karman" run "$case" -o truncated "${opts[@]}" --restart > truncated.log 2>&1 || { tail -3 truncated.log; fail "fallback"; }
grep -q "run-0002.h5: cannot be read" truncated.log || fail "no warning about the truncated file"
grep -q "restart from .*run-0001.h5" truncated.log || fail "did not fall back to run-0001.h5"
echo "ok: truncated run-0002.h5 -> $(grep -o "restart from .*" truncated.log)"
# restart with a new time step: keep the records up to t = 0.24 (step 12) of the reference
cp -r ref newdt
keep_records_until newdt 0.24
opts_newdt=("${opts[@]}" --set time.dt=0.01)
"$karman" run "$case" -o newdt "${opts_newdt[@]}" --restart > newdt.log 2>&1 || { tail -5 newdt.log; fail "restart with dt 0.01"; }
grep -q "restart from .*step 12, t = 0.24" newdt.log || { grep restart newdt.log; fail "did not restart from step 12"; }
grep -q "t = 0.24 -> 0.48, dt 0.01 (24 steps)" newdt.log || { grep unsteady newdt.log; fail "wrong step count announced"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
ref = list(csv.DictReader(open("ref/forces.csv")))
got = list(csv.DictReader(open("newdt/forces.csv")))
assert got[:13] == ref[:13], "the history up to the fork (steps 0..12) changed"
times = [float(r["time"]) for r in got[13:]]
assert len(times) == 24 and all(abs(t - (0.24 + 0.01 * (k + 1))) < 1e-9 for k, t in enumerate(times)), times
assert all(abs(float(r["dt"]) - 0.01) < 1e-12 for r in got[13:]), "dt column"
s = json.load(open("newdt/summary.json"))
assert s["steps_this_run"] == 24 and abs(s["t_end"] - 0.48) < 1e-9, (s["steps_this_run"], s["t_end"])
d = abs(float(got[-1]["cd"]) - float(ref[-1]["cd"]))
print(f"new dt: 24 steps of 0.01 after the fork at t = 0.24; c_D(0.48) {got[-1]['cd']} vs dt 0.02 run {ref[-1]['cd']}")
assert d < 0.05 * abs(float(ref[-1]["cd"])), "the run with the new dt left the reference solution"
PY

# another discrete problem: refused, unless --accept-case-change
for change in solver.upwind=0.5 solver.stabilization=2; do
  key=${change%%=*} value=${change#*=} out=changed-${change%%=*}
  cp -r ref "$out"
  "$karman" run "$case" -o "$out" "${opts[@]}" --set "$change" --restart > "$out.log" 2>&1 &&
    fail "a restart with $change from checkpoints of $key = 1 was accepted"
  grep -q "karman: error: .*case.yaml: --restart: the checkpoints in $out/checkpoints were written with $key = 1, this case has $value; .*--accept-case-change" "$out.log" ||
    { tail -3 "$out.log"; fail "no clear error naming $key"; }
  echo "ok: $(grep 'karman: error' "$out.log")"
  "$karman" run "$case" -o "$out" "${opts[@]}" --set "$change" --set time.t_end=0.52 --restart --accept-case-change \
    > "$out-accepted.log" 2>&1 || { tail -5 "$out-accepted.log"; fail "--accept-case-change with $change"; }
  grep -q "warning: .*--accept-case-change: .* written with $key = 1, this case has $value" "$out-accepted.log" ||
    { grep -i warning "$out-accepted.log"; fail "no warning naming $key"; }
  grep -q "restart from .*step 24, t = 0.48" "$out-accepted.log" || { grep restart "$out-accepted.log"; fail "did not restart"; }
  tail -1 "$out/forces.csv" | grep -q "^26," || { tail -2 "$out/forces.csv"; fail "$change: steps 25, 26 missing"; }
  echo "ok: $change continued with --accept-case-change"
done
# karman run's default (forward) tolerances: a restart from the checkpoint of step 12 repeats the
# uninterrupted run (the first step after a checkpoint converges fully in both)
fwd=("${opts[@]:0:$((${#opts[@]} - 2))}") # opts without solver.tolerances
"$karman" run "$case" -o fwd "${fwd[@]}" > fwd.log 2>&1 || { tail -5 fwd.log; fail "forward-tolerance run"; }
grep -q "(solver.tolerances auto: forward-only run)" fwd.log || fail "karman run did not pick forward tolerances"
cp -r fwd fwd-restart
keep_records_until fwd-restart 0.24
"$karman" run "$case" -o fwd-restart "${fwd[@]}" --restart > fwd-restart.log 2>&1 ||
  { tail -5 fwd-restart.log; fail "forward-tolerance restart"; }
grep -q "restart from .*step 12, t = 0.24" fwd-restart.log || { grep restart fwd-restart.log; fail "did not restart from step 12"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
ref = list(csv.DictReader(open("fwd/forces.csv")))
got = list(csv.DictReader(open("fwd-restart/forces.csv")))
assert [r["step"] for r in got] == [r["step"] for r in ref], "steps"
worst = max(abs(float(a[k]) - float(b[k])) / max(abs(float(a[k])), 1e-3)
            for a, b in zip(ref[13:], got[13:]) for k in ("cd", "cl", "delta_p"))
s = json.load(open("fwd/summary.json"))
assert s["step_tolerances"] == "forward" and s["truncation_stops"] > 0, (s["step_tolerances"], s["truncation_stops"])
print(f"forward tolerances ({s['truncation_stops']} of 24 steps stopped at the truncation error): "
      f"restarted at step 12, max relative difference {worst:.1e}")
assert worst <= 1e-10, worst
PY
# time.dt auto: restarted from its checkpoint of step 12, the same steps and forces
auto=("${fwd[@]}" --set time.dt=auto --set time.tolerance=1e-3 --set time.dt_initial=0.01)
"$karman" run "$case" -o auto "${auto[@]}" > auto.log 2>&1 || { tail -5 auto.log; fail "dt auto run"; }
t12=$(awk -F, '$1 == 12 {print $2}' auto/forces.csv)
cp -r auto auto-restart
keep_records_until auto-restart "$t12"
"$karman" run "$case" -o auto-restart "${auto[@]}" --restart > auto-restart.log 2>&1 ||
  { tail -5 auto-restart.log; fail "dt auto restart"; }
grep -q "restart from .*step 12," auto-restart.log || { grep restart auto-restart.log; fail "dt auto: did not restart from step 12"; }
/usr/bin/python3 - <<'PY' || exit 1
import csv, json
ref = list(csv.DictReader(open("auto/forces.csv")))
got = list(csv.DictReader(open("auto-restart/forces.csv")))
assert [r["step"] for r in got] == [r["step"] for r in ref], "steps"
dts = sorted({round(float(r["dt"]), 12) for r in ref[1:]})
s = json.load(open("auto/summary.json"))
assert s["dt"] == "auto" and abs(float(ref[-1]["time"]) - 0.48) < 1e-12, (s["dt"], ref[-1]["time"])
assert len(dts) >= 3, dts
dt_worst = max(abs(float(a["time"]) - float(b["time"])) for a, b in zip(ref, got))
worst = max(abs(float(a[k]) - float(b[k])) / max(abs(float(a[k])), 1e-3)
            for a, b in zip(ref[13:], got[13:]) for k in ("cd", "cl", "delta_p"))
print(f"dt auto: {len(ref) - 1} steps of {len(dts)} sizes {dts[0]:.3g}..{dts[-1]:.3g} "
      f"({s['rejected_steps']} rejected); restarted at step 12: times within {dt_worst:.1e}, "
      f"forces within {worst:.1e}")
assert dt_worst <= 1e-12 and worst <= 1e-10, (dt_worst, worst)
PY
echo "all restart checks passed"
