#!/usr/bin/env bash
# Goal-oriented adaptation against uniform refinement on DFG 2D-1, unstructured triangles
# (cases/dfg-2d1/dfg-2d-tri.geo): `karman adapt` from level 0 (adapt.cycles, growth 2) and
# `karman run` on the uniform levels 0-3, and the same adaptation anisotropic (adapt.anisotropic:
# BAMG with the metric field); c_D error against the FeatFlow reference (5.57953523)
# per cell count, uncorrected and corrected.  Prints the table, writes results/bench-adapt.md and
# the plot cases/dfg-2d1/images/adaptation.png.
# usage: scripts/bench-adapt.sh [CYCLES] [RANKS] [UNIFORM_LEVELS]   (default: 4 2 "0 1 2 3")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cycles=${1:-4}
np=${2:-2}
uniform=${3:-"0 1 2 3"}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-adapt
mkdir -p "$out"
tri=(--set mesh.file=dfg-2d-tri.geo --set output.vtk=false)
for l in $uniform; do
  echo "bench-adapt: uniform level $l"
  mpirun -n "$np" build/release/karman run cases/dfg-2d1/case.yaml -o "$out/uniform-L$l" "${tri[@]}" \
    --set mesh.level="$l" > "$out/uniform-L$l.log" 2>&1 || { tail -5 "$out/uniform-L$l.log"; exit 1; }
done
for kind in isotropic anisotropic; do
  echo "bench-adapt: adapt ($kind), $cycles cycles"
  dir=$out/adapt$([ $kind = isotropic ] || echo -aniso)
  rm -rf "$dir"
  mpirun -n "$np" build/release/karman adapt cases/dfg-2d1/case.yaml -o "$dir" "${tri[@]}" \
    --set mesh.level=0 --set adapt.cycles="$cycles" \
    --set adapt.anisotropic=$([ $kind = isotropic ] && echo false || echo true) > "$dir.log" 2>&1 ||
    { tail -5 "$dir.log"; exit 1; }
done
/usr/bin/python3 - "$out" "$uniform" "$np" <<'PY'
import csv, json, sys, datetime, platform
out, uniform, np = sys.argv[1], sys.argv[2].split(), sys.argv[3]
ref = 5.57953523384
uni = []
for l in uniform:
    s = json.load(open(f"{out}/uniform-L{l}/summary.json"))
    uni.append((int(l), s["cells"], s["cd"], s["wall_time"]))
ad = list(csv.DictReader(open(f"{out}/adapt/adapt.csv")))
an = list(csv.DictReader(open(f"{out}/adapt-aniso/adapt.csv")))
lines = [f"DFG 2D-1 on unstructured triangles (dfg-2d-tri.geo), c_D against {ref} "
         f"({datetime.date.today()}, {platform.node()}, {np} ranks)", "",
         "| mesh | cells | c_D | error (relative) | corrected c_D | corrected error (relative) | time [s] |",
         "|---|---:|---:|---:|---:|---:|---:|"]
for l, n, cd, t in uni:
    lines.append(f"| uniform level {l} | {n} | {cd:.6f} | {(cd - ref) / ref:+.2e} | | | {t:.1f} (solve) |")
for name, rows in (("adapted", ad), ("adapted, anisotropic", an)):
    for r in rows:
        cd, cc = float(r["value"]), float(r["corrected_value"])
        lines.append(f"| {name}, cycle {r['cycle']} | {r['cells']} | {cd:.6f} | {(cd - ref) / ref:+.2e} | "
                     f"{cc:.6f} | {(cc - ref) / ref:+.2e} | {float(r['cycle_time']):.1f} (solve + estimate) |")
text = "\n".join(lines) + "\n"
print(text)
open(f"{out}/../bench-adapt.md", "w").write(text)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.loglog([u[1] for u in uni], [abs(u[2] - ref) / ref for u in uni], "s-", label="uniform refinement")
    ax.loglog([int(r["cells"]) for r in ad], [abs(float(r["value"]) - ref) / ref for r in ad], "o-",
              label="adapted (adjoint indicator)")
    ax.loglog([int(r["cells"]) for r in ad], [abs(float(r["corrected_value"]) - ref) / ref for r in ad],
              "^--", label="adapted, corrected c_D")
    ax.loglog([int(r["cells"]) for r in an], [abs(float(r["value"]) - ref) / ref for r in an], "D-",
              label="adapted, anisotropic (BAMG)")
    ax.axhline(1e-4, color="gray", lw=0.8, ls=":")
    ax.set_xlabel("cells")
    ax.set_ylabel("|c_D - reference| / reference")
    ax.set_title("DFG 2D-1, unstructured triangles")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig("cases/dfg-2d1/images/adaptation.png", dpi=110)
except ImportError:
    print("(no matplotlib: no plot)")
PY
