#!/usr/bin/env bash
# MPI busy-waiting on a shared node: a 2-rank `karman run` of DFG 2D-1 on its coarsest mesh with
# and without OMPI_MCA_mpi_yield_when_idle=1 (scripts/mpi-env.sh sets it on a busy node), beside
# another 2-rank job (the same run in a loop, with the same setting) and without it; REPEATS runs of
# each of the four settings, alternating.  Whole-process wall time and the Newton solve's time
# (summary.json), medians with the range, and the load average seen.  Writes
# results/bench-shared-node.{md,csv}; runs stay in results/bench-shared-node/ (not committed).
# usage: scripts/bench-shared-node.sh [REPEATS]   (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
repeats=${1:-5}
[ -x build/release/karman ] || bash scripts/build.sh
KARMAN_SHARED_NODE=0 . scripts/mpi-env.sh # (the setting is chosen per run below)
unset OMPI_MCA_mpi_yield_when_idle
out=results/bench-shared-node
rm -rf "$out" && mkdir -p "$out"
args=(run cases/dfg-2d1/case.yaml --set mesh.level=0 --set mesh.cache_dir="$root/$out/cache" --set output.vtk=false)
csv="$out.csv"
echo "setting,yield_when_idle,repeat,wall_time,solve_time,load" > "$csv"
measure() { # SETTING YIELD REPEAT
  local dir="$out/$1-y$2-r$3"
  env OMPI_MCA_mpi_yield_when_idle="$2" /usr/bin/time -f %e -o "$dir.time" \
    mpirun -n 2 build/release/karman "${args[@]}" -o "$dir" > "$dir.log" 2>&1
  local solve
  solve=$(/usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['wall_time'])" "$dir/summary.json")
  echo "$1,$2,$3,$(tail -1 "$dir.time"),$solve,$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$csv"
}
bg=
start_other_job() { # YIELD: the other 2-rank job, in its own process group
  setsid bash -c "while :; do env OMPI_MCA_mpi_yield_when_idle=$1 mpirun -n 2 build/release/karman ${args[*]} \
    -o $out/other > /dev/null 2>&1; done" &
  bg=$!
  sleep 3
}
stop_other_job() {
  kill -- "-$bg" 2> /dev/null || true
  wait "$bg" 2> /dev/null || true
  bg=
  sleep 1
}
trap '[ -z "$bg" ] || kill -- "-$bg" 2> /dev/null || true' EXIT
mpirun -n 2 build/release/karman "${args[@]}" -o "$out/warmup" > "$out/warmup.log" 2>&1 # (meshes)
for r in $(seq "$repeats"); do
  for y in 0 1; do
    start_other_job "$y"
    measure beside-job "$y" "$r"
    stop_other_job
  done
  for y in 0 1; do measure alone "$y" "$r"; done
done
/usr/bin/python3 - "$csv" "$out.md" "$repeats" <<'PY'
import csv, datetime, os, platform, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def cell(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"
lines = [f"MPI busy-waiting on a shared node ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores): "
         "`mpirun -n 2 karman run cases/dfg-2d1/case.yaml --set mesh.level=0 --set output.vtk=false`, "
         f"{sys.argv[3]} runs of each setting, alternating; medians (range)", "",
         "| | OMPI_MCA_mpi_yield_when_idle | wall time [s] | Newton solve [s] | load average seen |",
         "|---|---|---|---|---|"]
names = {"beside-job": "beside another 2-rank job (the same run in a loop, same setting)",
         "alone": "without the second job"}
for setting in ("beside-job", "alone"):
    for y in ("0", "1"):
        sel = [r for r in rows if r["setting"] == setting and r["yield_when_idle"] == y]
        wall = [float(r["wall_time"]) for r in sel]
        solve = [float(r["solve_time"]) for r in sel]
        load = [float(r["load"]) for r in sel]
        lines.append(f"| {names[setting]} | {y} | {cell(wall)} | {cell(solve)} | {min(load):.1f}-{max(load):.1f} |")
lines += ["", "Wall time: the whole mpirun process; Newton solve: summary.json wall_time. The load average "
          "(1 minute, at the end of each run) includes whatever else ran on the machine.",
          "Reproduce: scripts/bench-shared-node.sh [REPEATS]"]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
