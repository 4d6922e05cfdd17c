#!/usr/bin/env bash
# solver.linear: auto against direct and iterative on every shipped case (issue "Fast by default"):
# each case as its README runs it (the case file, no overrides but the linear solver), unsteady ones
# shortened to STEPS time steps from their initial condition, on RANKS ranks; the three settings
# run one after the other for each case (alternating, so that a change of load hits all three), the
# whole process timed (/usr/bin/time).  Prints the table and writes results/bench-auto.{csv,md}:
# wall time of each, auto's choice (and whether it fell back to the LU), auto / the faster of the
# two.
# The cases that start from a developed flow (initial.file) get their spin-up run first (auto,
# STEPS steps, into the folder the case file names; not timed) and are timed themselves too.
# usage: scripts/bench-auto.sh [STEPS] [RANKS] [REPEATS]     (default: 20 2 1)
#   BENCH_CASES=REGEX: only the cases whose name matches, their rows replacing earlier ones in
#   results/bench-auto/runs.csv (the table is made from all rows)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
steps=${1:-20}
ranks=${2:-2}
repeats=${3:-1}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
. scripts/bench-lib.sh
out=results/bench-auto
mkdir -p "$out"
karman=$root/build/release/karman
# name | command | case file | extra --set (unsteady: the end time from the step)
cases=(
  "dfg-2d1|run|cases/dfg-2d1/case.yaml|"
  "dfg-2d1 adjoint|adjoint|cases/dfg-2d1/case.yaml|"
  "dfg-3d1z|run|cases/dfg-3d1z/case.yaml|"
  "cylinder-unbounded|run|cases/cylinder-unbounded/case.yaml|"
  "heated-cylinder|run|cases/heated-cylinder/case.yaml|"
  "naca0012-laminar|run|cases/naca0012-laminar/case.yaml|"
  "shape-min-drag re40|run|cases/shape-min-drag/re40.yaml|"
  "dfg-2d2|run|cases/dfg-2d2/case.yaml|unsteady"
  "dfg-2d2 adjoint|adjoint|cases/dfg-2d2/case.yaml|unsteady"
  "cylinder-identification|run|cases/cylinder-identification/case.yaml|unsteady"
  "cylinder-rotary-control spin-up|run|cases/cylinder-rotary-control/spinup.yaml|unsteady"
  "cylinder-rotary-control|run|cases/cylinder-rotary-control/case.yaml|unsteady"
  "neural-control spin-up|run|cases/neural-control/spinup.yaml|unsteady"
  "neural-control|run|cases/neural-control/case.yaml|unsteady"
)
filter=${BENCH_CASES:-.}
touch "$out/runs.csv"
# the spin-ups the controlled cases start from (initial.file in their case files)
spin_up_controlled_cases bench-auto "$karman" "$ranks" "$steps" "$out"
for rep in $(seq "$repeats"); do
  for entry in "${cases[@]}"; do
    IFS='|' read -r name cmd file kind <<< "$entry"
    [[ $name =~ $filter ]] || continue
    if [ "$rep" = 1 ]; then # earlier rows of this case go
      grep -v "^$name,$cmd," "$out/runs.csv" > "$out/runs.tmp" || true
      mv "$out/runs.tmp" "$out/runs.csv"
    fi
    sets=(--set output.vtk=false)
    if [ "$kind" = unsteady ]; then
      dt=$(/usr/bin/python3 -c "import yaml,sys; print(yaml.safe_load(open('$file'))['time']['dt'])")
      sets+=(--set time.t_end="$(/usr/bin/python3 -c "print($dt * $steps)")" --set time.statistics_start=0)
    fi
    for linear in direct iterative auto; do
      tag=$(echo "$name-$linear-$rep" | tr ' ' '_')
      echo "bench-auto: $name, $linear ($rep)"
      dir=$out/$tag
      rm -rf "$dir"
      if /usr/bin/time -f "%e %M" -o "$out/$tag.time" mpirun -n "$ranks" "$karman" "$cmd" "$file" \
        -o "$dir" "${sets[@]}" --set solver.linear="$linear" > "$out/$tag.log" 2>&1; then
        status=ok
      else
        status=failed
      fi
      read -r wall _ < <(tail -1 "$out/$tag.time")
      fallback=$(grep -c "solving it again with the direct LU" "$out/$tag.log" || true)
      # cells and peak memory (total over the ranks) from the run's summary.json (adjoint:
      # gradient.json)
      read -r cells mem < <(/usr/bin/python3 -c "
import json, os
s = {}
for f in ('summary.json', 'gradient.json'):
    if os.path.exists('$dir/' + f):
        s = json.load(open('$dir/' + f))
        break
print(s.get('cells', 0), s.get('peak_memory_mib', 0))")
      echo "$name,$cmd,$linear,$rep,$status,$wall,$mem,$fallback,$cells" >> "$out/runs.csv"
    done
  done
done
/usr/bin/python3 - "$out" "$steps" "$ranks" <<'PY'
import csv, sys, datetime, platform, os, statistics
out, steps, ranks = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
meta = {}
for name, cmd, linear, rep, status, wall, mem, fallback, cells in csv.reader(open(f"{out}/runs.csv")):
    runs.setdefault((name, linear), []).append((status, float(wall), float(mem or 0), int(fallback)))
    meta[name] = cells
names = list(dict.fromkeys(n for n, _ in runs))
head = ("| case | cells | direct [s] | iterative [s] | auto [s] | auto's choice | auto / faster | "
        "peak memory direct / iterative / auto [MiB, all ranks] |")
lines = [f"solver.linear auto against direct and iterative ({datetime.date.today()}, {platform.node()}, "
         f"{os.cpu_count()} cores, {ranks} ranks; unsteady cases {steps} steps from their initial "
         f"condition; median wall time of the whole process over the repeats)", "", head,
         "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
rows = [["case", "cells", "direct_s", "iterative_s", "auto_s", "auto_fallbacks", "auto_over_faster",
         "direct_mib", "iterative_mib", "auto_mib"]]
# the rows of cases not in this folder's runs (results/bench-auto/ is not committed: a partial
# re-run on a fresh clone) are kept from the committed table
kept = []
if os.path.exists(f"{out}.csv"):
    kept = [r for r in csv.DictReader(open(f"{out}.csv")) if r["case"] not in names]
for n in names:
    t = {}
    m = {}
    note = {}
    for lin in ("direct", "iterative", "auto"):
        r = runs.get((n, lin), [])
        ok = [x for x in r if x[0] == "ok"]
        t[lin] = statistics.median(x[1] for x in ok) if ok else None
        m[lin] = max(x[2] for x in r) if r else None
        note[lin] = sum(x[3] for x in r)
    fmt = lambda v: f"{v:.1f}" if v is not None else "failed"
    faster = min(v for v in (t["direct"], t["iterative"]) if v is not None) if (t["direct"] or t["iterative"]) else None
    ratio = t["auto"] / faster if t["auto"] and faster else None
    choice = "iterative" + (f", LU fallback x{note['auto']}" if note["auto"] else "")
    lines.append(f"| {n} | {meta[n]} | {fmt(t['direct'])} | {fmt(t['iterative'])} | {fmt(t['auto'])} | {choice} | "
                 f"{ratio:.2f} |" if ratio else f"| {n} | {meta[n]} | {fmt(t['direct'])} | {fmt(t['iterative'])} | "
                 f"{fmt(t['auto'])} | {choice} | - |")
    lines[-1] += " " + " / ".join(f"{m[l]:.0f}" if m[l] else "-" for l in ("direct", "iterative", "auto")) + " |"
    rows.append([n, meta[n], t["direct"], t["iterative"], t["auto"], note["auto"], ratio,
                 m["direct"], m["iterative"], m["auto"]])
num = lambda v: float(v) if v not in ("", None) else None
for r in kept:
    t = {l: num(r[f"{l}_s"]) for l in ("direct", "iterative", "auto")}
    fb = int(r["auto_fallbacks"] or 0)
    ratio = num(r["auto_over_faster"])
    mem = " / ".join(f"{num(r.get(f'{l}_mib')):.0f}" if num(r.get(f"{l}_mib")) else "-"
                     for l in ("direct", "iterative", "auto"))
    fmt = lambda v: f"{v:.1f}" if v is not None else "failed"
    choice = "iterative" + (f", LU fallback x{fb}" if fb else "")
    lines.append(f"| {r['case']} | {r['cells']} | {fmt(t['direct'])} | {fmt(t['iterative'])} | "
                 f"{fmt(t['auto'])} | {choice} | {f'{ratio:.2f}' if ratio else '-'} | {mem} |")
    rows.append([r["case"], r["cells"], t["direct"], t["iterative"], t["auto"], fb, ratio,
                 r.get("direct_mib"), r.get("iterative_mib"), r.get("auto_mib")])
open(f"{out}.md", "w").write("\n".join(lines) + "\n")
with open(f"{out}.csv", "w", newline="") as f:
    csv.writer(f).writerows(rows)
print("\n".join(lines))
PY
