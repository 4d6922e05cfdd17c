#!/usr/bin/env bash
# RANS benchmark (issue 44): cases/naca0012-rans (SA-neg, Re 6e6, 10 degrees) from free stream
# with the shipped defaults, for each mesh level on NP ranks: `karman run` then `karman adjoint`
# of C_D (a separate process that reuses the converged state).  Figures: cells, Newton steps,
# GMRES iterations (in all and per Newton step), forward and adjoint wall time, their ratio,
# peak memory (resident set summed over the ranks) and per cell, C_D and C_L.  Targets of the
# issue: adjoint / forward time <= 0.5, forward memory <= 5 KiB per cell on the ~100k-cell
# level (level 2: 97,280 cells).  Prints the table and writes results/bench-rans.{md,csv}; the
# runs stay in results/bench-rans/ (summary.json, gradient.json, logs).  OpenFOAM's simpleFoam
# on the same meshes: scripts/peer-openfoam-naca0012-rans.sh.
# usage: scripts/bench-rans.sh [LEVELS] [NP]      (default "2", 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-2}
np=${2:-2}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-rans
mkdir -p "$out"
case_file=cases/naca0012-rans/case.yaml
# BENCH_REPORT_ONLY=1: only rebuild the table from the runs already in results/
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && levels_run="" || levels_run=$levels
for l in $levels_run; do
  d="$out/L$l-np$np"
  rm -rf "$d"
  echo "bench-rans: level $l on $np rank(s)"
  opts=(--set mesh.level="$l" --set output.vtk=false)
  mpirun -n "$np" build/release/karman run "$case_file" -o "$d" "${opts[@]}" > "$d.forward.log" 2>&1 ||
    { tail -5 "$d.forward.log"; exit 1; }
  mpirun -n "$np" build/release/karman adjoint "$case_file" -o "$d" "${opts[@]}" > "$d.adjoint.log" 2>&1 ||
    { tail -5 "$d.adjoint.log"; exit 1; }
done
/usr/bin/python3 - "$out" "$levels" "$np" "$(git rev-parse --short HEAD)" <<'PY'
import datetime
import json
import os
import platform
import sys

out, levels, np, commit = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4]
head = ("| level | ranks | cells | Newton steps | GMRES its (per step) | forward [s] | adjoint [s] "
        "| adjoint solve | adjoint / forward | forward memory [MiB] | KiB / cell | adjoint memory "
        "[MiB] | C_D | C_L |")
lines = [f"NACA 0012 RANS benchmark (SA-neg, Re 6e6, 10 degrees, from free stream, shipped defaults; "
         f"{datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores, commit {commit}). "
         "Targets (issue 44): adjoint / forward time <= 0.5, forward memory <= 5 KiB per cell.",
         "", head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,ranks,cells,newton_iterations,linear_iterations,forward_time,adjoint_time,"
       "adjoint_linear_iterations,adjoint_lu_fallback,time_ratio,forward_memory_mib,kib_per_cell,adjoint_memory_mib,cd,cl"]
for l in levels:
    d = f"{out}/L{l}-np{np}"
    s = json.load(open(f"{d}/summary.json"))
    g = json.load(open(f"{d}/gradient.json"))
    its = g["adjoint_linear_iterations"]
    # solver.linear auto: GMRES + multigrid on J^T, the LU if that fails (the log says so)
    log = open(f"{d}.adjoint.log").read()
    fell_back = "solving it again with the direct LU" in log
    why = log.split("iterative linear solver did not converge (")[-1].split(")")[0] if fell_back else ""
    how = f"LU (GMRES: {why})" if fell_back else f"GMRES, {its} its"
    ratio = g["adjoint_wall_time"] / s["wall_time"]
    kib = s["peak_memory_mib"] * 1024 / s["cells"]
    per = s["linear_iterations"] / max(1, s["newton_iterations"])
    lines.append(f"| {l} | {s['ranks']} | {s['cells']} | {s['newton_iterations']} "
                 f"| {s['linear_iterations']} ({per:.1f}) | {s['wall_time']:.1f} "
                 f"| {g['adjoint_wall_time']:.1f} | {how} | {ratio:.3f} | {s['peak_memory_mib']:.0f} "
                 f"| {kib:.2f} | {g['peak_memory_mib']:.0f} | {s['cd']:.7f} | {s['cl']:.6f} |")
    csv.append(f"{l},{s['ranks']},{s['cells']},{s['newton_iterations']},{s['linear_iterations']},"
               f"{s['wall_time']:.3f},{g['adjoint_wall_time']:.3f},{its},{int(fell_back)},{ratio:.4f},"
               f"{s['peak_memory_mib']:.1f},{kib:.3f},{g['peak_memory_mib']:.1f},{s['cd']:.10g},"
               f"{s['cl']:.10g}")
lines += ["", "Forward: `karman run` (pseudo-transient Newton, GMRES with the coupled algebraic "
          "multigrid, solver.linear auto); adjoint: `karman adjoint` of C_D in its own process "
          "(Jacobian at the converged state, the transposed solve, parameter and mesh gradients; "
          "solver.linear auto: GMRES with the multigrid of the transposed compact matrix, the LU "
          "if it fails, whose time the adjoint time includes). "
          "Memory: peak resident set summed over the ranks (summary.json, gradient.json)."]
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
open(f"{out}.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-rans: results in $out.md and $out.csv"
