#!/usr/bin/env bash
# DFG 2D-2 on the coarse mesh, 2 ranks, t in [0, 2] with dt = 0.025: vortex shedding
# starts after the rotation pulse of the case (t = 0.4 .. 0.6), i.e. the lift
# oscillation grows: its amplitude over [1.6, 2.0] is at least 1.8 times the amplitude
# over [0.8, 1.2] and above 0.3, and the drag stays in the physical range of the
# benchmark (2.5 < c_D < 4).
# usage: shedding.sh KARMAN SOURCE_DIR WORK_DIR
set -eu
karman=$1 src=$2 work=$3
mkdir -p "$work" && cd "$work"
mpirun -n 2 --oversubscribe "$karman" run "$src/cases/dfg-2d2/case.yaml" -o out --set mesh.level=0 \
  --set mesh.cache_dir="$work/cache" --set time.dt=0.025 --set time.t_end=2.0 --set output.vtk=false \
  --set output.checkpoint_every=0 > run.log
/usr/bin/python3 - <<'PY'
import csv
rows = [r for r in csv.DictReader(open("out/forces.csv"))]
def amplitude(t0, t1):
    cl = [float(r["cl"]) for r in rows if t0 <= float(r["time"]) <= t1]
    return 0.5 * (max(cl) - min(cl))
early, late = amplitude(0.8, 1.2), amplitude(1.6, 2.0)
cd = [float(r["cd"]) for r in rows if float(r["time"]) >= 1.6]
print(f"lift amplitude {early:.4f} over [0.8, 1.2], {late:.4f} over [1.6, 2.0]; c_D in [{min(cd):.3f}, {max(cd):.3f}]")
assert late >= 1.8 * early and late > 0.3, "the lift oscillation does not grow"
assert 2.5 < min(cd) and max(cd) < 4.0, "drag out of range"
PY
