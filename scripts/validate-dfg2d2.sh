#!/usr/bin/env bash
# Validation of the unsteady solver on Schäfer-Turek DFG 2D-2 (Re = 100): the full case
# (cases/dfg-2d2, t in [0, 6], statistics over [4, 6]) for each (mesh level, dt) pair;
# c_D max, c_L max and the Strouhal number against the published intervals
# c_D,max in [3.22, 3.24], c_L,max in [0.99, 1.01], St in [0.295, 0.305].
# Writes the dt- and mesh-convergence table to results/dfg2d2-convergence.{md,csv}.
# usage: scripts/validate-dfg2d2.sh ["PAIR ..."] [RANKS]   (default "0:0.01 0:0.005 1:0.01 1:0.005 2:0.005" 2)
#   PAIR = LEVEL:DT            the whole run from rest with time step DT
#        | LEVEL:DT:FROM@T     continuation: a run of LEVEL with step FROM (from rest, else a continuation;
#                              it may still be running) is forked at its checkpoint record at time T
#                              and continued to t = 6 with time step DT (variable-step
#                              BDF2 at the switch; `karman run --restart` with a new time.dt).  The
#                              statistics window [4, 6] must lie after T: the periodic state does not
#                              depend on the way it was reached, and a finer dt then costs (6 - T) / 6
#                              of a whole run.
#        | LEVEL:DT<SOURCE         mesh sequencing: the run starts from the final state (flow.h5) of the
#                              pair SOURCE on another level (e.g. 3:0.005<2:0.005), interpolated
#                              onto this mesh (initial.file), without the start-up rotation pulse,
#                              and runs t in [0, ${TRANSFER_T_END:-2.5}] with statistics over
#                              [${TRANSFER_STATS:-1.0}, t_end] (the new mesh's periodic state settles within
#                              about three periods); a level-3 run then costs 2.5 / 6 of one from rest.
#   a suffix /uB sets solver.upwind = B (the upwind fraction of the convected velocity, default 1)
#   for the run, e.g. 2:0.0025:0.0025@3.25/u0 (centred convection, forked from an upwind run)
# VALIDATE_ARGS: extra `karman run` arguments, e.g. "--set solver.preconditioner_matrix=exact"
# (faster on level 2 with small dt, more memory); VALIDATE_RERUN=1 reruns pairs done before.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pairs=${1:-"0:0.01 0:0.005 1:0.01 1:0.005 2:0.005"}
np=${2:-2}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/dfg2d2
mkdir -p "$out"
run_dir() { # PAIR -> its run directory
  if [ "${1#*<}" != "$1" ]; then # mesh sequencing: named after the source run
    local src
    src=$(run_dir "${1#*<}")
    echo "$(run_dir "${1%%<*}")-from-${src#$out/}"
    return
  fi
  local pair=${1%%/*} up=""
  [ "$pair" = "$1" ] || up="-${1#*/}"
  local l=${pair%%:*} rest=${pair#*:}
  local dt=${rest%%:*}
  if [ "$rest" = "$dt" ]; then echo "$out/L$l-dt$dt$up"; else
    local from=${rest#*:}
    echo "$out/L$l-dt$dt$up-from-dt${from%@*}-t${from#*@}"
  fi
}
for p in $pairs; do
  upwind=()
  [ "${p%%/*}" = "$p" ] || upwind=(--set solver.upwind="${p#*/u}")
  dir=$(run_dir "$p") pair=$p
  transfer=()
  if [ "${p#*<}" != "$p" ]; then
    src=$(run_dir "${p#*<}")
    [ -s "$src/flow.h5" ] || { echo "validate-dfg2d2: $p needs the run ${p#*<} ($src/flow.h5) first" >&2; exit 1; }
    transfer=(--set boundaries.cylinder.omega=0 --set initial.file="$root/$src/flow.h5"
      --set time.t_end="${TRANSFER_T_END:-2.5}" --set time.statistics_start="${TRANSFER_STATS:-1.0}")
    p=${p%%<*}
  fi
  l=${p%%:*} rest=${p#*:}
  rest=${rest%%/*}
  dt=${rest%%:*}
  if [ -s "$dir/summary.json" ] && [ "${VALIDATE_RERUN:-0}" != 1 ]; then
    echo "validate-dfg2d2: $pair: done before ($dir)"
    continue
  fi
  restart=()
  # an interrupted run (no summary.json) continues from its last checkpoint
  if [ "$rest" = "$dt" ] && ls "$dir"/checkpoints/run-*.h5 > /dev/null 2>&1; then restart=(--restart); fi
  if [ "$rest" != "$dt" ]; then
    from=${rest#*:}
    src="$out/L$l-dt${from%@*}" # the run from rest, else a continuation with that dt (it may still be running)
    [ -d "$src/checkpoints" ] || src=$(ls -d "$out/L$l-dt${from%@*}-from-"* 2> /dev/null | head -1)
    [ -n "$src" ] && [ -d "$src/checkpoints" ] ||
      { echo "validate-dfg2d2: $p needs a run of level $l with dt ${from%@*} first" >&2; exit 1; }
    rm -rf "$dir" && mkdir -p "$dir/checkpoints" && cp -r "$src/forces.csv" "$src"/*.pvd "$src"/*_0000* "$dir/"
    # copy the checkpoint records up to time T (read in SWMR mode: the source may still be
    # writing); --restart continues from the last of them
    /usr/bin/python3 - "$src/checkpoints" "$dir/checkpoints" "${from#*@}" <<'PY'
import glob, os, sys, h5py
src, dst, t_fork = sys.argv[1], sys.argv[2], float(sys.argv[3])
last = None
for path in sorted(glob.glob(src + "/run-*.h5")):
    with h5py.File(path, "r", swmr=True) as f:
        n_done = f["checksum"].shape[0]
        n = int((f["info"][:n_done, 1] <= t_fork + 1e-9).sum())
        if n == 0:
            continue
        out = os.path.join(dst, os.path.basename(path))
        with h5py.File(out, "w", libver="latest") as g:
            for k, v in f.attrs.items():
                g.attrs[k] = v
            for name in ("state", "previous", "info", "checksum"):
                d = f[name]
                g.create_dataset(name, data=d[:n], maxshape=(None,) + d.shape[1:], chunks=d.chunks)
            last = (out, n - 1, float(f["info"][n - 1, 1]))
if last is None or abs(last[2] - t_fork) > 1e-9:
    sys.exit(f"validate-dfg2d2: no checkpoint record at t = {t_fork:g} in {src} "
             f"(records every output.checkpoint_every steps)")
print(f"validate-dfg2d2: fork at record {last[1]} of {last[0]} (t = {last[2]:g})")
PY
    restart=(--restart)
  fi
  # a /uB fork switches the scheme of the run it continues from: say that it is deliberate
  # (without the flag, karman run --restart refuses checkpoints of another solver.upwind)
  if [ ${#restart[@]} -gt 0 ] && [ ${#upwind[@]} -gt 0 ]; then restart+=(--accept-case-change); fi
  echo "validate-dfg2d2: $pair on $np rank(s) -> $dir"
  mpirun -n "$np" build/release/karman run cases/dfg-2d2/case.yaml -o "$dir" --set mesh.level="$l" \
    --set time.dt="$dt" --set output.vtk_every=1000000 "${restart[@]}" "${upwind[@]}" "${transfer[@]}" \
    --set output.checkpoint_every="${VALIDATE_CHECKPOINT_EVERY:-100}" ${VALIDATE_ARGS:-} > "$dir.log" 2>&1 || { tail -5 "$dir.log"; exit 1; }
done
dirs=""
for p in $pairs; do dirs="$dirs $p=$(run_dir "$p")"; done
/usr/bin/python3 - "$out" $dirs <<'PY'
import csv as csvmod, json, os, sys, datetime
import yaml
sys.path.insert(0, "postprocess")
from lift_peaks import extrema  # noqa: E402  peaks located by the parabola through three samples


def maxima(rows, key, t0):
    """the local maxima of `key` for t >= t0, from forces.csv: summaries written before karman
    refined its max/min by the same parabola hold the largest sample (up to 1e-3 lower at dt 0.005)"""
    return [v for _, v in extrema(rows, key, t0, 1)]
out, runs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
bounds = {"cd": (3.22, 3.24), "cl": (0.99, 1.01), "st": (0.295, 0.305)}
head = "| level | cells | dt | upwind | start | steps | c_D max | c_L max | St | periods | last c_L peak change | wall time [min] | ranks |"
lines = [f"DFG 2D-2 validation ({datetime.date.today()}): statistics over t in [4, 6] (runs from rest and forks), "
         "[1, t_end] (runs started from another level's state: level 1 t_end 2.5, level 3 t_end 1.7); published intervals "
         "c_D,max [3.22, 3.24], c_L,max [0.99, 1.01], St [0.295, 0.305] (✓: inside)", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["level,cells,dt,upwind,start,steps,cd_max,cl_max,strouhal,periods,cl_peak_change,wall_time,ranks"]
for p, d in runs:
    base, _, source = p.partition("<")
    f = base.split("/")[0].split(":")
    l, dt = f[0], f[1]
    from_dt, t_start = f[2].split("@") if len(f) == 3 else (None, "0")
    start = "rest" if from_dt is None else f"dt {from_dt} run at t = {t_start}"
    if source:
        sl, sdt = source.split("/")[0].split(":")[:2]
        start = f"final state of level {sl}, dt {sdt}"
    s = json.load(open(f"{d}/summary.json"))
    resolved = yaml.safe_load(open(f"{d}/case.resolved.yaml"))
    window = float(resolved["time"]["statistics_start"])
    up = f"{float(resolved['solver'].get('upwind', 1)):g}"  # runs before the key existed: upwind
    history = list(csvmod.DictReader(open(f"{d}/forces.csv")))
    # steps and wall time with this dt (a continuation also holds the rows before its fork,
    # and a restarted run's summary counts only the steps after the restart)
    rows = [r for r in history if float(r["time"]) > float(t_start) + 1e-9]
    steps, wall = len(rows), sum(float(r["wall_time"]) for r in rows)
    peaks = maxima(history, "cl", window)
    cd, cl, st = max(maxima(history, "cd", window)), max(peaks), s["strouhal"]
    # change of the last two lift maxima: how close the signal is to periodic
    drift = peaks[-1] - peaks[-2] if len(peaks) >= 2 else float("nan")
    mark = lambda k, v: "✓" if bounds[k][0] <= v <= bounds[k][1] else ""
    lines.append(f"| {l} | {s['cells']} | {dt} | {up} | {start} | {steps} | {cd:.4f}{mark('cd', cd)} | {cl:.4f}{mark('cl', cl)} "
                 f"| {st:.4f}{mark('st', st)} | {s['lift_periods']} | {drift:.1e} | {wall / 60:.1f} | {s['ranks']} |")
    csv.append(f"{l},{s['cells']},{dt},{up},{start},{steps},{cd:.6f},{cl:.6f},{st:.6f},{s['lift_periods']},{drift:.3e},"
               f"{wall:.1f},{s['ranks']}")
open(f"{out}-convergence.md", "w").write("\n".join(lines) + "\n")
open(f"{out}-convergence.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
