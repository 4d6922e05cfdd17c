#!/usr/bin/env bash
# scripts/bench-scaling.sh merges the rows it measures into the committed table instead of
# replacing it: a dry run with a stub executable (writes the summary.json, gradient.json and log
# lines a karman run and adjoint write, with made-up numbers) on a copy of the committed
# results/bench-scaling.csv (the format without the case, converged and date columns).
#   1. re-measuring (level 1, 1 rank, iterative) replaces that row with the stub's numbers; every
#      other row keeps each of its values as they were; the .md lists every row
#   2. a new key (level 5, 2 ranks) adds a row, the rest stays
#   3. a skipped direct run (above BENCH_DIRECT_MAX_LEVEL) leaves the measured row of its key
#   4. a failed run replaces its key's row with the failure
#   5. BENCH_REPORT_ONLY=1 merges the runs found without running anything
# usage: bench_scaling_merge.sh KARMAN SOURCE_DIR WORK_DIR   (KARMAN unused: the stub replaces it)
set -u
src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/results" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
cp "$src/results/bench-scaling.csv" results/bench-scaling.csv
cp results/bench-scaling.csv original.csv
cat > karman-stub <<'SH'
#!/usr/bin/env bash
# karman-stub run|adjoint CASE -o DIR ...: made-up numbers in the files bench-scaling.sh reads
cmd=$1 dir=$4
mkdir -p "$dir"
[ -z "${STUB_FAIL:-}" ] || exit 3
if [ "$cmd" = run ]; then
  printf 'newton   0  |R| 1e+00  CFL 1e+00  lin 0\nnewton   1  |R| 1e-03  CFL 1e+01  lin 12\nnewton   2  |R| 1e-09  CFL 1e+02  lin 30\n'
  cat > "$dir/summary.json" <<JSON
{"cells": 4242, "newton_iterations": 2, "linear_iterations": 42, "wall_time": 1.25, "peak_memory_mib": 100.0,
 "cd": 5.5801, "cl": 0.0105, "delta_p": 0.1174, "converged": true}
JSON
else
  echo '{"adjoint_wall_time": 0.5, "adjoint_over_forward_time": 0.4}' > "$dir/gradient.json"
fi
SH
chmod +x karman-stub
bench() {
  BENCH_KARMAN="$work/karman-stub" BENCH_RESULTS="$work/results" \
    bash "$src/scripts/bench-scaling.sh" "$@" > "bench-$step.log" 2>&1 || { tail -5 "bench-$step.log"; fail "bench-scaling.sh ($step)"; }
}
check() { # python check on results/bench-scaling.csv and original.csv
  /usr/bin/python3 - "$@" || fail "step $step"
}

step=1
BENCH_METHODS=iterative bench "1" "1" 60
check <<'PY'
import csv
old = {(r["level"], r["ranks"], r["linear"]): r for r in csv.DictReader(open("original.csv"))}
new = {(r["level"], r["ranks"], r["linear"]): r for r in csv.DictReader(open("results/bench-scaling.csv"))}
assert set(new) == set(old), (sorted(set(new) ^ set(old)))
for k, r in old.items():
    if k == ("1", "1", "iterative"):
        continue
    for c, v in r.items():
        assert new[k][c] == v, (k, c, new[k][c], v)
    assert new[k]["case"] == "dfg-2d1" and new[k]["converged"] == "1" and new[k]["date"] == "", new[k]
m = new[("1", "1", "iterative")]
assert (m["cells"], m["newton_iterations"], m["linear_iterations"], m["max_linear_per_step"]) == ("4242", "2", "42", "30"), m
assert (m["mean_linear_per_step"], m["adjoint_time"], m["adjoint_over_forward"]) == ("21.00", "0.5", "0.40"), m
assert m["date"] and m["status"] == "0" and m["cd"] == "5.580100000000", m
md = open("results/bench-scaling.md").read().splitlines()
rows = [l for l in md if l.startswith("| ") and l[2].isdigit()]
assert len(rows) == len(old), (len(rows), len(old))
assert any(l.startswith("| 1 | 4242 | 1 | iterative | 2 | 42 | 21.0 / 30 |") for l in rows), rows
assert any(l.startswith("| 4 | 1238299 | 2 | iterative | 12 | 167 |") for l in rows), rows
PY
cp results/bench-scaling.csv after1.csv

step=2
BENCH_METHODS=iterative BENCH_ADJOINT=0 bench "5" "2" 60
check <<'PY'
import csv
before = list(csv.DictReader(open("after1.csv")))
after = list(csv.DictReader(open("results/bench-scaling.csv")))
assert len(after) == len(before) + 1, (len(after), len(before))
added = [r for r in after if (r["level"], r["ranks"]) == ("5", "2")]
assert len(added) == 1 and added[0]["cells"] == "4242" and added[0]["adjoint_time"] == "", added
assert [r for r in after if r not in added] == before
PY
cp results/bench-scaling.csv after2.csv

step=3
BENCH_METHODS=direct BENCH_DIRECT_MAX_LEVEL=2 bench "3" "2" 60
check <<'PY'
import csv
assert list(csv.DictReader(open("after2.csv"))) == list(csv.DictReader(open("results/bench-scaling.csv")))
PY

step=4
STUB_FAIL=1 BENCH_METHODS=direct bench "0" "2" 60
check <<'PY'
import csv
before = list(csv.DictReader(open("after2.csv")))
after = list(csv.DictReader(open("results/bench-scaling.csv")))
assert len(after) == len(before)
r = [r for r in after if (r["level"], r["ranks"], r["linear"]) == ("0", "2", "direct")][0]
assert r["status"] == "3" and r["cells"] == "" and r["cd"] == "", r
assert "| 0 | | 2 | direct | failed (exit 3) |" in open("results/bench-scaling.md").read()
assert [x for x in after if x is not r] == [x for x in before if (x["level"], x["ranks"], x["linear"]) != ("0", "2", "direct")]
PY

step=5
cp original.csv results/bench-scaling.csv
BENCH_REPORT_ONLY=1 bench "" "" 60
check <<'PY'
import csv
new = {(r["level"], r["ranks"], r["linear"]): r for r in csv.DictReader(open("results/bench-scaling.csv"))}
# the runs left in results/bench-scaling/: L1-np1-iterative, L5-np2-iterative, L3-np2-direct
# (skipped: the original row stays), L0-np2-direct (failed)
assert new[("1", "1", "iterative")]["cells"] == "4242" and new[("5", "2", "iterative")]["cells"] == "4242"
assert new[("3", "2", "direct")]["cells"] == "312625" and new[("0", "2", "direct")]["status"] == "3"
assert len(new) == len(list(csv.DictReader(open("original.csv")))) + 1
PY
echo "bench_scaling_merge: OK"
