#!/usr/bin/env bash
# `karman mesh` on the DFG 2D-1 case on 1 and 2 ranks: cell count, total area and
# boundary lengths identical to 1e-12 (relative) and within 0.1 % of the exact values
# (area 2.2 * 0.41 - pi 0.05^2, cylinder perimeter 0.1 pi, inlet/outlet 0.41, walls 4.4).
# usage: mesh_summary.sh KARMAN SOURCE_DIR WORK_DIR
set -eu
karman=$1 src=$2 work=$3
mkdir -p "$work" && cd "$work"
case="$src/cases/dfg-2d1/case.yaml"
"$karman" mesh "$case" -o np1 --set mesh.cache_dir="$work/cache" > np1.log
mpirun -n 2 --oversubscribe "$karman" mesh "$case" -o np2 --set mesh.cache_dir="$work/cache" > np2.log
/usr/bin/python3 - np1/summary.json np2/summary.json <<'PY'
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["ranks"] == 1 and b["ranks"] == 2, (a["ranks"], b["ranks"])
assert a["cells"] == b["cells"] and a["mesh_hash"] == b["mesh_hash"]
def same(x, y):
    return abs(x - y) <= 1e-12 * abs(x)
exact = {"inlet": 0.41, "outlet": 0.41, "walls": 4.4, "cylinder": 0.1 * math.pi}
area = 2.2 * 0.41 - math.pi * 0.05 ** 2
assert same(a["total_area"], b["total_area"]), (a["total_area"], b["total_area"])
assert abs(a["total_area"] - area) / area < 1e-3, a["total_area"]
print(f"cells {a['cells']}  area {a['total_area']:.15g} (exact {area:.15g}, rel {abs(a['total_area']-area)/area:.2e})")
for name, length in exact.items():
    la, lb = a["boundaries"][name]["length"], b["boundaries"][name]["length"]
    assert same(la, lb), (name, la, lb)
    assert abs(la - length) / length < 1e-3, (name, la, length)
    print(f"{name:9s} {la:.15g} (exact {length:.15g}, rel {abs(la-length)/length:.2e}; 1 vs 2 ranks {abs(la-lb)/la:.1e})")
PY
