#!/usr/bin/env bash
# The Slurm job scripts (scripts/slurm/) without a Slurm installation: stub sbatch and scontrol
# on PATH record their arguments; the job script runs karman directly (KARMAN_LAUNCHER="").
#  - submit.sh passes nodes, ranks, memory, time limit, requeue, the warning signal and the
#    appended log to sbatch, and refuses bad arguments with one line;
#  - an unsteady run (DFG 2D-2's case on a coarse cylinder channel, 60 steps, checkpoints every 4)
#    started by the job script
#    and sent the time-limit warning (USR1) mid-run calls `scontrol requeue JOBID` and stops;
#    started again (SLURM_RESTART_COUNT=1) it continues with --restart from its checkpoint and
#    its force history equals an uninterrupted run's to 1e-10 with no step missing or repeated;
#    a third start finds the job done and does nothing;
#  - an optimization (8-step per-step control, L-BFGS, 4 evaluations) interrupted in its 2nd is
#    continued with --restart (journal replayed) and ends with the uninterrupted run's best
#    objective (1e-12);
#  - a first start in an OUTDIR without checkpoints or journal is not given --restart.
# usage: slurm_requeue.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
job=$src/scripts/slurm/karman-job.sh
submit=$src/scripts/slurm/submit.sh
cat > bin/sbatch <<SH
#!/usr/bin/env bash
printf '%s\n' "\$@" > $work/sbatch.args
echo "Submitted batch job 42"
SH
cat > bin/scontrol <<SH
#!/usr/bin/env bash
echo "\$*" >> $work/scontrol.log
SH
chmod +x bin/sbatch bin/scontrol
export PATH=$work/bin:$PATH KARMAN=$karman KARMAN_LAUNCHER=""

# submit.sh
cp "$src/cases/dfg-2d2/case.yaml" dfg.yaml
sed -i "s|file: dfg-channel.geo|file: $src/cases/dfg-2d1/dfg-channel.geo|; s|file: ../dfg-2d1/dfg-channel.geo|file: $src/cases/dfg-2d1/dfg-channel.geo|" dfg.yaml
bash "$submit" run dfg.yaml sub --nodes 2 --ranks 64 --mem 120G --time 1-12:00:00 --partition big \
  -- --set mesh.level=3 > submit.log 2>&1 || { cat submit.log; fail "submit.sh"; }
for want in --nodes=2 --ntasks=64 --mem=120G --time=1-12:00:00 --requeue "--signal=B:USR1@300" \
  --open-mode=append "--output=$work/sub/slurm-%j.out" --partition=big "$job" run "$work/dfg.yaml" \
  "$work/sub" --set mesh.level=3; do
  grep -qxF -- "$want" sbatch.args || { cat sbatch.args; fail "sbatch was not given $want"; }
done
bad() { # EXPECTED-TEXT ARGS...
  local text=$1
  shift
  bash "$submit" "$@" > bad.log 2>&1 && fail "submit.sh accepted $*"
  [ "$(wc -l < bad.log)" = 1 ] && grep -qF -- "$text" bad.log || { cat bad.log; fail "submit.sh $*: expected '$text'"; }
}
bad "--mem is required" run dfg.yaml sub --nodes 1 --ranks 4 --time 1:00:00
bad "--ranks must be a positive integer, got 'four'" run dfg.yaml sub --nodes 1 --ranks four --mem 4G --time 1:00:00
bad "unknown command 'solve'" solve dfg.yaml sub --nodes 1 --ranks 4 --mem 4G --time 1:00:00
bad "case file 'nope.yaml' not found" run nope.yaml sub --nodes 1 --ranks 4 --mem 4G --time 1:00:00

# an unsteady run, warned mid-way, requeued, continued
# (on the 452-cell cylinder channel of tests/data: 60 steps of 0.02 s, warned at step 10; with the
# multigrid a step takes ~0.03 s, so the run must be long enough for the warning to land mid-run)
opts=(--set mesh.file="$src/tests/data/control-cylinder.geo" --set mesh.level=0
      --set mesh.cache_dir="$work/cache" --set time.dt=0.02 --set time.t_end=1.2
      --set output.checkpoint_every=4 --set output.vtk=false)
"$karman" run dfg.yaml -o ref "${opts[@]}" > ref.log 2>&1 || { tail -3 ref.log; fail "reference run"; }
warn() { # PATTERN LOG PID: the time-limit warning (USR1) to the job script once LOG shows PATTERN
  for _ in $(seq 1 4500); do
    grep -q "$1" "$2" && break
    sleep 0.02
  done
  kill -USR1 "$3"
  wait "$3"
}
SLURM_JOB_ID=42 bash "$job" run dfg.yaml runA "${opts[@]}" > job1.log 2>&1 &
warn "step     10 " job1.log $!
status=$?
[ $status = 143 ] || { tail -3 job1.log; fail "the warned job script exited with $status, not 143"; }
grep -q "step     60 " job1.log && fail "the run finished before the warning"
grep -qx "requeue 42" scontrol.log || fail "scontrol requeue 42 was not called"
grep -q -- "--restart" job1.log && fail "the first start was given --restart"
SLURM_JOB_ID=42 SLURM_RESTART_COUNT=1 bash "$job" run dfg.yaml runA "${opts[@]}" > job2.log 2>&1 ||
  { tail -3 job2.log; fail "the requeued job"; }
grep -q "karman run dfg.yaml -o runA --restart" job2.log || fail "the requeued job did not restart"
grep -q "restart from .*step" job2.log || fail "karman did not continue from a checkpoint"
SLURM_JOB_ID=42 SLURM_RESTART_COUNT=2 bash "$job" run dfg.yaml runA "${opts[@]}" > job3.log 2>&1 ||
  fail "a finished job's restart failed"
grep -q "nothing to do" job3.log || fail "a finished job ran again"
/usr/bin/python3 - <<'PY' || exit 1
import csv
def load(path):
    rows = list(csv.DictReader(open(path)))
    return {int(r["step"]): r for r in rows}, [int(r["step"]) for r in rows]
ref, ref_steps = load("ref/forces.csv")
got, steps = load("runA/forces.csv")
assert steps == ref_steps, f"steps {steps} != {ref_steps}"
worst = max(abs(float(ref[s][k]) - float(got[s][k])) / max(abs(float(ref[s][k])), 1e-3)
            for s in ref_steps for k in ("cd", "cl", "delta_p"))
print(f"requeued run: {len(steps)} rows, max relative difference to the uninterrupted run {worst:.2e}")
assert worst <= 1e-10, worst
PY

# an optimization, warned in its 2nd evaluation, requeued, continued from its journal
sed "s|file: control-cylinder.geo, level: 0|file: $src/tests/data/control-cylinder.geo, level: 0, cache_dir: $work/cache|" \
  "$src/tests/data/control-perstep.yaml" > control.yaml
grep -q "cache_dir: $work/cache" control.yaml || fail "tests/data/control-perstep.yaml: its mesh line changed"
four=(--set optimization.max_evaluations=4)
"$karman" optimize control.yaml -o oref "${four[@]}" > oref.log 2>&1 || { tail -3 oref.log; fail "reference optimization"; }
SLURM_JOB_ID=43 bash "$job" optimize control.yaml optA "${four[@]}" > ojob1.log 2>&1 &
warn "evaluation   0 " ojob1.log $!
grep -qx "requeue 43" scontrol.log || fail "scontrol requeue 43 was not called"
grep -q "after 4 evaluations" ojob1.log && fail "the optimization finished before the warning"
SLURM_JOB_ID=43 SLURM_RESTART_COUNT=1 bash "$job" optimize control.yaml optA "${four[@]}" > ojob2.log 2>&1 ||
  { tail -3 ojob2.log; fail "the requeued optimization"; }
grep -q "karman optimize control.yaml -o optA --restart" ojob2.log || fail "the optimization did not restart"
grep -q "replayed" ojob2.log || fail "no evaluation was replayed"
/usr/bin/python3 - <<'PY' || exit 1
import json
a, b = json.load(open("oref/summary.json")), json.load(open("optA/summary.json"))
fa, fb = a["objective"], b["objective"]
print(f"requeued optimization: best objective {fb:.15g} (uninterrupted {fa:.15g})")
assert abs(fa - fb) <= 1e-12 * abs(fa), (fa, fb)
PY
echo "slurm_requeue: all checks passed"
