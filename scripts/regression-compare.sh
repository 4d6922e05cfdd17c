#!/usr/bin/env bash
# Regression comparison of two karman builds: runs the same cases with both and compares
# every number of summary.json / gradient.json / control_gradient.csv (wall times, memory
# and paths excluded).  Used to show that a refactoring leaves results unchanged.
# usage: scripts/regression-compare.sh OLD_KARMAN NEW_KARMAN [WORK_DIR]
#   (either binary may be "-" to reuse its outputs from an earlier run in WORK_DIR)
#   REGRESSION_SETS="--set key=value ...": added to every run of both (e.g. "--set
#   solver.linear=direct" to compare with a build whose solver.linear auto picked the LU);
#   REGRESSION_NEW_SETS: added to the new build's runs only (keys the old build does not know,
#   e.g. "--set solver.tolerances=converged": the old build's karman run converges its steps)
# Prints the largest relative difference per file and overall; writes
# results/regression-compare.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=$1 new=$2 work=${3:-$root/out/regression}
. "$root/scripts/mpi-env.sh"
mkdir -p "$work"
cat > "$work/unsteady.yaml" <<YAML
mesh: {file: $root/cases/dfg-2d1/dfg-channel.geo, level: 0}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 1.0, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.5, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: sine, amplitude: 0.5, frequency: 2.0, phase: 0.3}}
initial: {velocity: [1, 0]}
time: {mode: unsteady, dt: 0.02, t_end: 0.2}
solver: {rtol: 1e-13, atol: 1e-15}
objective: {type: drag, walls: [cylinder], time: average, window: [0.1, 0.2]}
output: {vtk: false}
YAML
read -r -a common_sets <<< "${REGRESSION_SETS:-}"
read -r -a new_sets <<< "${REGRESSION_NEW_SETS:-}"
run_all() { # BINARY TAG
  local k=$1 d=$work/$2 sets=("${common_sets[@]}")
  [ "$2" = new ] && sets+=("${new_sets[@]}")
  rm -rf "$d" && mkdir -p "$d"
  local dfg=$root/cases/dfg-2d1/case.yaml
  mpirun -n 2 "$k" run "$dfg" -o "$d/dfg-l1-np2" --set mesh.level=1 "${sets[@]}" > "$d/log" 2>&1
  mpirun -n 2 "$k" adjoint "$dfg" -o "$d/dfg-l1-np2" --set mesh.level=1 "${sets[@]}" >> "$d/log" 2>&1
  "$k" adjoint "$dfg" -o "$d/dfg-l0-lift" --set mesh.level=0 --set objective.type=lift "${sets[@]}" >> "$d/log" 2>&1
  "$k" adjoint "$work/unsteady.yaml" -o "$d/unsteady-np1" "${sets[@]}" >> "$d/log" 2>&1
  mpirun -n 2 "$k" adjoint "$work/unsteady.yaml" -o "$d/unsteady-np2" "${sets[@]}" >> "$d/log" 2>&1
  "$k" run "$work/unsteady.yaml" -o "$d/unsteady-run" --set output.vtk=false "${sets[@]}" >> "$d/log" 2>&1
}
[ "$old" = - ] || run_all "$old" old
[ "$new" = - ] || run_all "$new" new
/usr/bin/python3 - "$work" "$root/results/regression-compare.md" <<'PY'
import csv, json, os, sys
work, report = sys.argv[1], sys.argv[2]
# not compared: timings, memory, paths, and residual norms (round-off once converged)
skip = ("time", "memory", "mib", "case", "file", "reused", "forward_state", "bytes", "ratio", "over",
        "residual")
def leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            if not any(s in k.lower() for s in skip) or k in ("t_end", "time_average"):
                yield from leaves(v, path + "/" + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, float(x)
def numbers(path):
    if path.endswith(".json"):
        return dict(leaves(json.load(open(path))))
    rows = list(csv.reader(open(path)))
    return {f"{r}:{rows[0][c]}": float(v) for r, row in enumerate(rows[1:]) for c, v in enumerate(row)
            if rows[0][c] not in ("wall_time",) and "residual" not in rows[0][c]}
lines, worst = [], 0.0
for d in sorted(os.listdir(os.path.join(work, "old"))):
    for name in ("summary.json", "gradient.json", "control_gradient.csv", "forces.csv"):
        a, b = (os.path.join(work, t, d, name) for t in ("old", "new"))
        if not os.path.exists(a):
            continue
        if not os.path.exists(b):
            lines.append(f"| {d}/{name} | missing in new | | | | |"); worst = float("inf"); continue
        x, y = numbers(a), numbers(b)
        common = set(x) & set(y)
        # an entry is compared relative to itself, but not below 1e-8 of the largest entry of
        # its group (a JSON section such as /gradient, or all columns of a CSV but step and
        # time): analytically zero entries (dJ/dp_outlet of a drag) are round-off of that size
        group = lambda k: (k.split(":", 1)[1] in ("step", "time", "iteration")) if ":" in k else k.split("/")[1]
        scale = {}
        for k, v in x.items():
            scale[group(k)] = max(scale.get(group(k), 1e-300), abs(v))
        rel, where, norm_rel = 0.0, "", 0.0
        for k in common:
            den = max(abs(x[k]), 1e-8 * scale[group(k)])
            r = abs(x[k] - y[k]) / den
            norm_rel = max(norm_rel, abs(x[k] - y[k]) / scale[group(k)])
            if r > rel: rel, where = r, k
        only = sorted(set(x) ^ set(y))
        worst = max(worst, rel)
        lines.append(f"| {d}/{name} | {len(common)} | {rel:.2e} | {where} | {norm_rel:.2e} | {', '.join(only[:4])} |")
out = ["| file | numbers compared | max relative difference (per entry) | where | max difference / largest entry of its group | keys in one only |",
       "|---|---|---|---|---|---|"] + lines
print("\n".join(out)); print(f"overall max relative difference: {worst:.2e}")
os.makedirs(os.path.dirname(report), exist_ok=True)
open(report, "w").write("# Regression comparison\n\n" + "\n".join(out) + f"\n\noverall max relative difference: {worst:.2e}\n")
PY
