#!/usr/bin/env bash
# The shipped unsteady cases with karman run's default step tolerances (solver.tolerances auto ->
# forward) against the hand-set forward-only settings that users had to know (solver.rtol 1e-2,
# linear_rtol 1e-2, refactor_iterations 14, steps converged to them) and against converged steps
# (what the adjoint needs): each case as its README runs it, shortened to STEPS steps from its
# initial condition, default and hand-set alternating (REPEATS times), converged once.  Prints the
# table and writes results/bench-tolerances.md: wall time of the whole process (median), default /
# hand-set, and the final c_D, c_L of each against the converged run's.
# The cases that start from a developed flow (initial.file) get their spin-up run first
# (scripts/bench-auto.sh does the same; not timed).
# usage: scripts/bench-tolerances.sh [STEPS] [RANKS] [REPEATS]     (default: 100 2 2)
#   BENCH_REUSE=1: runs whose output exists are not repeated (the table is made from them)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
steps=${1:-100} ranks=${2:-2} repeats=${3:-2}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
. scripts/bench-lib.sh
karman=build/release/karman
out=results/bench-tolerances
mkdir -p "$out"
cases=(dfg-2d2/case.yaml cylinder-identification/truth.yaml cylinder-rotary-control/spinup.yaml
  cylinder-rotary-control/case.yaml cylinder-rotary-optimization/spinup.yaml
  neural-control/spinup.yaml neural-control/case.yaml)
spin_up_controlled_cases bench-tolerances "$karman" "$ranks" "$steps" "$out"
expert=(--set solver.rtol=1e-2 --set solver.linear_rtol=1e-2 --set solver.refactor_iterations=14
  --set solver.tolerances=converged)
: > "$out/runs.csv"
run() { # CASE TAG ARGS...
  local file=cases/$1 tag=$2
  shift 2
  local t_end name
  # STEPS steps, or the case's own end if sooner (per-step controls end there)
  t_end=$(/usr/bin/python3 -c "import yaml; t = yaml.safe_load(open('$file'))['time']; print(min(t['dt'] * $steps, t['t_end']))")
  name=$(echo "$file" | sed 's|cases/||; s|/|-|; s|\.yaml||')
  echo "bench-tolerances: $name $tag"
  # BENCH_REUSE=1: a run already done (its summary and time) is not repeated
  if [ "${BENCH_REUSE:-0}" != 1 ] || [ ! -s "$out/$name-$tag/summary.json" ] || [ ! -s "$out/$name-$tag.time" ]; then
    rm -rf "${out:?}/$name-$tag"
    /usr/bin/time -f "%e" -o "$out/$name-$tag.time" mpirun -n "$ranks" "$karman" run "$file" \
      -o "$out/$name-$tag" --set output.vtk=false --set output.checkpoint_every=0 \
      --set time.t_end="$t_end" --set time.statistics_start=0 \
      "$@" > "$out/$name-$tag.log" 2>&1 || { tail -5 "$out/$name-$tag.log"; exit 1; }
  fi
  echo "$name,${tag%-*},$(tail -1 "$out/$name-$tag.time"),$out/$name-$tag" >> "$out/runs.csv"
}
for c in "${cases[@]}"; do
  for rep in $(seq "$repeats"); do
    run "$c" default-$rep
    run "$c" expert-$rep "${expert[@]}"
  done
  run "$c" converged-1 --set solver.tolerances=converged
done
/usr/bin/python3 - "$out" "$steps" "$ranks" <<'PY' | tee results/bench-tolerances.md
import csv, json, sys, statistics, datetime
out, steps, ranks = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
for name, tag, wall, d in csv.reader(open(f"{out}/runs.csv")):
    runs.setdefault(name, {}).setdefault(tag, []).append((float(wall), json.load(open(d + "/summary.json"))))
print(f"# Step tolerances of karman run on the shipped unsteady cases ({datetime.date.today()}, {ranks} ranks)\n")
print(f"Each case {steps} steps from its initial condition (`bash scripts/bench-tolerances.sh`); default: "
      "no overrides (solver.tolerances auto -> forward); hand-set: solver.rtol 1e-2, linear_rtol 1e-2, "
      "refactor_iterations 14; converged: solver.tolerances converged.  Median wall time of the whole "
      "process; c_D, c_L at the last step relative to the converged run's (c_L: to max(|c_L|, 0.01)).\n")
print("| case | default [s] | hand-set [s] | converged [s] | default / hand-set | default: c_D, c_L vs converged | hand-set: c_D, c_L vs converged |")
print("|---|---:|---:|---:|---:|---|---|")
for name, r in runs.items():
    t = {k: statistics.median(w for w, _ in v) for k, v in r.items()}
    ref = r["converged"][0][1]["final"]
    def dev(k):
        f = r[k][0][1]["final"]
        return (f"{(f['cd'] - ref['cd']) / abs(ref['cd']):+.1e}, "
                f"{(f['cl'] - ref['cl']) / max(abs(ref['cl']), 0.01):+.1e}")
    print(f"| {name} | {t['default']:.1f} | {t['expert']:.1f} | {t['converged']:.1f} | "
          f"{t['default'] / t['expert']:.2f} | {dev('default')} | {dev('expert')} |")
PY
