#!/usr/bin/env bash
# Goal-oriented adaptation in 3D (issue 46): DFG 3D-1Z on Gmsh's unstructured tetrahedra
# (cases/dfg-3d1z/dfg-3d-tet.geo), `karman adapt` from level 0 (adapt.cycles, adapt.growth) against
# `karman run` on the uniform levels; c_D and c_L against FeatFlow's 3D-1Z values (c_D 6.18533,
# c_L 0.009401; DFG bounds c_D [6.05, 6.25], c_L [0.008, 0.010]), per cell count, uncorrected and
# corrected, with the error estimate of every cycle.  Prints the table, writes
# results/bench-adapt-3d.md and the plot cases/dfg-3d1z/images/adaptation.png.
# Memory: every cycle's error estimate solves on 8x its cells (about 16 KiB per refined cell), so
# with growth 2 the third cycle's estimate (221 726 cells, 1.8 M refined) needs ~27 GiB: the
# default growth 1.6 ends near 130 000 cells, whose estimate fits in 24 GiB.
# Cycles: cycle 3's adapted mesh folds (results/tet-diagnosis.md section 13); karman adapt meshes
# it again, but that cycle's error estimate (1 M refined cells) does not converge and the
# adaptation ends there (results/bench-adapt-3d.md, 2026-12-07), so the default is 2.
# usage: scripts/bench-adapt-3d.sh [CYCLES] [GROWTH] [RANKS] [UNIFORM_LEVELS]   (default: 2 1.6 2 "0 1")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cycles=${1:-2}
growth=${2:-1.6}
np=${3:-2}
uniform=${4:-"0 1"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-adapt-3d
mkdir -p "$out"
tet=(--set mesh.file=dfg-3d-tet.geo --set output.vtk=false)
for l in $uniform; do
  echo "bench-adapt-3d: uniform level $l"
  mpirun -n "$np" build/release/karman run cases/dfg-3d1z/case.yaml -o "$out/uniform-L$l" "${tet[@]}" \
    --set mesh.level="$l" > "$out/uniform-L$l.log" 2>&1 || { tail -5 "$out/uniform-L$l.log"; exit 1; }
done
echo "bench-adapt-3d: adapt, $cycles cycles, growth $growth"
rm -rf "$out/adapt"
mpirun -n "$np" build/release/karman adapt cases/dfg-3d1z/case.yaml -o "$out/adapt" "${tet[@]}" \
  --set adapt.cycles="$cycles" --set adapt.growth="$growth" > "$out/adapt.log" 2>&1 ||
  { tail -5 "$out/adapt.log"; exit 1; }
/usr/bin/python3 - "$out" "$uniform" "$np" "$growth" <<'PY'
import csv, json, sys, datetime, platform
out, uniform, np, growth = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4]
cd_ref, cl_ref = 6.18533, 0.009401
rows = list(csv.DictReader(open(f"{out}/adapt/adapt.csv")))
lines = [f"DFG 3D-1Z on Gmsh tetrahedra (dfg-3d-tet.geo), c_D against FeatFlow's {cd_ref} "
         f"({datetime.date.today()}, {platform.node()}, {np} ranks, adapt.growth {growth})", "",
         "| mesh | cells | Newton steps | c_D | error | estimated error | corrected c_D | corrected error | c_L | time [s] |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for l in uniform:
    s = json.load(open(f"{out}/uniform-L{l}/summary.json"))
    lines.append(f"| uniform level {l} | {s['cells']} | {s['newton_iterations']} | {s['cd']:.6f} | "
                 f"{s['cd'] - cd_ref:+.4f} | | | | {s['cl']:.6f} | {s['wall_time']:.1f} (solve) |")
for r in rows:
    k = r["cycle"]
    s = json.load(open(f"{out}/adapt/cycle-{k}/summary.json"))
    cd, cc = float(r["value"]), float(r["corrected_value"])
    lines.append(f"| adapted, cycle {k} | {r['cells']} | {s['newton_iterations']} | {cd:.6f} | {cd - cd_ref:+.4f} | "
                 f"{float(r['estimated_error']):+.4f} | {cc:.6f} | {cc - cd_ref:+.5f} | {s['cl']:.6f} | "
                 f"{float(r['cycle_time']):.1f} (solve + estimate) |")
stop = [l for l in open(f"{out}/adapt.log") if "adapt: stopped" in l]
lines += ["", f"adapt: {stop[-1].split('adapt: ', 1)[1].strip() if stop else '(no stop line)'}"]
text = "\n".join(lines) + "\n"
print(text)
open(f"{out}/../bench-adapt-3d.md", "w").write(text)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4.2))
    uni = [json.load(open(f"{out}/uniform-L{l}/summary.json")) for l in uniform]
    ax.semilogx([s["cells"] for s in uni], [s["cd"] for s in uni], "s-", label="uniform refinement")
    n = [int(r["cells"]) for r in rows]
    ax.semilogx(n, [float(r["value"]) for r in rows], "o-", label="adapted (adjoint indicator)")
    ax.errorbar(n, [float(r["value"]) for r in rows], yerr=[[0] * len(rows), [float(r["estimated_error"]) for r in rows]],
                fmt="none", ecolor="C1", capsize=3, label="adapted + estimated error")
    ax.semilogx(n, [float(r["corrected_value"]) for r in rows], "^--", label="adapted, corrected c_D")
    ax.axhline(cd_ref, color="k", lw=0.8, label="FeatFlow 6.18533")
    ax.axhspan(6.05, 6.25, color="gray", alpha=0.15, label="DFG bounds [6.05, 6.25]")
    ax.set_xlabel("cells")
    ax.set_ylabel("c_D")
    ax.set_title("DFG 3D-1Z, Gmsh tetrahedra")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig("cases/dfg-3d1z/images/adaptation.png", dpi=110)
except ImportError:
    print("(no matplotlib: no plot)")
PY
