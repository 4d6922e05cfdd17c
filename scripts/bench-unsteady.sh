#!/usr/bin/env bash
# Unsteady-solver benchmark on Schäfer-Turek DFG 2D-2: for each mesh level and rank
# count, a short run (STEPS steps of dt = 0.005 from rest, a checkpoint every step):
# wall time per step, Newton and linear iterations per step, preconditioner set-ups (LU
# factorizations by default), checkpoint write time and size per record, peak memory.
# Prints the table and writes results/bench-unsteady.{md,csv}.
# usage: scripts/bench-unsteady.sh [LEVELS] [RANKS] [STEPS]     (default "0 1 2" "1 2" 40)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2"}
ranks=${2:-"1 2"}
steps=${3:-40}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-unsteady
mkdir -p "$out"
# BENCH_REPORT_ONLY=1: only rebuild the table from the runs already in results/
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && levels_run="" || levels_run=$levels
for l in $levels_run; do
  for np in $ranks; do
    echo "bench-unsteady: level $l on $np rank(s), $steps steps"
    rm -rf "$out/L$l-np$np"
    mpirun -n "$np" build/release/karman run cases/dfg-2d2/case.yaml -o "$out/L$l-np$np" --set mesh.level="$l" \
      --set time.dt=0.005 --set time.t_end="$(/usr/bin/python3 -c "print($steps * 0.005)")" \
      --set output.vtk=false --set output.checkpoint_every=1 > "$out/L$l-np$np.log" 2>&1 ||
      { tail -5 "$out/L$l-np$np.log"; exit 1; }
  done
done
/usr/bin/python3 - "$out" "$levels" "$ranks" <<'PY'
import json, sys, platform, datetime, os
out, levels, ranks = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
head = ("| level | ranks | cells | unknowns | steps | wall time / step [s] | Newton its / step | linear its / step "
        "| preconditioner set-ups | checkpoint write / record [s] | checkpoint size / record [MiB] | peak memory [MiB] |")
lines = [f"DFG 2D-2 unsteady benchmark ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores): BDF2, "
         "dt = 0.005 from rest, GMRES + reused MUMPS LU of the compact Jacobian, a checkpoint every step", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,ranks,cells,unknowns,steps,wall_time_per_step,newton_per_step,linear_per_step,pc_setups,"
       "checkpoint_seconds,checkpoint_bytes,peak_memory_mib"]
for l in levels:
    for np in ranks:
        s = json.load(open(f"{out}/L{l}-np{np}/summary.json"))
        c = s["checkpoint"]
        lines.append(f"| {l} | {np} | {s['cells']} | {s['unknowns']} | {s['steps']} | {s['wall_time_per_step']:.3f} "
                     f"| {s['newton_iterations_per_step']:.2f} | {s['linear_iterations_per_step']:.1f} "
                     f"| {s['preconditioner_setups']} | {c['write_time_per_record']:.4f} | {c['bytes_per_record'] / 2**20:.2f} "
                     f"| {s['peak_memory_mib']:.0f} |")
        csv.append(f"{l},{np},{s['cells']},{s['unknowns']},{s['steps']},{s['wall_time_per_step']:.4f},"
                   f"{s['newton_iterations_per_step']:.3f},{s['linear_iterations_per_step']:.2f},{s['preconditioner_setups']},"
                   f"{c['write_time_per_record']:.5f},{c['bytes_per_record']:.0f},{s['peak_memory_mib']:.1f}")
lines += ["", "Wall time per step includes the checkpoint writes; peak memory is the sum over the ranks."]
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
open(f"{out}.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-unsteady: results in $out.md and $out.csv"
