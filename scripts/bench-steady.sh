#!/usr/bin/env bash
# Steady-solver benchmark and mesh-convergence study on Schäfer-Turek DFG 2D-1.
# For each mesh level and rank count: cells, unknowns, Newton iterations, linear
# iterations, wall time of the solve, peak memory, and c_D, c_L, delta p against the
# reference values.  Prints the table and writes it to results/bench-steady.{csv,md}.
# usage: scripts/bench-steady.sh [LEVELS] [RANKS]      (default: "0 1 2 3" "1 2")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2 3"}
ranks=${2:-"1 2"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-steady
mkdir -p "$out"
# BENCH_REPORT_ONLY=1: only rebuild the table from the runs already in results/
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && levels_run="" || levels_run=$levels
for l in $levels_run; do
  for np in $ranks; do
    echo "bench-steady: level $l on $np rank(s)"
    mpirun -n "$np" build/release/karman run cases/dfg-2d1/case.yaml -o "$out/L$l-np$np" \
      --set mesh.level="$l" --set output.vtk=false --set output.hdf5=false > "$out/L$l-np$np.log" 2>&1 ||
      { tail -5 "$out/L$l-np$np.log"; exit 1; }
  done
done
/usr/bin/python3 - "$out" "$levels" "$ranks" <<'PY'
import json, sys, platform, datetime, os
out, levels, ranks = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
ref = {"cd": 5.57953523384, "cl": 0.010618948146, "delta_p": 0.11752016697}
bounds = {"cd": (5.57, 5.59), "cl": (0.0104, 0.0110), "delta_p": (0.1172, 0.1176)}
rows = []
for l in levels:
    for np in ranks:
        s = json.load(open(f"{out}/L{l}-np{np}/summary.json"))
        rows.append((l, np, s))
head = ("| level | ranks | cells | unknowns | Newton its | linear its | residual drop | wall time [s] | peak memory [MiB] "
        "| c_D | c_L | Δp | c_D err | c_L err | Δp err |")
lines = [f"DFG 2D-1 steady benchmark ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores); "
         f"reference c_D {ref['cd']}, c_L {ref['cl']}, Δp {ref['delta_p']}; "
         f"bounds c_D {bounds['cd']}, c_L {bounds['cl']}, Δp {bounds['delta_p']}", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,ranks,cells,unknowns,newton_iterations,linear_iterations,residual_drop,wall_time,peak_memory_mib,cd,cl,delta_p"]
for l, np, s in rows:
    err = {k: (s[k] - ref[k]) / ref[k] for k in ref}
    inside = {k: "✓" if bounds[k][0] <= s[k] <= bounds[k][1] else "" for k in ref}
    drop = s["initial_residual"] / max(s["final_residual"], 1e-300)
    lines.append(f"| {l} | {np} | {s['cells']} | {s['unknowns']} | {s['newton_iterations']} | {s['linear_iterations']} "
                 f"| {drop:.1e} | {s['wall_time']:.2f} | {s['peak_memory_mib']:.0f} | {s['cd']:.6f}{inside['cd']} "
                 f"| {s['cl']:.6f}{inside['cl']} | {s['delta_p']:.6f}{inside['delta_p']} | {err['cd']:+.2e} "
                 f"| {err['cl']:+.2e} | {err['delta_p']:+.2e} |")
    csv.append(f"{l},{np},{s['cells']},{s['unknowns']},{s['newton_iterations']},{s['linear_iterations']},{drop:.3e},"
               f"{s['wall_time']:.3f},{s['peak_memory_mib']:.1f},{s['cd']:.12f},{s['cl']:.12f},{s['delta_p']:.12f}")
lines.append("")
lines.append("✓: inside the published bounds. Wall time: the Newton solve (setup and output excluded); "
             "peak memory: sum of the ranks' peak resident sets.")
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
open(f"{out}.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-steady: results in $out.md and $out.csv"
