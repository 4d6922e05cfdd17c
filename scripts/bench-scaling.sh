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
# The rows measured now are merged into the committed table results/bench-scaling.csv (3D:
# results/bench-scaling-3d.csv), keyed by (case, level, ranks, linear): a re-measured key replaces
# its row, every other row stays as it is (a skipped run adds a row only where there is none), so
# levels and rank counts can be run one at a time; results/bench-scaling*.md is written from the
# merged rows.  Run logs and summaries stay in results/bench-scaling*/ (not committed).
# usage: scripts/bench-scaling.sh [LEVELS] [RANKS] [TIME_LIMIT_S]   (default: "0 1 2 3" "1 2" 3600)
#        BENCH_METHODS="iterative"    only these methods (default "direct iterative")
#        BENCH_DIRECT_MAX_LEVEL=N     direct runs up to level N (default 2D: 3, 3D: 1)
#        BENCH_ADJOINT=0              no adjoint runs
#        BENCH_REPORT_ONLY=1          no runs: merge every run found in results/bench-scaling*/ into
#                                     the table
#        BENCH_CASE=dfg-3d1z          DFG 3D-1Z (cases/dfg-3d1z)
#        BENCH_KARMAN=PATH            the executable (default build/release/karman, built if missing)
#        BENCH_RESULTS=DIR            where the table and the runs go (default results)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2 3"}
ranks=${2:-"1 2"}
limit=${3:-3600}
methods=${BENCH_METHODS:-"direct iterative"}
adjoint=${BENCH_ADJOINT:-1}
karman=${BENCH_KARMAN:-build/release/karman}
results=${BENCH_RESULTS:-results}
[ -n "${BENCH_KARMAN:-}" ] || [ -x "$karman" ] || bash scripts/build.sh
. scripts/mpi-env.sh
bench_case=${BENCH_CASE:-dfg-2d1}
case $bench_case in
  dfg-2d1) out=$results/bench-scaling title="DFG 2D-1" direct_max=${BENCH_DIRECT_MAX_LEVEL:-3} ;;
  dfg-3d1z) out=$results/bench-scaling-3d title="DFG 3D-1Z" direct_max=${BENCH_DIRECT_MAX_LEVEL:-1} ;;
  *) echo "bench-scaling: BENCH_CASE must be dfg-2d1 or dfg-3d1z, got '$bench_case'" >&2; exit 2 ;;
esac
for m in $methods; do
  case $m in direct | iterative) ;; *) echo "bench-scaling: BENCH_METHODS: unknown method '$m' (direct, iterative)" >&2; exit 2 ;; esac
done
mkdir -p "$out"
# the runs of this invocation (LEVEL RANKS METHOD per line): their rows replace the table's
measured="$out/.measured"
: > "$measured"
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && echo all > "$measured"
if [ "${BENCH_REPORT_ONLY:-0}" != 1 ]; then
  for l in $levels; do
    for np in $ranks; do
      for m in $methods; do
        run="$out/L$l-np$np-$m"
        rm -rf "$run" "$run".*
        echo "$l $np $m" >> "$measured"
        if [ "$m" = direct ] && [ "$l" -gt "$direct_max" ]; then
          echo "skipped" > "$run.status"
          continue
        fi
        echo "bench-scaling: $title level $l, $np rank(s), $m"
        status=0
        opts=(--set mesh.level="$l" --set solver.linear="$m" --set output.vtk=false)
        timeout "$limit" mpirun -n "$np" "$karman" run "cases/$bench_case/case.yaml" -o "$run" \
          "${opts[@]}" > "$run.log" 2>&1 || status=$?
        echo "$status" > "$run.status"
        if [ "$status" != 0 ]; then tail -2 "$run.log"; continue; fi
        if [ "$adjoint" = 1 ]; then
          # reuses the converged state in $run/flow.h5
          status=0
          timeout "$limit" mpirun -n "$np" "$karman" adjoint "cases/$bench_case/case.yaml" -o "$run" \
            "${opts[@]}" > "$run.adjoint.log" 2>&1 || status=$?
          echo "$status" > "$run.adjoint.status"
          [ "$status" = 0 ] || tail -2 "$run.adjoint.log"
        fi
        rm -f "$run"/*.h5 # large and not needed for the table
      done
    done
  done
fi
/usr/bin/python3 - "$out" "$limit" "$title" "$bench_case" "$measured" <<'PY'
import csv, datetime, glob, io, json, os, platform, re, sys
out, limit, title, case, measured_file = sys.argv[1:6]
# published bounds (Schäfer & Turek 1996)
bounds = {"dfg-2d1": {"cd": (5.57, 5.59), "cl": (0.0104, 0.0110), "dp": (0.1172, 0.1176)},
          "dfg-3d1z": {"cd": (6.05, 6.25), "cl": (0.008, 0.010), "dp": (0.165, 0.175)}}[case]
columns = ["case", "level", "cells", "ranks", "linear", "status", "newton_iterations", "linear_iterations",
           "mean_linear_per_step", "max_linear_per_step", "wall_time", "peak_memory_mib", "kib_per_cell", "cd",
           "cl", "delta_p", "adjoint_time", "adjoint_over_forward", "converged", "date"]
def key(row):
    return (row["case"], int(row["level"]), int(row["ranks"]), row["linear"])

# the committed table (rows of files written before the case, converged and date columns were
# added: this case, converged, no date)
table = {}
if os.path.exists(out + ".csv"):
    reader = csv.DictReader(open(out + ".csv", newline=""))
    legacy = "converged" not in reader.fieldnames
    for row in reader:
        row = {c: row.get(c) or "" for c in columns}
        row["case"] = row["case"] or case
        if legacy and row["status"] == "0":
            row["converged"] = "1"  # (the old table listed no run that had not converged)
        table[key(row)] = row

# the runs whose rows replace the table's: this invocation's, or (BENCH_REPORT_ONLY) every run found
lines = open(measured_file).read().split("\n")
found = []
for status_file in glob.glob(f"{out}/L*-np*-*.status"):
    m = re.match(r".*/L(\d+)-np(\d+)-(direct|iterative)\.status$", status_file)
    if m: found.append((int(m.group(1)), int(m.group(2)), m.group(3)))
if "all" in lines:
    runs = found
else:
    runs = [(int(t[0]), int(t[1]), t[2]) for t in (l.split() for l in lines) if len(t) == 3]
for l, np, m in runs:
    run = f"{out}/L{l}-np{np}-{m}"
    status = open(run + ".status").read().strip()
    row = {c: "" for c in columns}
    date = datetime.date.fromtimestamp(os.path.getmtime(run + ".status")).isoformat()
    row.update(case=case, level=str(l), ranks=str(np), linear=m, status=status, date=date)
    path = run + "/summary.json"
    if status == "0" and os.path.exists(path):
        s = json.load(open(path))
        steps = []
        for line in open(run + ".log"):
            if "newton" in line and " lin " in line:
                t = line.split()
                steps.append(int(t[t.index("lin") + 1]))
        steps = steps[1:]  # iteration 0 has no linear solve
        n = max(len(steps), 1)
        row.update(cells=str(s["cells"]), newton_iterations=str(s["newton_iterations"]),
                   linear_iterations=str(s["linear_iterations"]), mean_linear_per_step=f"{sum(steps) / n:.2f}",
                   max_linear_per_step=str(max(steps, default=0)), wall_time=f"{s['wall_time']:.3f}",
                   peak_memory_mib=f"{s['peak_memory_mib']:.1f}",
                   kib_per_cell=f"{s['peak_memory_mib'] * 1024 / s['cells']:.3f}", cd=f"{s['cd']:.12f}",
                   cl=f"{s['cl']:.12f}", delta_p=f"{s['delta_p']:.12f}", converged="1" if s["converged"] else "0")
        grad = run + "/gradient.json"
        if os.path.exists(grad):
            g = json.load(open(grad))
            row.update(adjoint_time=f"{g['adjoint_wall_time']:.1f}",
                       adjoint_over_forward=f"{g['adjoint_over_forward_time']:.2f}")
        elif os.path.exists(run + ".adjoint.status"):
            row["adjoint_time"] = f"failed (exit {open(run + '.adjoint.status').read().strip()})"
    elif status == "0":
        row["status"] = "no summary"
    if status == "skipped" and key(row) in table:
        continue  # not measured: the row that is there stays
    table[key(row)] = row

rows = sorted(table.values(), key=lambda r: (r["case"], int(r["level"]), int(r["ranks"]), r["linear"] != "direct"))
def mark(name, v):
    lo, hi = bounds[name]
    return f"{float(v):.6f}" + (" ✓" if lo <= float(v) <= hi else "")
head = ("| level | cells | ranks | linear | Newton its | linear its | per Newton step (mean / max) | wall time [s] "
        "| peak memory [MiB] | KiB per cell | c_D | c_L | Δp | adjoint time [s] | adjoint / forward | measured |")
md = [f"{title} steady from rest, direct vs iterative linear solver ({platform.node()}, {os.cpu_count()} cores; "
      f"rows merged from the runs of each date)", "", head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
mean_its = {}
for r in rows:
    if r["status"] != "0" or not r["cells"]:
        why = {"124": "time limit", "skipped": "skipped (LU memory)", "no summary": "no summary.json"}.get(
            r["status"], f"failed (exit {r['status']})")
        md.append(f"| {r['level']} | | {r['ranks']} | {r['linear']} | {why} |" + " |" * 10 + f" {r['date']} |")
        continue
    if r["linear"] == "iterative":
        mean_its.setdefault(int(r["ranks"]), []).append((int(r["cells"]), float(r["mean_linear_per_step"])))
    ok = "" if r["converged"] == "1" else " (not converged)"
    md.append(f"| {r['level']} | {r['cells']} | {r['ranks']} | {r['linear']} | {r['newton_iterations']}{ok} "
              f"| {r['linear_iterations']} | {float(r['mean_linear_per_step']):.1f} / {r['max_linear_per_step']} "
              f"| {float(r['wall_time']):.1f} | {float(r['peak_memory_mib']):.0f} | {float(r['kib_per_cell']):.2f} "
              f"| {mark('cd', r['cd'])} | {mark('cl', r['cl'])} | {mark('dp', r['delta_p'])} | {r['adjoint_time']} "
              f"| {r['adjoint_over_forward']} | {r['date']} |")
md += ["", f"✓: inside the published bounds (Schäfer & Turek 1996: c_D in [{bounds['cd'][0]}, {bounds['cd'][1]}], "
       f"c_L in [{bounds['cl'][0]}, {bounds['cl'][1]}], Δp in [{bounds['dp'][0]}, {bounds['dp'][1]}]).",
       "Wall time: the Newton solve (meshing, set-up and output excluded). Peak memory: sum over the ranks of the "
       "peak resident set of the whole process (mesh, set-up, MPI included). Linear iterations: direct = 1 per "
       "Newton step (preonly LU); iterative = GMRES iterations (Eisenstat-Walker tolerances capped at 0.1, at most "
       "solver.linear_max_iterations = 200 per step). Adjoint: `karman adjoint` (drag) from the converged state in "
       "its own process, same linear solver (transposed LU, or GMRES to adjoint.rtol, default 1e-10, with the "
       "multigrid built from the transposed compact matrix, applied untransposed); its time covers the Jacobian, "
       "the preconditioner, the transposed solve and the gradient. Measured: the date of the row's run (empty: "
       "a row from before the dates were recorded; the git history of this file has it)."]
for np in sorted(mean_its):
    its = sorted(mean_its[np])
    if len(its) >= 2:
        md.append(f"Iterative, {np} rank(s): mean linear iterations per Newton step: "
                  + ", ".join(f"{c} cells {m:.1f}" for c, m in its) + ".")
md += ["On a machine shared with other jobs the wall times are indicative only.",
       f"Reproduce a row: {'BENCH_CASE=' + case + ' ' if case != 'dfg-2d1' else ''}scripts/bench-scaling.sh LEVEL RANKS "
       "TIME_LIMIT_S (BENCH_METHODS=direct or iterative); its row replaces the table's, the others stay."]
text = io.StringIO()
w = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
w.writeheader()
w.writerows(rows)
open(out + ".csv", "w").write(text.getvalue())
open(out + ".md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
print(f"bench-scaling: {len(runs)} row(s) measured now, {len(rows)} in {out}.csv")
PY
rm -f "$measured"
echo "bench-scaling: results in $out.md"
