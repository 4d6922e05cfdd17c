#!/usr/bin/env bash
# Linear-solver scaling benchmark on the steady Schäfer-Turek cases (DFG 2D-1, Re = 20; with
# BENCH_CASE=dfg-3d1z DFG 3D-1Z): direct (MUMPS LU, solver.linear: direct) against iterative
# (Jacobian-free Newton-GMRES with coupled algebraic multigrid on the compact matrix,
# solver.linear: iterative) for each mesh level and rank count, from rest with the case's default
# settings: cells, Newton iterations, linear iterations (total, mean and largest per Newton step),
# wall time of the Newton solve, peak memory (sum of the ranks' peak resident sets) per cell, c_D,
# c_L and delta p against the published bounds; then (BENCH_ADJOINT=1, the default) `karman
# adjoint` of the drag from the converged state with the same linear solver: its wall time and its
# ratio to the forward's.  A run that fails or exceeds the time limit is listed as such; direct
# runs above BENCH_DIRECT_MAX_LEVEL are skipped (the LU needs ~20 KiB per cell in 2D, ~90 in 3D).
# The table lists every run found in the results directory, so levels can be run one at a time.
# Writes results/bench-scaling.md (3D: results/bench-scaling-3d.md) and .csv; run logs and
# summaries stay in results/bench-scaling*/ (not committed).
# usage: scripts/bench-scaling.sh [LEVELS] [RANKS] [TIME_LIMIT_S]   (default: "0 1 2 3" "1 2" 3600)
#        BENCH_METHODS="iterative"    only these methods (default "direct iterative")
#        BENCH_DIRECT_MAX_LEVEL=N     direct runs up to level N (default 2D: 3, 3D: 1)
#        BENCH_ADJOINT=0              no adjoint runs
#        BENCH_REPORT_ONLY=1          only rebuild the table from the runs in results/
#        BENCH_CASE=dfg-3d1z          DFG 3D-1Z (cases/dfg-3d1z)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2 3"}
ranks=${2:-"1 2"}
limit=${3:-3600}
methods=${BENCH_METHODS:-"direct iterative"}
adjoint=${BENCH_ADJOINT:-1}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
bench_case=${BENCH_CASE:-dfg-2d1}
case $bench_case in
  dfg-2d1) out=results/bench-scaling title="DFG 2D-1" direct_max=${BENCH_DIRECT_MAX_LEVEL:-3} ;;
  dfg-3d1z) out=results/bench-scaling-3d title="DFG 3D-1Z" direct_max=${BENCH_DIRECT_MAX_LEVEL:-1} ;;
  *) echo "bench-scaling: BENCH_CASE must be dfg-2d1 or dfg-3d1z, got '$bench_case'" >&2; exit 2 ;;
esac
for m in $methods; do
  case $m in direct | iterative) ;; *) echo "bench-scaling: BENCH_METHODS: unknown method '$m' (direct, iterative)" >&2; exit 2 ;; esac
done
mkdir -p "$out"
if [ "${BENCH_REPORT_ONLY:-0}" != 1 ]; then
  for l in $levels; do
    for np in $ranks; do
      for m in $methods; do
        run="$out/L$l-np$np-$m"
        rm -rf "$run" "$run".*
        if [ "$m" = direct ] && [ "$l" -gt "$direct_max" ]; then
          echo "skipped" > "$run.status"
          continue
        fi
        echo "bench-scaling: $title level $l, $np rank(s), $m"
        status=0
        opts=(--set mesh.level="$l" --set solver.linear="$m" --set output.vtk=false)
        timeout "$limit" mpirun -n "$np" build/release/karman run "cases/$bench_case/case.yaml" -o "$run" \
          "${opts[@]}" > "$run.log" 2>&1 || status=$?
        echo "$status" > "$run.status"
        if [ "$status" != 0 ]; then tail -2 "$run.log"; continue; fi
        if [ "$adjoint" = 1 ]; then
          # reuses the converged state in $run/flow.h5
          status=0
          timeout "$limit" mpirun -n "$np" build/release/karman adjoint "cases/$bench_case/case.yaml" -o "$run" \
            "${opts[@]}" > "$run.adjoint.log" 2>&1 || status=$?
          echo "$status" > "$run.adjoint.status"
          [ "$status" = 0 ] || tail -2 "$run.adjoint.log"
        fi
        rm -f "$run"/*.h5 # large and not needed for the table
      done
    done
  done
fi
/usr/bin/python3 - "$out" "$limit" "$title" "$bench_case" <<'PY'
import datetime, glob, json, os, platform, re, sys
out, limit, title, case = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
# published bounds (Schäfer & Turek 1996)
bounds = {"dfg-2d1": {"cd": (5.57, 5.59), "cl": (0.0104, 0.0110), "dp": (0.1172, 0.1176)},
          "dfg-3d1z": {"cd": (6.05, 6.25), "cl": (0.008, 0.010), "dp": (0.165, 0.175)}}[case]
def mark(key, v):
    lo, hi = bounds[key]
    return f"{v:.6f}" + (" ✓" if lo <= v <= hi else "")
runs = []
for status_file in glob.glob(f"{out}/L*-np*-*.status"):
    m = re.match(r".*/L(\d+)-np(\d+)-(direct|iterative)\.status$", status_file)
    if m: runs.append((int(m.group(1)), int(m.group(2)), m.group(3)))
runs.sort(key=lambda r: (r[0], r[1], r[2] != "direct"))
head = ("| level | cells | ranks | linear | Newton its | linear its | per Newton step (mean / max) | wall time [s] "
        "| peak memory [MiB] | KiB per cell | c_D | c_L | Δp | adjoint time [s] | adjoint / forward |")
lines = [f"{title} steady from rest, direct vs iterative linear solver ({datetime.date.today()}, {platform.node()}, "
         f"{os.cpu_count()} cores, time limit {limit} s per run)", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,cells,ranks,linear,status,newton_iterations,linear_iterations,mean_linear_per_step,max_linear_per_step,"
       "wall_time,peak_memory_mib,kib_per_cell,cd,cl,delta_p,adjoint_time,adjoint_over_forward"]
mean_its = {}
for l, np, m in runs:
    run = f"{out}/L{l}-np{np}-{m}"
    status = open(run + ".status").read().strip()
    path = run + "/summary.json"
    if status != "0" or not os.path.exists(path):
        why = {"124": f"time limit ({limit} s)", "skipped": f"skipped (LU memory)"}.get(status, f"failed (exit {status})")
        lines.append(f"| {l} | | {np} | {m} | {why} |" + " |" * 10)
        csv.append(f"{l},,{np},{m},{status}" + "," * 12)
        continue
    s = json.load(open(path))
    steps = []
    for line in open(run + ".log"):
        if "newton" in line and " lin " in line:
            t = line.split()
            steps.append(int(t[t.index("lin") + 1]))
    steps = steps[1:]  # iteration 0 has no linear solve
    n = max(len(steps), 1)
    mean, mx = sum(steps) / n, max(steps, default=0)
    mean_its[(l, np, m)] = (s["cells"], mean)
    kib = s["peak_memory_mib"] * 1024 / s["cells"]
    ok = "" if s["converged"] else " (not converged)"
    adj_time = adj_ratio = ""
    grad = run + "/gradient.json"
    if os.path.exists(grad):
        g = json.load(open(grad))
        adj_time, adj_ratio = f"{g['adjoint_wall_time']:.1f}", f"{g['adjoint_over_forward_time']:.2f}"
    elif os.path.exists(run + ".adjoint.status"):
        adj_time = f"failed (exit {open(run + '.adjoint.status').read().strip()})"
    lines.append(f"| {l} | {s['cells']} | {np} | {m} | {s['newton_iterations']}{ok} | {s['linear_iterations']} "
                 f"| {mean:.1f} / {mx} | {s['wall_time']:.1f} | {s['peak_memory_mib']:.0f} | {kib:.2f} "
                 f"| {mark('cd', s['cd'])} | {mark('cl', s['cl'])} | {mark('dp', s['delta_p'])} | {adj_time} | {adj_ratio} |")
    csv.append(f"{l},{s['cells']},{np},{m},{status},{s['newton_iterations']},{s['linear_iterations']},{mean:.2f},{mx},"
               f"{s['wall_time']:.3f},{s['peak_memory_mib']:.1f},{kib:.3f},{s['cd']:.12f},{s['cl']:.12f},"
               f"{s['delta_p']:.12f},{adj_time},{adj_ratio}")
lines += ["", f"✓: inside the published bounds (Schäfer & Turek 1996: c_D in [{bounds['cd'][0]}, {bounds['cd'][1]}], "
          f"c_L in [{bounds['cl'][0]}, {bounds['cl'][1]}], Δp in [{bounds['dp'][0]}, {bounds['dp'][1]}]).",
          "Wall time: the Newton solve (meshing, set-up and output excluded). Peak memory: sum over the ranks of the "
          "peak resident set of the whole process (mesh, set-up, MPI included). Linear iterations: direct = 1 per "
          "Newton step (preonly LU); iterative = GMRES iterations (Eisenstat-Walker tolerances capped at 0.1, at most "
          "solver.linear_max_iterations = 200 per step). Adjoint: `karman adjoint` (drag) from the converged state in "
          "its own process, same linear solver (transposed LU, or GMRES to adjoint.rtol, default 1e-10, with the "
          "multigrid built from the transposed compact matrix, applied untransposed); its time covers the Jacobian, the preconditioner, the transposed solve and the gradient."]
for np in sorted({r[1] for r in runs}):
    its = sorted((v for k, v in mean_its.items() if k[1] == np and k[2] == "iterative"))
    if len(its) >= 2:
        lines.append(f"Iterative, {np} rank(s): mean linear iterations per Newton step: "
                     + ", ".join(f"{c} cells {m:.1f}" for c, m in its) + ".")
lines += ["On a machine shared with other jobs the wall times are indicative only.",
          f"Reproduce: {'BENCH_CASE=' + case + ' ' if case != 'dfg-2d1' else ''}scripts/bench-scaling.sh \"LEVELS\" \"RANKS\" TIME_LIMIT_S"]
open(out + ".md", "w").write("\n".join(lines) + "\n")
open(out + ".csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-scaling: results in $out.md"
