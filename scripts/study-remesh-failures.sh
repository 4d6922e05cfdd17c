#!/usr/bin/env bash
# Why shape-min-drag loses designs, and what remeshing does about it (issue 45): the Re 40 FFD
# campaign (cases/shape-min-drag/re40.yaml) on levels 0 and 1 for a limited number of
# evaluations, 1 rank; for every failed evaluation, whether its wall polygon intersects itself
# under the case's FFD map (a folded shape, which no mesh can hold); then the hidden Catch2 test
# "remeshing study" (tests/unit/test_remeshing.cpp): the mesh of the last good design before
# the first failure remeshed by driver::remesh, once keeping every wall vertex and once with
# the wall re-sampled, and every failed design evaluated on it.  Prints and writes
# results/remesh-failures.md.
# usage: scripts/study-remesh-failures.sh [EVALUATIONS_L0] [EVALUATIONS_L1]   (default 120 100)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n0=${1:-120}
n1=${2:-100}
[ -x build/release/karman ] || bash scripts/build.sh
. scripts/mpi-env.sh
out=results/remesh-failures
mkdir -p "$out"
for l in 0 1; do
  n=$([ $l = 0 ] && echo "$n0" || echo "$n1")
  echo "study-remesh-failures: level $l, $n evaluations"
  rm -rf "$out/L$l"
  build/release/karman optimize cases/shape-min-drag/re40.yaml -o "$out/L$l" --set mesh.level=$l \
    --set optimization.max_evaluations="$n" > "$out/L$l.log" 2>&1 || { tail -5 "$out/L$l.log"; exit 1; }
  KARMAN_REMESH_STUDY="$out/L$l" KARMAN_REMESH_LEVEL=$l build/release/tests/karman_tests \
    "remeshing study*" > "$out/L$l-study.log" 2>&1 || { tail -20 "$out/L$l-study.log"; exit 1; }
done
/usr/bin/python3 - "$out" <<'PY'
import csv, re, sys, datetime, platform
import numpy as np
from math import comb
out = sys.argv[1]
B = lambda m, i, t: comb(m, i) * t**i * (1 - t)**(m - i)
def folded(a, nq):  # the FFD of re40.yaml (origin -0.51, size 1.02, 5 x 4) on the wall polygon
    n = 4 * nq; th = np.radians(45 + 90.0 / nq * np.arange(n)); P = 0.5 * np.c_[np.cos(th), np.sin(th)]
    s = (P + 0.51) / 1.02; W = P.copy()
    for j in range(4):
        for i in range(5):
            w = B(4, i, s[:, 0]) * B(3, j, s[:, 1]); k = (j * 5 + i) * 2
            W[:, 0] += w * a[k]; W[:, 1] += w * a[k + 1]
    o = lambda a, b, p: np.sign((b[0]-a[0])*(p[1]-a[1]) - (b[1]-a[1])*(p[0]-a[0]))
    Q = np.roll(W, -1, 0)
    for i in range(n):
        for j in range(i + 2, n):
            if (i == 0 and j == n - 1): continue
            if o(W[i],Q[i],W[j])*o(W[i],Q[i],Q[j]) < 0 and o(W[j],Q[j],W[i])*o(W[j],Q[j],Q[i]) < 0: return True
    return False
lines = ["# Failed designs of shape-min-drag (Re 40, FFD) and remeshing", "",
         f"{datetime.date.today()}, {platform.node()}, 1 rank, `scripts/study-remesh-failures.sh`.", ""]
for l in (0, 1):
    d = f"{out}/L{l}"
    ok = {int(r['evaluation']): r['ok'] == '1' for r in csv.DictReader(open(f"{d}/optimization.csv"))}
    des = {int(r[0]): [float(x) for x in r[1:]] for r in csv.reader(open(f"{d}/designs.csv")) if r[0] != 'evaluation'}
    failed = [k for k in ok if not ok[k]]
    folds = {k: folded(des[k], 12 * 2**l) for k in failed}
    rows = {}
    remesh = {}
    for line in open(f"{out}/L{l}-study.log"):
        m = re.match(r"study: (\w+) evaluation (\d+) ok (\d) J (\S+) min_volume_ratio (\S+) newton (\d+)", line)
        if m: rows[(m[1], int(m[2]))] = (int(m[3]), float(m[4]), float(m[5]), int(m[6]))
        m = re.match(r"study: remesh \(walls (\w+)\) at evaluation (\d+): (\S+) s, cells (\d+) -> (\d+)", line)
        if m: remesh[m[1]] = (int(m[2]), float(m[3]), int(m[4]), int(m[5]))
    g = remesh['kept'][0]
    lines += [f"## Level {l}: {len(ok)} evaluations, {len(failed)} failed; {sum(folds.values())} of them with a self-intersecting wall polygon", "",
              f"Remeshed at evaluation {g} (the last good one before the first failure): cells {remesh['kept'][2]} -> {remesh['kept'][3]} (walls kept) / {remesh['resampled'][3]} (re-sampled), {remesh['kept'][1]:.2f} / {remesh['resampled'][1]:.2f} s.", "",
              "| evaluation | wall folded | original mesh | walls kept: ok, J, min V/V0 | walls re-sampled: ok, J, min V/V0, Newton |",
              "|---:|---|---|---|---|"]
    def cell(mesh, k, newton=False):
        r = rows.get((mesh, k))
        if r is None: return "-"
        if not r[0]: return "FAILED"
        return f"{r[1]:.6f}, {r[2]:.3f}" + (f", {r[3]}" if newton else "")
    lines.append(f"| {g} (good) | no | {cell('original', g)} | {cell('kept', g)} | {cell('resampled', g, True)} |")
    for k in failed:
        lines.append(f"| {k} | {'yes' if folds[k] else 'no'} | {cell('original', k)} | {cell('kept', k)} | {cell('resampled', k, True)} |")
    lines.append("")
text = "\n".join(lines) + "\n"
open("results/remesh-failures.md", "w").write(text)
print(text)
PY
