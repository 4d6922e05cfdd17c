#!/usr/bin/env bash
# Steady-adjoint benchmark on Schäfer-Turek DFG 2D-1 (drag objective): for each mesh level
# and rank count, `karman run` then `karman adjoint` (a separate process that reuses the
# converged state); wall time and peak memory of both.  Targets: adjoint / forward wall
# time <= 0.25, adjoint / forward peak memory <= 1.5.  Prints the table and writes
# results/bench-adjoint.{md,csv}.
# usage: scripts/bench-adjoint.sh [LEVELS] [RANKS]      (default "0 1 2" "1 2")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2"}
ranks=${2:-"1 2"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-adjoint
mkdir -p "$out"
# BENCH_REPORT_ONLY=1: only rebuild the table from the runs already in results/
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && levels_run="" || levels_run=$levels
for l in $levels_run; do
  for np in $ranks; do
    d="$out/L$l-np$np"
    rm -rf "$d"
    echo "bench-adjoint: level $l on $np rank(s)"
    opts=(--set mesh.level="$l" --set output.vtk=false)
    mpirun -n "$np" build/release/karman run cases/dfg-2d1/case.yaml -o "$d" "${opts[@]}" > "$d.forward.log" 2>&1 ||
      { tail -5 "$d.forward.log"; exit 1; }
    mpirun -n "$np" build/release/karman adjoint cases/dfg-2d1/case.yaml -o "$d" "${opts[@]}" > "$d.adjoint.log" 2>&1 ||
      { tail -5 "$d.adjoint.log"; exit 1; }
  done
done
/usr/bin/python3 - "$out" "$levels" "$ranks" <<'PY'
import json, sys, datetime, platform, os
out, levels, ranks = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
head = ("| level | ranks | cells | Newton its | forward time [s] | adjoint time [s] | adjoint / forward time "
        "| forward memory [MiB] | adjoint memory [MiB] | adjoint / forward memory | dc_D/dnu |")
lines = [f"DFG 2D-1 steady adjoint benchmark ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores): "
         "drag objective, MUMPS LU for Newton and for the transposed solve; targets: time ratio <= 0.25, "
         "memory ratio <= 1.5", "", head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,ranks,cells,newton_iterations,forward_time,adjoint_time,time_ratio,forward_memory,adjoint_memory,"
       "memory_ratio,dcd_dnu"]
for l in levels:
    for np in ranks:
        s = json.load(open(f"{out}/L{l}-np{np}/summary.json"))
        g = json.load(open(f"{out}/L{l}-np{np}/gradient.json"))
        tr = g["adjoint_wall_time"] / s["wall_time"]
        mr = g["peak_memory_mib"] / s["peak_memory_mib"]
        dnu = g["gradient"]["fluid.viscosity"]["gradient"]
        lines.append(f"| {l} | {np} | {s['cells']} | {s['newton_iterations']} | {s['wall_time']:.2f} "
                     f"| {g['adjoint_wall_time']:.2f} | {tr:.3f} | {s['peak_memory_mib']:.0f} | {g['peak_memory_mib']:.0f} "
                     f"| {mr:.2f} | {dnu:.6g} |")
        csv.append(f"{l},{np},{s['cells']},{s['newton_iterations']},{s['wall_time']:.3f},{g['adjoint_wall_time']:.3f},"
                   f"{tr:.4f},{s['peak_memory_mib']:.1f},{g['peak_memory_mib']:.1f},{mr:.3f},{dnu:.10g}")
lines += ["", "Forward time: the Newton solve; adjoint time: Jacobian at the converged state, its LU factorization, "
          "the transposed solve and the gradient assembly (parameters and mesh coordinates). Memory: peak resident "
          "set summed over the ranks, each command in its own process."]
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
open(f"{out}.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-adjoint: results in $out.md and $out.csv"
