#!/usr/bin/env bash
# The spatial error estimate of an unsteady objective (adjoint.error_estimate on an unsteady case,
# driver::estimate_unsteady_error) on DFG 2D-2: the mean c_D over a window of the developed
# shedding.  Per mesh level: a spin-up to t = 6 (cases/dfg-2d2, forward tolerances), then from its
# final state (initial.file; the rotation pulse off) two windows, Hann-weighted:
#   A: one shedding period, t in [0, 0.35] (70 steps of 0.005);
#   B: the third period, t in [0.7, 1.05] after two periods (210 steps);
# each with the estimate on the level's mesh and the same run on the mesh refined once (and, for
# the levels in REFINE2_LEVELS, twice): the refined value the estimate predicts, J_h(I w_H) +
# sum_n psi^n . R^n, against the refined mesh's own run.  All runs start from the same state of
# the level's mesh (fitted to each mesh by initial.file), so their values belong to one initial
# value problem.  Prints the table and writes results/error-estimate-unsteady.{md,csv}.
# usage: scripts/bench-error-estimate-unsteady.sh [LEVELS] [RANKS] [REFINE2_LEVELS]
#        (default: "0 1" 2 "0")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1"}
np=${2:-2}
refine2=${3-"0"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=$root/results/error-estimate-unsteady
mkdir -p "$out"
case=cases/dfg-2d2/case.yaml
run() { # log file, then the karman arguments
  local log=$1
  shift
  mpirun -n "$np" build/release/karman "$@" > "$log" 2>&1 || { tail -5 "$log"; exit 1; }
}
declare -A window=([A]="--set time.t_end=0.35" [B]="--set time.t_end=1.05 --set objective.window=[0.7,1.05]")
for l in $levels; do
  echo "bench-error-estimate-unsteady: level $l spin-up to t = 6"
  run "$out/L$l-spin.log" run $case -o "$out/L$l-spin" --set mesh.level="$l" --set output.vtk=false
  for w in A B; do
    common=(--set mesh.level="$l" --set initial.file="$out/L$l-spin/flow.h5"
      --set boundaries.cylinder.omega=0 --set objective.weighting=hann --set output.vtk=false)
    # shellcheck disable=SC2086
    common+=(${window[$w]})
    echo "bench-error-estimate-unsteady: level $l window $w: the estimate"
    run "$out/L$l$w-estimate.log" adjoint $case -o "$out/L$l$w" "${common[@]}" \
      --set adjoint.error_estimate=true
    cp "$out/L$l$w/gradient.json" "$out/L$l$w-estimate.json"
    for r in 1 2; do
      [ "$r" = 1 ] || [[ " $refine2 " == *" $l "* ]] || continue
      echo "bench-error-estimate-unsteady: level $l window $w: refined $r time(s)"
      run "$out/L$l$w-r$r.log" adjoint $case -o "$out/L$l${w}r$r" "${common[@]}" --set mesh.refine=$r
      cp "$out/L$l${w}r$r/gradient.json" "$out/L$l$w-r$r.json"
    done
  done
done
/usr/bin/python3 - "$out" "$levels" "$np" <<'PY'
import json, os, sys, datetime, platform
out, levels, np = sys.argv[1], sys.argv[2].split(), sys.argv[3]
lines = [f"DFG 2D-2, spatial error estimate of the Hann-weighted mean c_D over a window "
         f"({datetime.date.today()}, {platform.node()}, {np} ranks); A: t in [0, 0.35] (one period), "
         "B: [0.7, 1.05] (the third period); all runs from the level's spin-up state", "",
         "| level | window | cells | c_D mean J_H | refined once: J_h | J_h - J_H | estimated J_h - J_H "
         "| estimated / actual | refined twice: J_h/2 | estimated error (x 4/3) | corrected | "
         "estimate [s] | case run [s] | refined run [s] |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
csv = ["level,window,cells,J,J_refined,actual_error_refined,estimated_error_refined,ratio,"
       "J_refined2,estimated_error,corrected,estimate_time,run_time,refined_run_time"]
for l in levels:
    for w in "AB":
        f = f"{out}/L{l}{w}-estimate.json"
        if not os.path.exists(f):
            continue
        g = json.load(open(f))
        e = g["error_estimate"]
        r1 = json.load(open(f"{out}/L{l}{w}-r1.json"))
        f2 = f"{out}/L{l}{w}-r2.json"
        J2 = json.load(open(f2))["objective"]["value"] if os.path.exists(f2) else None
        J, Jh = e["value"], r1["objective"]["value"]
        actual, est = Jh - J, e["error_against_refined"]
        t_run = g["forward_wall_time"] + g["adjoint_wall_time"]
        t_ref = r1["forward_wall_time"] + r1["adjoint_wall_time"]
        lines.append(f"| {l} | {w} | {g['cells']} | {J:.6f} | {Jh:.6f} | {actual:+.3e} | {est:+.3e} "
                     f"| {est / actual:.2f} | {'' if J2 is None else f'{J2:.6f}'} | "
                     f"{e['estimated_error']:+.3e} | {e['corrected_value']:.6f} | "
                     f"{e['wall_time']:.1f} | {t_run:.1f} | {t_ref:.1f} |")
        csv.append(f"{l},{w},{g['cells']},{J:.10g},{Jh:.10g},{actual:.6e},{est:.6e},"
                   f"{est / actual:.4f},{'' if J2 is None else f'{J2:.10g}'},"
                   f"{e['estimated_error']:.6e},{e['corrected_value']:.10g},{e['wall_time']:.2f},"
                   f"{t_run:.2f},{t_ref:.2f}")
lines += ["", "Times: the estimate (the case's run again with the reconstructions, the refined "
          "mesh's adjoint sweep); the case's and the refined mesh's `karman adjoint` (forward "
          "and adjoint)."]
open("results/error-estimate-unsteady.md", "w").write("\n".join(lines) + "\n")
open("results/error-estimate-unsteady.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
