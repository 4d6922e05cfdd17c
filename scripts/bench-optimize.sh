#!/usr/bin/env bash
# Cost of a shape-optimization evaluation: cases/dfg-2d1/optimize-cylinder.yaml (the DFG 2D-1
# cylinder's drag at fixed area and centroid, lift bounded; FFD 5 x 5 box, x and y
# displacements: 18 design variables, 4 constraints, SLSQP)
# on mesh LEVEL, EVALUATIONS evaluations, on 1 and 2 ranks.  From OUT/optimization.csv:
# the wall time per evaluation split into the forward solve, the adjoint, the mesh deformation
# and its adjoint; the share of deformation + its adjoint; the warm-started forward solves
# (evaluations 1..., with optimization.warm_start predicted and last) against the cold first one
# (evaluation 0, from the initial state); and the drag and constraint history.  Then a campaign that remeshes (cases/shape-min-drag/
# re1-radial.yaml, level REMESH_LEVEL, at most REMESH_EVALUATIONS evaluations, 1 rank; at Re 1
# the designs move furthest per step, so it remeshes most of the shipped campaigns): failed
# evaluations, remeshings, the shares of the campaign's compute time (forward, adjoint,
# deformation and its adjoint, remeshing), and the forward solve of each remeshed evaluation
# (warm: from the flow transferred to the new mesh) against a cold one on the same mesh
# (`karman run` of the case on OUT/remesh/remesh-K.msh from the case's initial state).
# Prints the tables and writes results/bench-optimize.md.
# usage: scripts/bench-optimize.sh [LEVEL] [EVALUATIONS] [RANKS] [REMESH_EVALUATIONS]
#        [REMESH_LEVEL]   (default: 1 20 "1 2" 400 1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
level=${1:-1} evaluations=${2:-20} ranks=${3:-"1 2"} remesh_evaluations=${4:-400}
remesh_level=${5:-1} remesh_case=cases/shape-min-drag/re1-radial.yaml
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=out/bench-optimize
mkdir -p "$out" results
for np in $ranks; do
  for start in predicted last; do # optimization.warm_start: the default, then the last state only
    echo "bench-optimize: level $level, $evaluations evaluations, $np rank(s), warm_start $start"
    rm -rf "$out/np$np-$start"
    mpirun -n "$np" build/release/karman optimize cases/dfg-2d1/optimize-cylinder.yaml -o "$out/np$np-$start" \
      --set mesh.level="$level" --set optimization.max_evaluations="$evaluations" \
      --set optimization.warm_start=$start \
      --set optimization.vtk_every=0 --set output.vtk=false --set output.hdf5=false > "$out/np$np-$start.log" 2>&1 ||
      { tail -5 "$out/np$np-$start.log"; exit 1; }
  done
done
echo "bench-optimize: $remesh_case level $remesh_level with remeshing, at most $remesh_evaluations evaluations"
rm -rf "$out/remesh" "$out"/cold-remesh-*
build/release/karman optimize $remesh_case -o "$out/remesh" --set mesh.level="$remesh_level" \
  --set optimization.remesh=true --set optimization.max_evaluations="$remesh_evaluations" \
  > "$out/remesh.log" 2>&1 || { tail -5 "$out/remesh.log"; exit 1; }
for msh in "$out"/remesh/remesh-*.msh; do
  k=$(basename "$msh" .msh)
  build/release/karman run $remesh_case -o "$out/cold-$k" --set mesh.file="$root/$msh" \
    --set mesh.refine=0 --set output.vtk=false --set output.hdf5=false > "$out/cold-$k.log" 2>&1 ||
    { tail -5 "$out/cold-$k.log"; exit 1; }
done
/usr/bin/python3 - "$out" "$level" "$ranks" "$remesh_case" "$remesh_level" <<'PY'
import csv, json, sys, platform, datetime
out, level, ranks, remesh_case, remesh_level = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5]
lines = [f"# Shape-optimization evaluation cost (DFG 2D-1 cylinder, level {level}, FFD 18 variables, 4 constraints)", "",
         f"{platform.node()}, {datetime.date.today()}; times in seconds per evaluation (mean over the evaluations; "
         "evaluation 0 is the cold forward solve from the initial state, the others are warm-started: "
         "`optimization.warm_start: predicted` (the default) from the affine combination of the last 4 good states that "
         "fits the new wall displacement when its residual is lower, `last` from the last good state).  Start "
         "residual: the geometric mean of the warm solves' initial |R| (the cold one's in brackets).", "",
         "| ranks | warm start | evaluations | forward (cold) | forward (warm, mean) | warm / cold | start residual (predicted starts) | adjoint | deformation | deformation adjoint | deformation share | Newton (cold / warm mean) | c_D first -> best | evaluations/min |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
import math
for np, start in [(np, start) for np in ranks for start in ("predicted", "last")]:
    rows = [r for r in csv.DictReader(open(f"{out}/np{np}-{start}/optimization.csv")) if r["ok"] == "1"]
    s = json.load(open(f"{out}/np{np}-{start}/summary.json"))
    f = lambda k, rs: sum(float(r[k]) for r in rs) / len(rs)
    warm = rows[1:]
    total = [float(r["forward_time"]) + float(r["adjoint_time"]) + float(r["deformation_time"]) + float(r["deformation_adjoint_time"]) for r in rows]
    share = sum(float(r["deformation_time"]) + float(r["deformation_adjoint_time"]) for r in rows) / sum(total)
    start_r = math.exp(sum(math.log(float(r["start_residual"])) for r in warm) / len(warm))
    lines.append(f"| {np} | {start} | {len(rows)} | {float(rows[0]['forward_time']):.3f} | {f('forward_time', warm):.3f} | "
                 f"{f('forward_time', warm) / float(rows[0]['forward_time']):.2f} | {start_r:.1e} ({float(rows[0]['start_residual']):.1e}; "
                 f"{sum(r['predicted'] == '1' for r in warm)} of {len(warm)}) | {f('adjoint_time', rows):.3f} | "
                 f"{f('deformation_time', rows):.4f} | {f('deformation_adjoint_time', rows):.4f} | {100 * share:.1f} % | "
                 f"{rows[0]['newton_iterations']} / {f('newton_iterations', warm):.1f} | "
                 f"{float(rows[0]['objective']):.6f} -> {s['objective']:.6f} | {60 * len(rows) / s['wall_time']:.1f} |")
rows = list(csv.DictReader(open(f"{out}/remesh/optimization.csv")))
rm = json.load(open(f"{out}/remesh/remesh.json"))
s = json.load(open(f"{out}/remesh/summary.json"))
t = {k: sum(float(r[k]) for r in rows if r["ok"] == "1") for k in ("forward_time", "adjoint_time", "deformation_time", "deformation_adjoint_time")}
tr = sum(m["time"] for m in rm)
total = sum(t.values()) + tr
at = sorted({m["evaluation"] for m in rm})
byk = {int(r["evaluation"]): r for r in rows}
cold = float(rows[0]["forward_time"])
plain = [r for r in rows[1:] if r["ok"] == "1" and int(r["evaluation"]) not in at]
plain_t = sum(float(r["forward_time"]) for r in plain) / len(plain)
plain_n = sum(int(r["newton_iterations"]) for r in plain) / len(plain)
lines += ["", f"## A campaign that remeshes ({remesh_case}, level {remesh_level}, 1 rank, optimization.remesh true)", "",
          f"{len(rows)} evaluations, {sum(r['ok'] != '1' for r in rows)} failed, {len(rm)} remeshings at evaluations {at} "
          f"({sum(m.get('own_walls', False) for m in rm)} around the design's own walls; cells "
          f"{' / '.join(str(m['cells_before']) + ' -> ' + str(m['cells_after']) for m in rm)}); {s['status']}; "
          f"KKT residual {s['kkt']['residual']:.1e}, c_D {s['objective']:.6f}, wall time {s['wall_time']:.1f} s.", "",
          "| forward | adjoint | deformation + adjoint | remeshing | deformation + remeshing share |", "|---|---|---|---|---|",
          f"| {t['forward_time']:.2f} s | {t['adjoint_time']:.2f} s | {t['deformation_time'] + t['deformation_adjoint_time']:.2f} s | "
          f"{tr:.2f} s | {100 * (t['deformation_time'] + t['deformation_adjoint_time'] + tr) / total:.1f} % |", "",
          "Forward solve of each remeshed evaluation, warm (from the flow transferred to the new mesh), against a cold one "
          "on the same mesh (`karman run` of the case on remesh-K.msh, the mesh the evaluation used, from the case's initial "
          f"state); the original mesh's cold solve (evaluation 0) took {cold:.3f} s, {rows[0]['newton_iterations']} Newton steps; "
          f"the warm solves of the evaluations without a remeshing {plain_t:.3f} s ({plain_t / cold:.2f} of it), "
          f"{plain_n:.1f} Newton steps on average:", "",
          "| evaluation | mesh | cells | warm [s] | cold [s] | warm / cold | Newton warm / cold |", "|---|---|---|---|---|---|---|"]
for k in at:
    m = max((m for m in rm if m["evaluation"] == k), key=lambda m: m["index"])
    c = json.load(open(f"{out}/cold-remesh-{m['index']}/summary.json"))
    w = float(byk[k]["forward_time"])
    lines.append(f"| {k} | remesh-{m['index']} | {m['cells_after']} | {w:.3f} | {c['wall_time']:.3f} | {w / c['wall_time']:.2f} | "
                 f"{byk[k]['newton_iterations']} / {c['newton_iterations']} |")
text = "\n".join(lines) + "\n"
print(text)
open("results/bench-optimize.md", "w").write(text)
PY
