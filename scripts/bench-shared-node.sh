#!/usr/bin/env bash
# MPI busy-waiting on a shared node: 2-rank karman runs with OMPI_MCA_mpi_yield_when_idle 0 and 1
# (scripts/mpi-env.sh sets 1 only when KARMAN_SHARED_NODE=1), alone, beside a busy 1-process job
# (a shell loop: what ctest -j2 puts beside a 2-rank test, or a user's serial job) and beside
# another 2-rank job (the same run in a loop, with the same setting).  Three workloads: DFG 2D-1 on
# its coarsest mesh (steady, LU: few, large messages), 20 time steps of DFG 2D-2 on its coarsest
# mesh (the defaults' iterative solver: a reduction in every GMRES iteration), and the control
# campaign of cli_control_optimize (6 evaluations of 8 time steps on a 452-cell mesh: thousands of
# small messages, latency-bound).  REPEATS runs of
# each setting, alternating; whole-process wall time, medians with the range, and the load
# average seen; a run is stopped after TIMEOUT seconds (reported as "> TIMEOUT").  Writes
# results/bench-shared-node.{md,csv}; runs stay in results/bench-shared-node/ (not committed).
# usage: scripts/bench-shared-node.sh [REPEATS] [TIMEOUT]   (default 3, 60)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
repeats=${1:-3}
limit=${2:-60}
[ -x build/release/karman ] || bash scripts/build.sh
KARMAN_SHARED_NODE=0 . scripts/mpi-env.sh # (the setting is chosen per run below)
unset OMPI_MCA_mpi_yield_when_idle
out=results/bench-shared-node
rm -rf "$out" && mkdir -p "$out"
common=(--set output.vtk=false --set output.checkpoint_every=0 --set mesh.level=0
  --set mesh.cache_dir="$root/$out/cache")
args_steady=(run cases/dfg-2d1/case.yaml "${common[@]}")
args_unsteady=(run cases/dfg-2d2/case.yaml "${common[@]}" --set time.t_end=0.1)
args_control=(optimize tests/data/control-perstep.yaml "${common[@]}")
csv="$out.csv"
echo "workload,setting,yield_when_idle,repeat,wall_time,load" > "$csv"
measure() { # WORKLOAD SETTING YIELD REPEAT
  local dir="$out/$1-$2-y$3-r$4" wall
  local -n args="args_$1"
  if env OMPI_MCA_mpi_yield_when_idle="$3" /usr/bin/time -f %e -o "$dir.time" \
    timeout "$limit" mpirun -n 2 build/release/karman "${args[@]}" -o "$dir" > "$dir.log" 2>&1; then
    wall=$(tail -1 "$dir.time")
  else
    wall=timeout
  fi
  echo "$1,$2,$3,$4,$wall,$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$csv"
}
bg=
start_busy() { # busy 1-process job
  setsid bash -c 'while :; do :; done' &
  bg=$!
  sleep 1
}
start_other_job() { # WORKLOAD YIELD: the other 2-rank job, in its own process group
  local -n args="args_$1"
  setsid bash -c "while :; do env OMPI_MCA_mpi_yield_when_idle=$2 mpirun -n 2 build/release/karman ${args[*]} \
    -o $out/other > /dev/null 2>&1; done" &
  bg=$!
  sleep 3
}
stop_bg() {
  kill -- "-$bg" 2> /dev/null || true
  wait "$bg" 2> /dev/null || true
  bg=
  sleep 1
}
trap '[ -z "$bg" ] || kill -- "-$bg" 2> /dev/null || true' EXIT
for w in steady unsteady control; do # (meshes)
  declare -n a="args_$w"
  mpirun -n 2 build/release/karman "${a[@]}" -o "$out/warmup-$w" > "$out/warmup-$w.log" 2>&1
  unset -n a
done
for r in $(seq "$repeats"); do
  for w in steady unsteady control; do
    for y in 0 1; do
      measure "$w" alone "$y" "$r"
      start_busy
      measure "$w" beside-busy "$y" "$r"
      stop_bg
      start_other_job "$w" "$y"
      measure "$w" beside-job "$y" "$r"
      stop_bg
    done
  done
done
/usr/bin/python3 - "$csv" "$out.md" "$repeats" "$limit" <<'PY'
import csv, datetime, os, platform, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
limit = float(sys.argv[4])
def cell(values):
    v = [limit if x == "timeout" else float(x) for x in values]
    fmt = lambda x: f"> {limit:.0f}" if x >= limit else f"{x:.2f}"
    return f"{fmt(statistics.median(v))} ({fmt(min(v))}-{fmt(max(v))})"
lines = [f"MPI busy-waiting on a shared node ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores): "
         "2-rank runs, whole-process wall time, "
         f"{sys.argv[3]} runs of each setting, alternating; medians (range) in seconds", "",
         "* steady: `mpirun -n 2 karman run cases/dfg-2d1/case.yaml --set mesh.level=0` (LU)",
         "* unsteady: `mpirun -n 2 karman run cases/dfg-2d2/case.yaml --set mesh.level=0 --set time.t_end=0.1` "
         "(20 steps, the defaults' iterative solver)",
         "* control: `mpirun -n 2 karman optimize tests/data/control-perstep.yaml` (6 evaluations of 8 steps "
         "on 452 cells: latency-bound)", "",
         "| workload | beside | yield_when_idle 0 | yield_when_idle 1 | load average seen |",
         "|---|---|---|---|---|"]
names = {"alone": "nothing", "beside-busy": "a busy 1-process job (shell loop)",
         "beside-job": "another 2-rank job (the same run in a loop, same setting)"}
for w in ("steady", "unsteady", "control"):
    for setting in ("alone", "beside-busy", "beside-job"):
        cells = []
        loads = []
        for y in ("0", "1"):
            sel = [r for r in rows if r["workload"] == w and r["setting"] == setting and r["yield_when_idle"] == y]
            cells.append(cell([r["wall_time"] for r in sel]))
            loads += [float(r["load"]) for r in sel]
        lines.append(f"| {w} | {names[setting]} | {cells[0]} | {cells[1]} | {min(loads):.1f}-{max(loads):.1f} |")
lines += ["", "The load average (1 minute, at the end of each run) includes whatever else ran on the machine.",
          "Reproduce: scripts/bench-shared-node.sh [REPEATS] [TIMEOUT]"]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
