#!/usr/bin/env bash
# The adjoint error estimate (adjoint.error_estimate, driver/error_estimate.hpp) on DFG 2D-1:
# for each mesh level, c_D, c_L and delta p with their estimated errors, the effectivity index
# (estimated / true error, against the FeatFlow reference values), the corrected values, and
# the check of the estimate's linearization: the refined mesh's value it predicts against the
# refined mesh's own Newton solution (karman run --set mesh.refine=1), with both wall times.
# Prints the table and writes results/error-estimate.{md,csv}.
# usage: scripts/bench-error-estimate.sh [LEVELS] [RANKS] [CHECK_LEVELS]
#        (default: "0 1 2 3" 2 "0 1 2": the refined solves of CHECK_LEVELS)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
levels=${1:-"0 1 2 3"}
np=${2:-2}
check_levels=${3-"0 1 2"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/error-estimate
mkdir -p "$out"
run() { # log file, then the karman arguments
  local log=$1
  shift
  mpirun -n "$np" build/release/karman "$@" > "$log" 2>&1 || { tail -5 "$log"; exit 1; }
}
for l in $levels; do
  for objective in drag lift pressure-difference; do
    echo "bench-error-estimate: level $l, $objective, $np rank(s)"
    # (the forward state of the first objective is reused by the others: OUTDIR/flow.h5)
    run "$out/L$l-$objective.log" adjoint cases/dfg-2d1/case.yaml -o "$out/L$l" \
      --set mesh.level="$l" --set objective.type="$objective" --set adjoint.error_estimate=true \
      --set output.vtk=false
    cp "$out/L$l/gradient.json" "$out/L$l-$objective.json"
  done
done
for l in $check_levels; do
  echo "bench-error-estimate: level $l refined once, Newton solve"
  run "$out/L${l}r1.log" run cases/dfg-2d1/case.yaml -o "$out/L${l}r1" --set mesh.level="$l" \
    --set mesh.refine=1 --set output.vtk=false --set output.hdf5=false
done
/usr/bin/python3 - "$out" "$levels" "$check_levels" "$np" <<'PY'
import json, os, sys, datetime, platform
out, levels, check, np = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
ref = {"drag": 5.57953523384, "lift": 0.010618948146, "pressure-difference": 0.11752016697}
key = {"drag": "cd", "lift": "cl", "pressure-difference": "delta_p"}
lines = [f"DFG 2D-1, adjoint error estimate ({datetime.date.today()}, {platform.node()}, "
         f"{np} ranks); references (FeatFlow) c_D {ref['drag']}, c_L {ref['lift']}, "
         f"Δp {ref['pressure-difference']}", "",
         "| level | cells | objective | value | true error | estimated error | effectivity "
         "| corrected | corrected error | closer by | against refined: estimated | estimate [s] |",
         "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
csv = ["level,cells,objective,value,true_error,estimated_error,effectivity,corrected,"
       "corrected_error,error_against_refined,refined_value,estimate_time"]
for l in levels:
    for o in ref:
        g = json.load(open(f"{out}/L{l}-{o}.json"))
        e = g["error_estimate"]
        J, est, corr = e["value"], e["estimated_error"], e["corrected_value"]
        true = ref[o] - J
        eff = est / true if true else float("nan")
        cerr = ref[o] - corr
        closer = abs(true / cerr) if cerr else float("inf")
        lines.append(f"| {l} | {g['cells']} | {o} | {J:.7g} | {true:+.3e} | {est:+.3e} | "
                     f"{eff:.3f} | {corr:.7g} | {cerr:+.2e} | {closer:.1f}x | "
                     f"{e['error_against_refined']:+.3e} | {e['wall_time']:.1f} |")
        csv.append(f"{l},{g['cells']},{o},{J!r},{true!r},{est!r},{eff!r},{corr!r},{cerr!r},"
                   f"{e['error_against_refined']!r},{e['refined_value']!r},{e['wall_time']!r}")
if check:
    lines += ["", "The linearization: the refined mesh's value the estimate predicts "
              "(J_h(w) + ψ·R_h(w)) against the refined mesh's Newton solution "
              "(`karman run --set mesh.refine=1`):", "",
              "| level | refined cells | objective | predicted | refined solve | difference "
              "| J − refined solve | estimate [s] | refined solve [s] |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for l in check:
        s = json.load(open(f"{out}/L{l}r1/summary.json"))
        for o in ref:
            e = json.load(open(f"{out}/L{l}-{o}.json"))["error_estimate"]
            solved = s[key[o]]
            lines.append(f"| {l} | {e['refined_cells']} | {o} | {e['refined_value']:.9g} | "
                         f"{solved:.9g} | {e['refined_value'] - solved:+.2e} | "
                         f"{e['value'] - solved:+.2e} | {e['wall_time']:.1f} | "
                         f"{s['wall_time']:.1f} |")
text = "\n".join(lines) + "\n"
print(text)
open(os.path.join(out, "..", "error-estimate.md"), "w").write(text)
open(os.path.join(out, "..", "error-estimate.csv"), "w").write("\n".join(csv) + "\n")
PY
