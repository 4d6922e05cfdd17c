#!/usr/bin/env bash
# DFG 3D-1Z on ordinary Gmsh tetrahedral meshes (issue 42): the channel meshed the way a user
# would from CAD, with the sizes and algorithms a user might pick, each run with the shipped
# defaults of cases/dfg-3d1z/case.yaml (plus SETTINGS, e.g. "solver.dissipation=face" to compare
# with the other scheme).  Two families: cases/dfg-3d1z/dfg-3d-tet.geo (a Distance + Threshold
# size field from the cylinder; other sizes or Gmsh's HXT algorithm) and
# tests/data/dfg-3d-tet-box-coarse.geo (its minimum with a Box field around the near wake).
# For each: cells, converged or the reason, Newton steps, GMRES iterations, whether `auto` tried
# the multigrid a second time with tighter linear solves and whether it fell back to the LU, wall time of the solve, peak memory, c_D, c_L, delta p.  Prints the table and
# writes it to results/bench-tet-meshes[-TAG].{csv,md}.
# usage: scripts/bench-tet-meshes.sh [NP] [TAG] [SETTINGS...]   (default 2 ranks, no tag)
# BENCH_MESHES="name1 name2": only those meshes are run (names as in the table's first column);
# the table has every mesh with a log in results/ (BENCH_MESHES=none: only the table).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
np=${1:-2}
tag=${2:+-$2}
shift $(($# > 2 ? 2 : $#))
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/bench-tet-meshes$tag
mkdir -p "$out"
tet=dfg-3d-tet.geo box=../../tests/data/dfg-3d-tet-box-coarse.geo
# name | mesh file | mesh.parameters (gmsh -setnumber; Mesh.* options too)
meshes=(
  "issue-L0|$tet|"
  "issue-L0-scale0.8|$tet|[scale=0.8]"
  "issue-L0-hxt|$tet|[Mesh.Algorithm3D=10]"
  "issue-L0-scale0.9-hxt|$tet|[scale=0.9,Mesh.Algorithm3D=10]"
  "box-0.03-0.06-0.12|$box|"
  "box-0.025-0.05-0.1|$box|[hn=0.025,hb=0.05,hf=0.1]"
  "box-0.02-0.045-0.1|$box|[hn=0.02,hb=0.045,hf=0.1]"
  "box-0.012-0.035-0.08|$box|[hn=0.012,hb=0.035,hf=0.08]"
  "box-0.01-0.04-0.08|$box|[hn=0.01,hb=0.04,hf=0.08]"
  "box-0.012-0.03-0.08|$box|[hn=0.012,hb=0.03,hf=0.08]"
  "issue-0.02-0.05|$tet|[hn=0.02,hf=0.05]"
)
sets=()
for s in "$@"; do sets+=(--set "$s"); done
for m in "${meshes[@]}"; do
  IFS='|' read -r name file params <<< "$m"
  if [ -n "${BENCH_MESHES:-}" ] && [[ " $BENCH_MESHES " != *" $name "* ]]; then continue; fi
  echo "bench-tet-meshes: $name on $np rank(s)"
  args=(--set mesh.file="$file" --set output.vtk=false --set output.hdf5=false)
  [ -n "$params" ] && args+=(--set "mesh.parameters=$params")
  # a run that does not converge is a result too (summary.json says why)
  mpirun -n "$np" build/release/karman run cases/dfg-3d1z/case.yaml -o "$out/$name" "${args[@]}" \
    "${sets[@]}" > "$out/$name.log" 2>&1 || echo "bench-tet-meshes: $name: karman exited with $?"
done
/usr/bin/python3 - "$out" "$np" "${*:-}" "${meshes[@]}" <<'PY'
import json, sys, os, re, datetime, platform
out, np, settings, meshes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
bounds = {"cd": (6.05, 6.25), "cl": (0.008, 0.010)}
head = ("| mesh | mesh.parameters | cells | converged | Newton steps | GMRES its | second try | LU fallback "
        "| solve [s] | peak memory [MiB] | KiB/cell | c_D | c_L | Δp |")
lines = [f"DFG 3D-1Z on ordinary Gmsh tetrahedral meshes ({datetime.date.today()}, {platform.node()}, "
         f"{os.cpu_count()} cores, {np} ranks, the shipped defaults{' and ' + settings if settings else ''}); "
         f"DFG intervals c_D {bounds['cd']}, c_L {bounds['cl']}", "",
         head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
csv = ["mesh,parameters,cells,converged,reason,newton_iterations,linear_iterations,tightened_forcing,"
       "linear_fallback,wall_time,peak_memory_mib,cd,cl,delta_p"]
for m in meshes:
    name, file, params = m.split("|")
    path, log = f"{out}/{name}/summary.json", f"{out}/{name}.log"
    if not os.path.exists(path):
        if not os.path.exists(log):
            continue  # not run
        # karman stopped with an error (a solve that did not converge): its reason from the log
        text = open(log, errors="replace").read()
        cells = re.search(r"karman: (\d+) cells,", text)
        err = re.search(r"karman: error: [^:]*: (.*?)(; residual history|$)", text, re.M)
        why = err.group(1) if err else "no summary.json, no error line"
        steps = re.findall(r"karman: newton +(\d+) ", text)
        lines.append(f"| {name} | `{params or '-'}` | {cells.group(1) if cells else '?'} | **no**: {why} "
                     f"| {steps[-1] if steps else '-'} | | | | | | | | | |")
        csv.append(f"{name},\"{params}\",{cells.group(1) if cells else ''},0,\"{why}\",,,,,,,,,")
        continue
    s = json.load(open(path))
    conv = "yes" if s["converged"] else f"**no**: {s['reason']}"
    kib = s["peak_memory_mib"] * 1024 / s["cells"]
    lines.append(f"| {name} | `{params or '-'}` | {s['cells']} | {conv} | {s['newton_iterations']} "
                 f"| {s['linear_iterations']} | {'yes' if s.get('tightened_forcing') else 'no'} "
                 f"| {'yes' if s['linear_fallback'] else 'no'} | {s['wall_time']:.1f} "
                 f"| {s['peak_memory_mib']:.0f} | {kib:.1f} | {s['cd']:.6f} | {s['cl']:.6f} | {s['delta_p']:.6f} |")
    csv.append(f"{name},\"{params}\",{s['cells']},{int(s['converged'])},\"{s['reason']}\",{s['newton_iterations']},"
               f"{s['linear_iterations']},{int(bool(s.get('tightened_forcing')))},{int(s['linear_fallback'])},{s['wall_time']:.3f},{s['peak_memory_mib']:.1f},"
               f"{s['cd']:.12f},{s['cl']:.12f},{s['delta_p']:.12f}")
lines.append("")
lines.append("Solve: the Newton solve's wall time (meshing, set-up and output excluded; with a second try or the "
             "LU, all tries: the Newton steps and GMRES iterations are the last try's); peak memory: the sum of "
             "the ranks' peak resident sets.  The coarse meshes' c_D is far from the interval: few cells "
             "across the channel and around the cylinder (results/tet-diagnosis.md).")
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
open(f"{out}.csv", "w").write("\n".join(csv) + "\n")
print("\n".join(lines))
PY
echo "bench-tet-meshes: results in $out.md and $out.csv"
