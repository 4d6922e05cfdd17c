#!/usr/bin/env bash
# Speed and memory of two karman builds side by side, measured one after the other on the
# same machine (a refactoring must not make anything slower): DFG 2D-1 steady solve and drag
# adjoint (levels LEVELS), and DFG 2D-2 unsteady steps (level 1, STEPS steps of dt 0.005
# from rest), on 1 and 2 ranks.  Each measurement alternates old and new REPEATS times; the
# table gives the fastest (the least disturbed by other load), the mean and the spread
# (max / min) of each, with the ratios new / old.  Writes results/bench-compare.md.
# usage: scripts/bench-compare.sh OLD_KARMAN NEW_KARMAN [LEVELS] [STEPS] [REPEATS]
#        (default "1 2", 40, 2); OLD_KARMAN e.g. from `git worktree add /tmp/old REV &&
#        bash /tmp/old/scripts/build.sh`: /tmp/old/build/release/karman
#        BENCH_SETS="--set key=value ...": added to every run of both (e.g. "--set
#        solver.linear=iterative" when the two builds' solver.linear auto differ);
#        BENCH_NEW_SETS: added to the new build's runs only (keys the old build does not know,
#        e.g. "--set solver.tolerances=converged" to time the old build's converged steps)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=$(realpath "$1") new=$(realpath "$2") levels=${3:-"1 2"} steps=${4:-40} repeats=${5:-2}
read -r -a common_sets <<< "${BENCH_SETS:-}"
read -r -a new_sets <<< "${BENCH_NEW_SETS:-}"
. "$root/scripts/mpi-env.sh"
work=$root/out/bench-compare
t_end=$(/usr/bin/python3 -c "print($steps * 0.005)")
# BENCH_REPORT_ONLY=1: only rebuild the table from the runs already in out/bench-compare
[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && runs="" || { runs=$(seq 1 "$repeats"); rm -rf "$work" && mkdir -p "$work"; }
for r in $runs; do
  for np in 1 2; do
    for tag in old new; do
      k=$old sets=("${common_sets[@]}")
      [ $tag = new ] && k=$new sets=("${common_sets[@]}" "${new_sets[@]}")
      for l in $levels; do
        d=$work/$tag-steady-L$l-np$np-$r
        echo "bench-compare: $tag, DFG 2D-1 level $l, $np rank(s), run $r"
        mpirun -n "$np" "$k" run "$root/cases/dfg-2d1/case.yaml" -o "$d" --set mesh.level="$l" \
          --set output.vtk=false "${sets[@]}" > "$d.log" 2>&1 || { tail -5 "$d.log"; exit 1; }
        mpirun -n "$np" "$k" adjoint "$root/cases/dfg-2d1/case.yaml" -o "$d" --set mesh.level="$l" \
          --set output.vtk=false "${sets[@]}" >> "$d.log" 2>&1 || { tail -5 "$d.log"; exit 1; }
      done
      d=$work/$tag-unsteady-L1-np$np-$r
      echo "bench-compare: $tag, DFG 2D-2 level 1, $steps steps, $np rank(s), run $r"
      mpirun -n "$np" "$k" run "$root/cases/dfg-2d2/case.yaml" -o "$d" --set mesh.level=1 \
        --set time.dt=0.005 --set time.t_end="$t_end" --set output.vtk=false \
        --set output.checkpoint_every=0 "${sets[@]}" > "$d.log" 2>&1 || { tail -5 "$d.log"; exit 1; }
    done
  done
done
/usr/bin/python3 - "$work" "$root/results/bench-compare.md" "$old" "$new" "$levels" "$repeats" <<'PY'
import glob, json, os, sys
work, report, old, new, levels, repeats = sys.argv[1:]
def samples(pattern, file, key):
    return [json.load(open(os.path.join(d, file)))[key]
            for d in glob.glob(os.path.join(work, pattern)) if os.path.isdir(d)]
rows = []
for np in (1, 2):
    for l in levels.split():
        for label, file, key in (("steady solve", "summary.json", "wall_time"),
                                 ("steady adjoint", "gradient.json", "adjoint_wall_time"),
                                 ("peak memory, run [MiB]", "summary.json", "peak_memory_mib")):
            a = samples(f"old-steady-L{l}-np{np}-*", file, key)
            b = samples(f"new-steady-L{l}-np{np}-*", file, key)
            rows.append((f"DFG 2D-1 level {l}: {label}", np, a, b))
    for label, key in (("s per step", "wall_time_per_step"), ("peak memory [MiB]", "peak_memory_mib")):
        a = samples(f"old-unsteady-L1-np{np}-*", "summary.json", key)
        b = samples(f"new-unsteady-L1-np{np}-*", "summary.json", key)
        rows.append((f"DFG 2D-2 level 1: {label}", np, a, b))
mean = lambda v: sum(v) / len(v)
lines = ["| measurement | ranks | old fastest | new fastest | new / old | old mean | new mean | "
         "new / old | spread old | spread new |", "|---|---|---|---|---|---|---|---|---|---|"]
lines += [f"| {m} | {np} | {min(a):.3f} | {min(b):.3f} | {min(b) / min(a):.3f} | {mean(a):.3f} | "
          f"{mean(b):.3f} | {mean(b) / mean(a):.3f} | {max(a) / min(a):.2f} | {max(b) / min(b):.2f} |"
          for m, np, a, b in rows]
head = (f"Old: {old}\nNew: {new}\n{repeats} alternating runs each; wall times in seconds "
        "(solve / adjoint only, set-up and output excluded), peak memory: sum over ranks; "
        "spread: slowest / fastest run of a build.\n")
text = "# Two builds compared\n\n" + head + "\n" + "\n".join(lines) + "\n"
print(text)
open(report, "w").write(text)
PY
