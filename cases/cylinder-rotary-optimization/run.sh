#!/usr/bin/env bash
# Reproduces the rotary-oscillation optimization (README.md) at each Reynolds number RE:
#  1. the developed wake: spinup.yaml on level 0 from rest (t = 0..100), then on level 1 from the
#     level-0 state (t = 0..60, statistics from 20: the uncontrolled mean drag and St);
#  2. the sine optimization (sine.yaml): A and f of omega = A sin(2 pi f t), SLSQP, from two
#     starts (J(A, f) has several lock-on valleys, README): a weak, slow forcing (2, 0.5) and a
#     strong, fast one (4.4, 0.53); sine-best links to the start that ends with the lower J;
#  3. the free per-step control (perstep.yaml) from the best sine, L-BFGS;
#  4. replays of the uncontrolled flow, the best sine and the per-step control (forces.csv over
#     the optimization's horizon), two probes with strong fast forcing, and the figures and
#     table (plot_rotary.py; the table also goes to results/rotary-optimization-reRE.md).
# Every stage that finished is skipped; a killed optimization continues (--restart).
# usage: bash cases/cylinder-rotary-optimization/run.sh [RE ...]   (from the repository root;
#        default "100 200"; NP ranks per run from $NP, default 1)
set -eu
here=cases/cylinder-rotary-optimization
out=out/cylinder-rotary-optimization
. scripts/mpi-env.sh # mpirun as root
karman="mpirun -n ${NP:-1} --oversubscribe build/release/karman"
for re in ${@:-100 200}; do
  d=$out/re$re
  mkdir -p "$d"
  nu=$(/usr/bin/python3 -c "print(1.0 / $re)")
  common=(--set fluid.viscosity="$nu" --set initial.file="../../$d/spinup/flow.h5")
  if [ ! -s "$d/spinup-L0/flow.h5" ]; then
    echo "Re $re: spin-up, level 0 from rest"
    $karman run $here/spinup.yaml -o "$d/spinup-L0" --set fluid.viscosity="$nu" \
      --set output.vtk=false > "$d/spinup-L0.log" 2>&1
  fi
  if [ ! -s "$d/spinup/flow.h5" ]; then
    echo "Re $re: spin-up, level 1 from the level-0 state"
    $karman run $here/spinup.yaml -o "$d/spinup" --set fluid.viscosity="$nu" --set mesh.level=1 \
      --set initial.file="../../$d/spinup-L0/flow.h5" --set boundaries.cylinder.omega=0 \
      --set time.t_end=60 --set time.statistics_start=20 --set output.vtk_every=200 \
      > "$d/spinup.log" 2>&1
  fi
  optimize() { # name case extra...
    local name=$1 case=$2
    shift 2
    [ -s "$d/$name/summary.json" ] && return 0
    local restart=()
    [ -s "$d/$name/optimization-journal.jsonl" ] && restart=(--restart)
    echo "Re $re: $name optimization"
    $karman optimize "$case" -o "$d/$name" "${common[@]}" "$@" "${restart[@]}" >> "$d/$name.log" 2>&1
  }
  starts=()
  for s in "2 0.5" "4.4 0.53"; do
    set -- $s
    optimize "sine-A$1-f$2" $here/sine.yaml \
      --set "boundaries.cylinder.omega={type: sine, amplitude: $1, frequency: $2}"
    starts+=("sine-A$1-f$2")
  done
  best=$(/usr/bin/python3 - "$d" "${starts[@]}" <<'PY'
import json, os, sys
d, runs = sys.argv[1], sys.argv[2:]
run = min(runs, key=lambda r: json.load(open(f"{d}/{r}/summary.json"))["objective"])
link = f"{d}/sine-best"
if os.path.islink(link) and os.readlink(link) != run:
    os.remove(link)
if not os.path.islink(link):
    os.symlink(run, link)
x = json.load(open(f"{link}/summary.json"))["design"]
print("{type: sine, amplitude: %.17g, frequency: %.17g}" % (x["boundaries.cylinder.omega.amplitude"],
      x["boundaries.cylinder.omega.frequency"]))
PY
  )
  optimize perstep $here/perstep.yaml --set "boundaries.cylinder.omega=$best"
  # replays over the optimization's horizon: forces.csv of each control
  /usr/bin/python3 - "$d" <<'PY'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/perstep/controls.csv")))
# omega at the levels 0..N (level 0: the initial state, not used by the flow)
with open(f"{d}/omega-perstep.csv", "w") as out:
    out.write("0\n" + "".join(r["boundaries.cylinder.omega.best"] + "\n" for r in rows))
PY
  replay() { # name omega [vtk]
    [ -s "$d/$1/summary.json" ] && return 0
    $karman run $here/sine.yaml -o "$d/$1" "${common[@]}" --set "boundaries.cylinder.omega=$2" \
      --set output.vtk="${3:-true}" --set output.vtk_every=20 > "$d/$1.log" 2>&1
  }
  replay replay-none 0
  replay replay-sine "$best"
  replay replay-perstep "{type: steps, file: ../../$d/omega-perstep.csv}"
  # the objective at two strong, fast forcings (the region of the published optima, README)
  for p in "4.4 0.53" "6 0.74"; do
    set -- $p
    replay "probe-A$1-f$2" "{type: sine, amplitude: $1, frequency: $2}" false
  done
  /usr/bin/python3 $here/plot_rotary.py "$d" "$re"
  {
    echo "Rotary-oscillation optimization, Re $re (cases/cylinder-rotary-optimization; 24,094 cells,"
    echo "480 steps of dt 0.05, store-all; times and memory as measured by the runs that made them)."
    echo "\`NP=2 bash cases/cylinder-rotary-optimization/run.sh $re\`, written $(date +%F)"
    echo
    cat "$d/results.md"
  } > results/rotary-optimization-re$re.md
done
