#!/usr/bin/env bash
# Unsteady-solver benchmark on Schäfer-Turek DFG 2D-2: for each mesh level and rank
# count, a short run (STEPS steps of dt = 0.005 from rest, a checkpoint every step):
# wall time per step, Newton and linear iterations per step, preconditioner set-ups (LU
# factorizations by default), checkpoint write time and size per record, peak memory.
# Prints the table and writes results/bench-unsteady.{md,csv}.
# usage: scripts/bench-unsteady.sh [LEVELS] [RANKS] [STEPS]     (default "0 1 2" "1 2" 40)
# Time to solution (issue 15 b): BENCH_LINEAR=direct|iterative (solver.linear), BENCH_DT (time
# step, default 0.005), BENCH_INITIAL=path/flow.h5 (start from that developed state, e.g. the
# final state of a level's validate-dfg2d2.sh run, without the start-up rotation pulse),
# BENCH_CHECKPOINT_EVERY (default 1; a checkpoint also sets the preconditioner up again): wall time
# per simulated second and the time split per step (residuals, Jacobian assembly, preconditioner
# set-up, linear solves); written to results/bench-unsteady-LINEAR-dtDT[-developed].{md,csv}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2"}
ranks=${2:-"1 2"}
steps=${3:-40}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
linear=${BENCH_LINEAR:-}
dt=${BENCH_DT:-0.005}
initial=${BENCH_INITIAL:-}
ck_every=${BENCH_CHECKPOINT_EVERY:-1}
extra=()
if [ -z "$linear$initial" ] && [ "$dt" = 0.005 ] && [ "$ck_every" = 1 ]; then
  out=results/bench-unsteady
else
  out=results/bench-unsteady-${linear:-auto}-dt$dt${initial:+-developed}
  [ -n "$linear" ] && extra+=(--set solver.linear="$linear")
  if [ -n "$initial" ]; then
    [ -s "$initial" ] || { echo "bench-unsteady: BENCH_INITIAL: no file '$initial'" >&2; exit 2; }
    extra+=(--set initial.file="$(cd "$(dirname "$initial")" && pwd)/$(basename "$initial")" --set boundaries.cylinder.omega=0)
  fi
fi
mkdir -p "$out"
# BENCH_REPORT_ONLY=1: only rebuild the table from the runs already in results/
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && levels_run="" || levels_run=$levels
for l in $levels_run; do
  for np in $ranks; do
    echo "bench-unsteady: level $l on $np rank(s), $steps steps"
    rm -rf "$out/L$l-np$np"
    mpirun -n "$np" build/release/karman run cases/dfg-2d2/case.yaml -o "$out/L$l-np$np" --set mesh.level="$l" \
      --set time.dt="$dt" --set time.t_end="$(/usr/bin/python3 -c "print($steps * $dt)")" \
      --set output.vtk=false --set output.checkpoint_every="$ck_every" "${extra[@]}" > "$out/L$l-np$np.log" 2>&1 ||
      { tail -5 "$out/L$l-np$np.log"; exit 1; }
  done
done
/usr/bin/python3 - "$out" "$levels" "$ranks" "$linear" "$dt" "$initial" "$ck_every" <<'PY'
import json, sys, platform, datetime, os
out, levels, ranks = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
linear, dt, initial, ck_every = sys.argv[4], float(sys.argv[5]), sys.argv[6], sys.argv[7]
head = ("| level | ranks | cells | unknowns | steps | wall time / step [s] | wall time / simulated second [s] "
        "| Newton its / step | linear its / step | preconditioner set-ups "
        "| per step: residuals / Jacobian / PC set-up / linear solves [s] "
        "| checkpoint write / record [s] | checkpoint size / record [MiB] | peak memory [MiB] |")
solver = {"": "GMRES + reused MUMPS LU of the compact Jacobian (solver.linear: auto)",
          "direct": "GMRES + reused MUMPS LU of the compact Jacobian",
          "iterative": "GMRES + reused coupled multigrid (kaskade cycles, ILU(1) in RCM order) on the compact Jacobian"}[linear]
start = f"from the developed state {initial} (no rotation pulse)" if initial else "from rest"
lines = [f"DFG 2D-2 unsteady benchmark ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores): BDF2, "
         f"dt = {dt} {start}, {solver}, a checkpoint every {ck_every} step(s)", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,ranks,cells,unknowns,steps,wall_time_per_step,wall_time_per_simulated_second,newton_per_step,linear_per_step,pc_setups,"
       "checkpoint_seconds,checkpoint_bytes,peak_memory_mib"]
for l in levels:
    for np in ranks:
        s = json.load(open(f"{out}/L{l}-np{np}/summary.json"))
        c = s["checkpoint"]
        n = max(s["steps_this_run"], 1)
        split = s.get("time_split", {})
        parts = " / ".join(f"{split.get(k, float('nan')) / n:.3f}" for k in
                           ("residual", "jacobian_assembly", "preconditioner_setup", "linear_solve_and_other"))
        lines.append(f"| {l} | {np} | {s['cells']} | {s['unknowns']} | {s['steps']} | {s['wall_time_per_step']:.3f} "
                     f"| {s['wall_time_per_step'] / dt:.1f} "
                     f"| {s['newton_iterations_per_step']:.2f} | {s['linear_iterations_per_step']:.1f} "
                     f"| {s['preconditioner_setups']} | {parts} | {c['write_time_per_record']:.4f} | {c['bytes_per_record'] / 2**20:.2f} "
                     f"| {s['peak_memory_mib']:.0f} |")
        csv.append(f"{l},{np},{s['cells']},{s['unknowns']},{s['steps']},{s['wall_time_per_step']:.4f},"
                   f"{s['wall_time_per_step'] / dt:.3f},"
                   f"{s['newton_iterations_per_step']:.3f},{s['linear_iterations_per_step']:.2f},{s['preconditioner_setups']},"
                   f"{c['write_time_per_record']:.5f},{c['bytes_per_record']:.0f},{s['peak_memory_mib']:.1f}")
lines += ["", "Wall time per step includes the checkpoint writes; peak memory is the sum over the ranks; the time "
          "split's last part is the linear solves with the rest of the Newton iteration (line search, updates)."]
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
open(f"{out}.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-unsteady: results in $out.md and $out.csv"
