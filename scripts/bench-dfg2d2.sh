#!/usr/bin/env bash
# Time to solution on Schäfer-Turek DFG 2D-2 (issue 15 b): the whole case (cases/dfg-2d2, from
# rest to t = 6, statistics over [4, 6]) for each configuration; wall time per simulated second
# (the whole run's wall time / 6, start-up included), Newton and linear iterations per step,
# the time split per step, and the accuracy against the high-accuracy reference c_D,max 3.2274,
# St 0.3018 (acceptance: within 0.35 % and 1.5 %) and against 3.23 / 0.300 (within 0.3 % / 1.5 %,
# and 0.1 % / 0.3 %).  Prints the table and writes results/bench-dfg2d2.{md,csv} (rows of
# configurations not run this time are kept from the CSV).
# usage: scripts/bench-dfg2d2.sh ["CONFIG ..."] [RANKS]
#   CONFIG = NAME:LINEAR:LEVEL:DT:RTOL:LINEAR_RTOL[:REFACTOR[:TOLERANCES]]  (solver.linear,
#            mesh.level, time.dt, solver.rtol, solver.linear_rtol, solver.refactor_iterations,
#            solver.tolerances); a field "-" is not set (the case's value or the default); default
#            "shipped:-:-:-:-:-" (the case as the README runs it: karman run's forward tolerances),
#            "expert:-:-:-:1e-2:1e-2:14:converged" (the hand-set forward-only tolerances that the
#            README used to give) and "converged:-:-:-:-:-:-:converged" (steps converged as the
#            adjoint needs them)
# BENCH_ARGS: extra `karman run` arguments for every configuration.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
configs=${1:-"shipped:-:-:-:-:- expert:-:-:-:1e-2:1e-2:14:converged converged:-:-:-:-:-:-:converged"}
np=${2:-2}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-dfg2d2
mkdir -p "$out"
names=""
for c in $configs; do
  IFS=: read -r name linear level dt rtol lrtol refactor tolerances <<< "$c"
  [ -n "$lrtol" ] || { echo "bench-dfg2d2: '$c' is not NAME:LINEAR:LEVEL:DT:RTOL:LINEAR_RTOL[:REFACTOR[:TOLERANCES]]" >&2; exit 2; }
  names="$names $name"
  # BENCH_REPORT_ONLY=1: only rebuild the table (from the CSV and these configurations' run folders)
  [ "${BENCH_REPORT_ONLY:-0}" = 1 ] && continue
  echo "bench-dfg2d2: $name (solver.linear $linear, level $level, dt $dt, rtol $rtol, linear_rtol $lrtol, refactor_iterations ${refactor:--}, tolerances ${tolerances:--}) on $np rank(s)"
  sets=()
  for kv in solver.linear="$linear" mesh.level="$level" time.dt="$dt" solver.rtol="$rtol" \
    solver.linear_rtol="$lrtol" solver.refactor_iterations="${refactor:--}" solver.tolerances="${tolerances:--}"; do
    [ "${kv#*=}" = - ] || sets+=(--set "$kv")
  done
  rm -rf "${out:?}/$name"
  mpirun -n "$np" build/release/karman run cases/dfg-2d2/case.yaml -o "$out/$name" "${sets[@]}" \
    --set output.vtk=false ${BENCH_ARGS:-} > "$out/$name.log" 2>&1 || { tail -5 "$out/$name.log"; exit 1; }
done
BENCH_ARGS=${BENCH_ARGS:-} /usr/bin/python3 - "$out" "$np" $names <<'PY'
import csv, datetime, json, os, platform, sys
import yaml
sys.path.insert(0, "postprocess")
from lift_peaks import extrema  # noqa: E402  peaks located by the parabola through three samples

out, np, names = sys.argv[1], sys.argv[2], sys.argv[3:]
cols = ["name", "extra_args", "linear", "level", "cells", "dt", "rtol", "linear_rtol", "refactor_iterations", "tolerances", "ranks", "steps", "wall_time",
        "wall_per_simulated_second", "wall_per_simulated_second_window", "newton_per_step", "linear_per_step", "pc_setups", "residual_per_step",
        "jacobian_per_step", "pc_setup_per_step", "linear_solve_per_step", "cd_max", "cl_max", "strouhal",
        "peak_memory_mib"]
rows = {}
if os.path.exists(f"{out}.csv"):
    for r in csv.DictReader(open(f"{out}.csv")):
        rows[r["name"]] = r
for name in names:
    d = f"{out}/{name}"
    s = json.load(open(f"{d}/summary.json"))
    case = yaml.safe_load(open(f"{d}/case.resolved.yaml"))
    history = list(csv.DictReader(open(f"{d}/forces.csv")))
    t0 = float(case["time"]["statistics_start"])
    n, split = max(s["steps"], 1), s["time_split"]
    rows[name] = {
        "name": name, "extra_args": os.environ.get("BENCH_ARGS", ""), "linear": case["solver"]["linear"], "level": case["mesh"]["level"], "cells": s["cells"],
        "dt": s["dt"], "rtol": case["solver"]["rtol"], "linear_rtol": case["solver"]["linear_rtol"],
        "refactor_iterations": case["solver"]["refactor_iterations"],
        # solver.tolerances as resolved by the run (older rows: converged)
        "tolerances": s.get("step_tolerances", "converged"),
        "ranks": s["ranks"], "steps": s["steps"], "wall_time": f"{s['wall_time']:.1f}",
        "wall_per_simulated_second": f"{s['wall_time'] / s['t_end']:.2f}",
        # the developed flow alone: the steps in the statistics window (forces.csv wall_time)
        "wall_per_simulated_second_window": f"{sum(float(r['wall_time']) for r in history if float(r['time']) > t0 + 1e-9) / (s['t_end'] - t0):.2f}",
        "newton_per_step": f"{s['newton_iterations_per_step']:.3f}",
        "linear_per_step": f"{s['linear_iterations_per_step']:.2f}", "pc_setups": s["preconditioner_setups"],
        "residual_per_step": f"{split['residual'] / n:.4f}", "jacobian_per_step": f"{split['jacobian_assembly'] / n:.4f}",
        "pc_setup_per_step": f"{split['preconditioner_setup'] / n:.4f}",
        "linear_solve_per_step": f"{split['linear_solve_and_other'] / n:.4f}",
        "cd_max": f"{max(v for _, v in extrema(history, 'cd', t0, 1)):.6f}",
        "cl_max": f"{max(v for _, v in extrema(history, 'cl', t0, 1)):.6f}",
        "strouhal": f"{s['strouhal']:.6f}", "peak_memory_mib": f"{s['peak_memory_mib']:.0f}"}


def dev(v, ref):
    return 100 * (float(v) / ref - 1)


head = ("| run | other settings | solver.linear | level | cells | dt | solver.rtol | linear_rtol | refactor_iterations | step tolerances | ranks | steps | wall time [s] "
        "| **wall time / simulated second [s]** | the same over [4, 6] | Newton its / step | linear its / step | PC set-ups "
        "| per step: residuals / Jacobian / PC set-up / linear solves [s] | c_D max (vs 3.2274) | c_L max "
        "| St (vs 0.3018) | within 0.35 % / 1.5 % of 3.2274 / 0.3018 | within 0.3 % / 1.5 % of 3.23 / 0.300 "
        "| within 0.1 % / 0.3 % | peak memory [MiB] |")
lines = [f"DFG 2D-2 time to solution ({datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores): "
         "cases/dfg-2d2 from rest to t = 6, BDF2, statistics over [4, 6]; wall time per simulated second = the "
         "whole run's wall time / 6 (start-up, output and checkpoints every 100 steps included)", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
for r in rows.values():
    cd, st = float(r["cd_max"]), float(r["strouhal"])
    ok = lambda a, b: "yes" if a and b else "no"
    acc = ok(abs(dev(cd, 3.2274)) <= 0.35, abs(dev(st, 0.3018)) <= 1.5)
    b1 = ok(abs(dev(cd, 3.23)) <= 0.3, abs(dev(st, 0.300)) <= 1.5)
    b2 = ok(abs(dev(cd, 3.23)) <= 0.1, abs(dev(st, 0.300)) <= 0.3)
    lines.append(f"| {r['name']} | {r.get('extra_args') or '-'} | {r['linear']} | {r['level']} | {r['cells']} | {r['dt']} | {r['rtol']} "
                 f"| {r['linear_rtol']} | {r['refactor_iterations']} | {r.get('tolerances') or 'converged'} | {r['ranks']} | {r['steps']} | {r['wall_time']} "
                 f"| **{r['wall_per_simulated_second']}** | {r['wall_per_simulated_second_window']} | {r['newton_per_step']} | {r['linear_per_step']} "
                 f"| {r['pc_setups']} | {r['residual_per_step']} / {r['jacobian_per_step']} / {r['pc_setup_per_step']} "
                 f"/ {r['linear_solve_per_step']} | {cd:.4f} ({dev(cd, 3.2274):+.2f} %) | {float(r['cl_max']):.4f} "
                 f"| {st:.4f} ({dev(st, 0.3018):+.2f} %) | {acc} | {b1} | {b2} | {r['peak_memory_mib']} |")
lines += ["", "Peaks located by the parabola through three samples (postprocess/lift_peaks.py); St from the lift "
          "frequency over the window.  Target of issue 15: <= 18 s per simulated second on 2 ranks within "
          "0.35 % / 1.5 %."]
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
with open(f"{out}.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    for r in rows.values():
        w.writerow({k: r.get(k, "converged" if k == "tolerances" else "") for k in cols})
print("\n".join(lines))
PY
