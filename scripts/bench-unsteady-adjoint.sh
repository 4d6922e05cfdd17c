#!/usr/bin/env bash
# Unsteady-adjoint benchmark: for cases/cylinder-rotary-control (needs the spin-up, run
# here if missing) and for DFG 2D-2 (coarse levels, 40 steps from rest with a rotary
# oscillation), the adjoint with store-all and with revolve for s = 10, 20, 50 snapshots:
# forward and adjoint wall time, recomputed steps, snapshots, bytes written, peak memory.
# Target: adjoint / forward time <= 0.5 with store-all.  Writes results/bench-unsteady-adjoint.{md,csv}.
# BENCH_LINEAR=iterative: forward and adjoint with solver.linear: iterative (multigrid), store-all
# only, DFG 2D-2 on levels 0-2; results/bench-unsteady-adjoint-iterative.{md,csv}.
# BENCH_INITIAL=path/flow.h5 (iterative): start the DFG 2D-2 runs from that developed state
# (interpolated onto each level; no rotation pulse) instead of from rest, as optimization
# campaigns do; results/bench-unsteady-adjoint-iterative-developed.{md,csv}.
# BENCH_REPEAT=N: every run N times (timings on a shared machine vary by 10-20 % from run to run);
# the tables give the medians of the times and of the ratio, and the ratio's range.
# BENCH_LEVELS (iterative): the DFG 2D-2 levels, default "0 1 2".
# usage: scripts/bench-unsteady-adjoint.sh [RANKS]      (default 1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
np=${1:-1}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
linear=${BENCH_LINEAR:-direct}
case $linear in
  direct) out=results/bench-unsteady-adjoint ;;
  iterative) out=results/bench-unsteady-adjoint-iterative${BENCH_INITIAL:+-developed} ;;
  *) echo "bench-unsteady-adjoint: BENCH_LINEAR must be direct or iterative, got '$linear'" >&2; exit 2 ;;
esac
mkdir -p "$out"
if [ "$linear" = direct ] && [ ! -s out/cylinder-spinup/flow.h5 ]; then
  echo "bench-unsteady-adjoint: spin-up of the cylinder wake (out/cylinder-spinup)"
  mpirun -n "$np" build/release/karman run cases/cylinder-rotary-control/spinup.yaml -o out/cylinder-spinup \
    --set output.vtk=false > "$out/spinup.log" 2>&1 || { tail -5 "$out/spinup.log"; exit 1; }
fi
dfg=(--set time.t_end=0.2 --set time.dt=0.005 --set "objective.window=[0.1, 0.2]"
     --set "boundaries.cylinder.omega={type: sine, amplitude: 0.5, frequency: 2.0, phase: 0.0}"
     --set output.vtk=false --set output.checkpoint_every=0)
if [ -n "${BENCH_INITIAL:-}" ]; then
  [ -s "$BENCH_INITIAL" ] || { echo "bench-unsteady-adjoint: BENCH_INITIAL: no file '$BENCH_INITIAL'" >&2; exit 2; }
  dfg+=(--set initial.file="$(cd "$(dirname "$BENCH_INITIAL")" && pwd)/$(basename "$BENCH_INITIAL")")
fi
repeat=${BENCH_REPEAT:-1}
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "bench-unsteady-adjoint: BENCH_REPEAT must be a positive integer, got '$repeat'" >&2; exit 2; }
run() { # name case schedule snapshots extra...   (snapshots "-" for store-all)
  local name=$1 case=$2 schedule=$3 snaps=$4 dir base i
  shift 4
  local opts=(--set adjoint.schedule="$schedule" --set solver.linear="$linear")
  if [ "$snaps" = - ]; then base=$out/$name-$schedule; else base=$out/$name-$schedule$snaps; opts+=(--set adjoint.snapshots="$snaps"); fi
  rm -rf "$base" "$base.log" "$base".run*
  for i in $(seq 1 "$repeat"); do
    dir=$base; [ "$repeat" = 1 ] || dir=$base.run$i
    echo "bench-unsteady-adjoint: $name, $schedule $snaps${dir#$base}"
    mpirun -n "$np" build/release/karman adjoint "$case" -o "$dir" "${opts[@]}" "$@" > "$dir.log" 2>&1 ||
      { tail -5 "$dir.log"; exit 1; }
  done
}
if [ "$linear" = direct ]; then
  for s in "store-all -" "revolve 10" "revolve 20" "revolve 50"; do
    run rotary cases/cylinder-rotary-control/case.yaml $s --set output.vtk=false
    run dfg2d2-L0 cases/dfg-2d2/case.yaml $s --set mesh.level=0 "${dfg[@]}"
  done
  run dfg2d2-L1 cases/dfg-2d2/case.yaml store-all - --set mesh.level=1 "${dfg[@]}"
else
  for l in ${BENCH_LEVELS:-0 1 2}; do run dfg2d2-L$l cases/dfg-2d2/case.yaml store-all - --set mesh.level=$l "${dfg[@]}"; done
fi
/usr/bin/python3 - "$out" "$np" "$linear" "${BENCH_INITIAL:-}" <<'PY'
import json, os, re, sys, datetime, platform, statistics
out, np, linear, initial = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
runs = {}
for d in sorted(os.listdir(out)):
    p = os.path.join(out, d, "gradient.json")
    if os.path.isfile(p):
        runs.setdefault(re.sub(r"\.run\d+$", "", d), []).append(json.load(open(p)))
rows = []
for d, gs in runs.items():
    # the repeated runs do the same work (same iterations); their times vary
    g = dict(gs[0])
    for key in ("forward_wall_time", "adjoint_wall_time", "adjoint_over_forward_time"):
        g[key] = statistics.median(x[key] for x in gs)
    ratios = [x["adjoint_over_forward_time"] for x in gs]
    g["ratio_text"] = (f"{g['adjoint_over_forward_time']:.2f}" if len(gs) == 1 else
                       f"{g['adjoint_over_forward_time']:.2f} ({min(ratios):.2f}-{max(ratios):.2f}, {len(gs)} runs)")
    rows.append((d, g))
head = ("| run | cells | steps | schedule | snapshots | recomputed steps | recompute factor | written [MiB] "
        "| forward [s] | adjoint [s] | adjoint / forward | adjoint linear iterations | adjoint preconditioner set-ups "
        "| forward peak memory [MiB] | adjoint peak memory [MiB] |")
solver = ("MUMPS LU (compact for the forward, exact for the adjoint), reused while it works" if linear == "direct" else
          "GMRES with coupled multigrid on the compact matrix (solver.linear: iterative), reused while it works; the adjoint's "
          "GMRES recycles adjoint.recycle vectors from level to level")
start = f"DFG 2D-2 from the developed state {initial}" if initial else "DFG 2D-2 from rest"
lines = [f"Unsteady adjoint benchmark ({datetime.date.today()}, {platform.node()}, {np} rank(s)); {start}; {solver}; "
         "recompute factor = (steps + recomputed) / steps", "", head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["run,cells,steps,schedule,snapshots,recomputed,written_bytes,forward,adjoint,ratio,adjoint_linear_iterations,"
       "adjoint_preconditioner_setups,forward_peak_memory,peak_memory"]
for d, g in rows:
    s = g["schedule"]
    f = (g["steps"] + s["recomputed_steps"]) / g["steps"]
    lines.append(f"| {d} | {g['cells']} | {g['steps']} | {s['type']} | {s['snapshots_used']} | {s['recomputed_steps']} "
                 f"| {f:.2f} | {s['bytes_written'] / 2**20:.1f} | {g['forward_wall_time']:.1f} | {g['adjoint_wall_time']:.1f} "
                 f"| {g['ratio_text']} | {g['adjoint_linear_iterations']} | {g['adjoint_preconditioner_setups']} "
                 f"| {g['forward_peak_memory_mib']:.0f} | {g['peak_memory_mib']:.0f} |")
    csv.append(f"{d},{g['cells']},{g['steps']},{s['type']},{s['snapshots_used']},{s['recomputed_steps']},"
               f"{s['bytes_written']:.0f},{g['forward_wall_time']:.2f},{g['adjoint_wall_time']:.2f},"
               f"{g['adjoint_over_forward_time']:.3f},{g['adjoint_linear_iterations']},{g['adjoint_preconditioner_setups']},"
               f"{g['forward_peak_memory_mib']:.1f},{g['peak_memory_mib']:.1f}")
lines += ["", "Adjoint time: the backward sweep (Jacobian, preconditioner and transposed solve per level, gradient assembly) "
          "including the recomputation of revolve; forward time: the forward run with the trajectory storage.  Peak "
          "memory: the process peak (sum over ranks) at the end of the forward run and at the end of the adjoint."]
if any(len(gs) > 1 for gs in runs.values()):
    lines += ["", "Repeated runs (BENCH_REPEAT): times and ratio are the medians, the ratio's range and the number of "
              "runs in brackets; iterations, set-ups and memory are those of the first run (the same in every run)."]
open(out + ".md", "w").write("\n".join(lines) + "\n")
open(out + ".csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
