#!/usr/bin/env bash
# Adaptive time steps (time.dt: auto) against fixed steps on DFG 2D-2 (cases/dfg-2d2 as shipped:
# level 1, from rest to t = 6, St over [4, 6], karman run's default forward tolerances):
#  1. the level's dt -> 0 Strouhal number: fixed steps DT1 > DT2 (default 0.0032, 0.0025),
#     St(dt) = St0 - C dt^2 fitted through both (BDF2);
#  2. dt auto with time.tolerance TOL (default: the case's, i.e. the default 4e-4): its St error
#     against St0, its steps and wall time;
#  3. the fixed step of the same temporal accuracy, dt = sqrt(|St_auto - St0| / C), run
#     alternating with dt auto (BENCH_REPEAT times each, default 2).
# Prints the table and writes results/bench-adaptive.md (the runs in results/bench-adaptive/).
# usage: scripts/bench-adaptive.sh [TOL] [RANKS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tol=${1:-}
np=${2:-2}
dt1=${BENCH_DT1:-0.0032} dt2=${BENCH_DT2:-0.0025}
repeat=${BENCH_REPEAT:-2}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-adaptive
mkdir -p "$out"
run() { # NAME ARGS...: one karman run of the case, its wall time (whole process) into NAME.time
  local name=$1
  shift
  echo "bench-adaptive: $name: $*"
  rm -rf "${out:?}/$name"
  local start
  start=$(date +%s.%N)
  mpirun -n "$np" build/release/karman run cases/dfg-2d2/case.yaml -o "$out/$name" \
    --set output.vtk=false --set output.checkpoint_every=0 "$@" > "$out/$name.log" 2>&1 ||
    { tail -5 "$out/$name.log"; exit 1; }
  /usr/bin/python3 -c "print($(date +%s.%N) - $start)" > "$out/$name.time"
}
strouhal() { /usr/bin/python3 -c "import json; print(json.load(open('$out/$1/summary.json'))['strouhal'])"; }

run ref-$dt1 --set time.dt=$dt1
run ref-$dt2 --set time.dt=$dt2
auto=(--set time.dt=auto)
[ -z "$tol" ] || auto+=(--set time.tolerance="$tol")
run auto-1 "${auto[@]}"
# the fixed step of the auto run's temporal accuracy
dt_equal=$(/usr/bin/python3 - "$(strouhal ref-$dt1)" "$(strouhal ref-$dt2)" "$(strouhal auto-1)" $dt1 $dt2 <<'PY'
import sys
s1, s2, sa, d1, d2 = map(float, sys.argv[1:])
C = (s2 - s1) / (d1 * d1 - d2 * d2)
s0 = s2 + C * d2 * d2
print(f"{(abs(sa - s0) / C) ** 0.5:.5f}")
PY
)
run fixed-1 --set time.dt="$dt_equal"
for k in $(seq 2 "$repeat"); do
  run auto-$k "${auto[@]}"
  run fixed-$k --set time.dt="$dt_equal"
done

/usr/bin/python3 - "$out" "$dt1" "$dt2" "$repeat" "$np" "${tol:-default}" <<'PY' | tee results/bench-adaptive.md
import json, sys, os, datetime
out, d1, d2, repeat, np, tol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
def load(name):
    j = json.load(open(f"{out}/{name}/summary.json"))
    j["process_time"] = float(open(f"{out}/{name}.time").read())
    return j
r1, r2 = load(f"ref-{d1:g}"), load(f"ref-{d2:g}")
s1, s2 = r1["strouhal"], r2["strouhal"]
C = (s2 - s1) / (d1 * d1 - d2 * d2)
s0 = s2 + C * d2 * d2
print(f"# Adaptive time steps on DFG 2D-2 ({datetime.date.today()}, {np} ranks)\n")
print(f"cases/dfg-2d2 as shipped (level 1, from rest to t = 6, St over [4, 6], karman run's default "
      f"forward tolerances), `bash scripts/bench-adaptive.sh`.  The level's dt -> 0 Strouhal number from "
      f"fixed steps {d1:g} and {d2:g} (St = St0 - C dt^2): St0 = {s0:.6f}, C = {C:.1f}.  time.tolerance: {tol}.  "
      f"Runs alternating auto / fixed; wall time of the whole process.\n")
print("| run | dt | steps | rejected | dt range | St | St error vs St0 | c_D max | wall time [s] |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|")
rows = [(f"ref-{d1:g}", r1), (f"ref-{d2:g}", r2)]
for k in range(1, repeat + 1):
    rows += [(f"auto-{k}", load(f"auto-{k}")), (f"fixed-{k}", load(f"fixed-{k}"))]
for name, j in rows:
    auto = j["dt"] == "auto"
    rng = f"{j['dt_range'][0]:.4g} .. {j['dt_range'][1]:.4g}" if auto else "-"
    err = (j["strouhal"] - s0) / s0 * 100
    print(f"| {name} | {j['dt'] if not auto else 'auto'} | {j['steps']} | {j.get('rejected_steps', '-') if auto else '-'} | {rng} | "
          f"{j['strouhal']:.6f} | {err:+.3f} % | {j['cd_stats']['max']:.6f} | {j['process_time']:.1f} |")
a = [load(f"auto-{k}")["process_time"] for k in range(1, repeat + 1)]
f = [load(f"fixed-{k}")["process_time"] for k in range(1, repeat + 1)]
print(f"\nauto / fixed of the same St accuracy: fastest {min(a) / min(f):.2f}, mean {sum(a) / sum(f):.2f}")
PY
