#!/usr/bin/env bash
# Control-optimization benchmark: `karman optimize` of the per-step rotation rate of the cylinder
# of cases/cylinder-rotary-control (Re 100, level-0 mesh, 4 626 cells) from a developed wake,
# 60 steps of dt 0.1 (60 design variables, smoothness penalty, mean drag over [2, 6] + control
# cost, L-BFGS, 3 evaluations), with store-all and with revolve (6 snapshots), on 1 and on 2
# ranks: per evaluation the forward, adjoint (recomputation included) and total wall time, the
# recomputed steps, the memory after the forward run (sum over ranks) and each rank's peak RSS.
# The spin-up (t = 0 .. 40, dt 0.2, a rotation pulse) is run first if out/bench-control/spinup
# has none.  Writes results/bench-control.{md,csv}.
# usage: scripts/bench-control.sh [RANKS...]      (default: 1 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=out/bench-control
res=results
mkdir -p "$out" "$res"
if [ ! -s "$out/spinup/flow.h5" ]; then
  echo "bench-control: spin-up of the cylinder wake ($out/spinup)"
  build/release/karman run cases/cylinder-rotary-control/spinup.yaml -o "$out/spinup" \
    --set time.t_end=40 --set time.dt=0.2 --set time.statistics_start=20 --set output.vtk=false \
    --set output.checkpoint_every=0 > "$out/spinup.log" 2>&1 || { tail -5 "$out/spinup.log"; exit 1; }
fi
cat > "$out/case.yaml" <<YAML
mesh: {file: $root/cases/cylinder-unbounded/cylinder.geo, level: 0}
fluid: {viscosity: 0.01}
reference: {velocity: 1.0, length: 1.0}
boundaries:
  cylinder: {type: wall, center: [0, 0], omega: {type: sine, amplitude: 1.0, frequency: 0.2}}
  farfield: {type: far-field, velocity: [1, 0]}
initial: {file: $root/$out/spinup/flow.h5}
time: {mode: unsteady, dt: 0.1, t_end: 6.0}
objective: {type: drag, walls: [cylinder], time: average, window: [2.0, 6.0], control_cost: 0.01, control_wall: cylinder}
output: {vtk: false, checkpoint_every: 0}
design:
  - {type: per-step, name: omega, function: boundaries.cylinder.omega, smoothing: 1.0e-3, lower: [-3], upper: [3]}
optimization: {algorithm: lbfgs, max_evaluations: 3}
YAML
for np in "${ranks[@]}"; do
  for schedule in store-all revolve; do
    dir=$out/np$np-$schedule
    echo "bench-control: $np rank(s), $schedule"
    rm -rf "$dir" && mkdir -p "$dir"
    opts=(--set adjoint.schedule=$schedule)
    [ $schedule = revolve ] && opts+=(--set adjoint.snapshots=6)
    # each rank's peak resident set by /usr/bin/time, one file per rank
    mpirun -n "$np" sh -c '/usr/bin/time -f "peak_rss_kib %M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' \
      "$dir" build/release/karman optimize "$out/case.yaml" -o "$dir" "${opts[@]}" > "$dir.log" 2>&1 ||
      { tail -5 "$dir.log"; exit 1; }
  done
done
/usr/bin/python3 - "$out" "$res" <<'PY'
import csv, datetime, glob, os, platform, sys
out, res = sys.argv[1], sys.argv[2]
head = ("| ranks | schedule | evaluation | forward [s] | adjoint [s] | total [s] | adjoint / forward "
        "| recomputed steps | memory after forward, sum [MiB] | peak RSS per rank [MiB] | J |")
lines = [f"Control-optimization benchmark ({datetime.date.today()}, {platform.node()}, "
         f"{os.cpu_count()} cores): per-step rotation rate of the Re-100 cylinder, level 0 "
         "(4 626 cells), 60 steps, 60 variables, L-BFGS; `scripts/bench-control.sh`", "",
         head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
rows = ["ranks,schedule,evaluation,forward_s,adjoint_s,recomputed,forward_memory_mib,peak_rss_mib,J"]
for d in sorted(glob.glob(os.path.join(out, "np*-*"))):
    if not os.path.isdir(d):
        continue
    np, schedule = os.path.basename(d)[2:].split("-", 1)
    rss = []
    for f in sorted(glob.glob(os.path.join(d, "rss.*"))):
        for line in open(f):
            if line.startswith("peak_rss_kib"):
                rss.append(int(line.split()[1]) / 1024)
    rss_text = " / ".join(f"{r:.0f}" for r in rss)
    for r in csv.DictReader(open(os.path.join(d, "optimization.csv"))):
        fw, ad = float(r["forward_time"]), float(r["adjoint_time"])
        lines.append(f"| {np} | {schedule} | {r['evaluation']} | {fw:.1f} | {ad:.1f} | {fw + ad:.1f} "
                     f"| {ad / fw:.2f} | {r['recomputed']} | {float(r['forward_memory_mib']):.0f} "
                     f"| {rss_text} | {float(r['J']):.6f} |")
        rows.append(f"{np},{schedule},{r['evaluation']},{fw:.3f},{ad:.3f},{r['recomputed']},"
                    f"{r['forward_memory_mib']},{max(rss) if rss else 0:.1f},{r['J']}")
open(os.path.join(res, "bench-control.md"), "w").write("\n".join(lines) + "\n")
open(os.path.join(res, "bench-control.csv"), "w").write("\n".join(rows) + "\n")
print("\n".join(lines))
PY
