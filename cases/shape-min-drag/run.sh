#!/bin/bash
# Reproduces every number and figure of cases/shape-min-drag/README.md:
#   bash cases/shape-min-drag/run.sh [KARMAN] [OUT]          (from the repository root)
# KARMAN defaults to build/release/karman, OUT to out/shape-min-drag; NP=1 rank (NP=2 for
# two); COARSE=1 runs only the level-0 optimizations (a few minutes each); KEEP=1 keeps the
# optimizations already finished in OUT.  Writes the optimizations
# to OUT/re*-l*/, the mesh and domain checks to OUT/check-*/, the images to
# cases/shape-min-drag/images/ and the tables to OUT/*.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
KARMAN=$(realpath "${1:-build/release/karman}")
OUT=$(realpath -m "${2:-out/shape-min-drag}")
NP=${NP:-1}
CASE=cases/shape-min-drag
IMG=$CASE/images
PY=/usr/bin/python3
mkdir -p "$OUT" "$IMG"
. scripts/mpi-env.sh
run() { mpirun -n "$NP" "$KARMAN" "$@"; }

# The case file $1 with the design's initial values set to the best design of the run in $2
# (FFD variables do not depend on the mesh).
continue_from() {
  $PY -c '
import json, os, sys
case, prev = sys.argv[1], sys.argv[2]
names = json.loads(open(prev + "/optimization-journal.jsonl").readline())["names"]
best = json.load(open(prev + "/summary.json"))["design"]
text = open(case).read()
text = text.replace("upper: [1]}", "upper: [1],\n     initial: [%s]}" % ", ".join(
    repr(best[n]) for n in names))
text = text.replace("file: body.geo", "file: " + os.path.dirname(os.path.abspath(case)) +
                    "/body.geo")
print(text, end="")' "$1" "$2"
}

# 1. the optimizations from the circle, Re = 40 and 1 on levels 0 and 1 (Re = 1 on level 1
#    with at most 150 evaluations instead of the case's 400, for time); each with its history
#    plot
for run_ in 40:0:400 40:1:400 1:0:400 1:1:150; do
  IFS=: read -r re l budget <<< "$run_"
  [ "${COARSE:-0}" = 1 ] && [ "$l" != 0 ] && continue
  o=$OUT/re$re-l$l
  [ "${KEEP:-0}" = 1 ] && [ -s "$o/summary.json" ] && continue
  rm -rf "$o"
  run optimize $CASE/re$re.yaml -o "$o" --set mesh.level=$l \
    --set optimization.max_evaluations=$budget > "$o.log" 2>&1 ||
    { tail -5 "$o.log"; exit 1; }
  grep -E "optimizer:|best design|KKT" "$o.log"
  $PY postprocess/plot_optimization.py "$o" "$o/optimization.png" > /dev/null
done
# 1b. the radial map with remeshing (re40-radial.yaml, re1-radial.yaml) and its degree-1 variant
#     (re40-corners.yaml) on levels 0-2 (level 0 only with COARSE=1)
for name in radial-re40 radial-re1 corners-re40; do
  re=${name##*-re} kind=${name%%-*}
  file=$CASE/re$re-$kind.yaml
  for l in 0 1 2; do
    [ "${COARSE:-0}" = 1 ] && [ "$l" != 0 ] && continue
    o=$OUT/$name-l$l
    [ "${KEEP:-0}" = 1 ] && [ -s "$o/summary.json" ] && continue
    rm -rf "$o"
    run optimize "$file" -o "$o" --set mesh.level=$l > "$o.log" 2>&1 ||
      { tail -5 "$o.log"; exit 1; }
    grep -E "optimizer:|best design|KKT" "$o.log"
    echo "  remeshings: $(grep -c 'remeshed around' "$o.log")"
  done
done
[ "${COARSE:-0}" = 1 ] && exit 0
for name in radial-re40 radial-re1 corners-re40; do
  degree=3 && [ "$name" = corners-re40 ] && degree=1
  $PY $CASE/shape_analysis.py $OUT/$name-l0 $OUT/$name-l1 $OUT/$name-l2 \
    -o $IMG/shapes-$name.png --labels "level 0,level 1,level 2" --markdown "$OUT/shapes-$name.md" \
    --radial-degree $degree
done

# 2. mesh and domain: c_D of the circle on levels 0-2 and with the far field at 60 D instead
#    of 30 D (level 1), and of the level-1 optimum with the far field at 60 D (one evaluation
#    of its design: FFD variables do not depend on the mesh)
cd_line() { grep -E '^karman: c_D' "$1" | tail -1 | sed 's/^karman: //'; }
for re in 40 1; do
  for l in 0 1 2; do
    o=$OUT/check-re$re-circle-l$l
    run run $CASE/re$re.yaml -o "$o" --set mesh.level=$l > "$o.log" 2>&1 ||
      { tail -5 "$o.log"; exit 1; }
    echo "Re $re circle, level $l: $(cd_line "$o.log")"
  done
  o=$OUT/check-re$re-circle-far60
  mkdir -p "$o"
  sed 's/Rf = {30.0,/Rf = {60.0,/' $CASE/body.geo > "$o/body60.geo"
  run run $CASE/re$re.yaml -o "$o" --set mesh.file="$o/body60.geo" --set mesh.level=1 \
    > "$o.log" 2>&1 || { tail -5 "$o.log"; exit 1; }
  echo "Re $re circle, level 1, far field at 60 D: $(cd_line "$o.log")"
  o=$OUT/check-re$re-optimum-far60
  continue_from $CASE/re$re.yaml "$OUT/re$re-l1" > "$o.yaml"
  run optimize "$o.yaml" -o "$o" --set mesh.file="$OUT/check-re$re-circle-far60/body60.geo" \
    --set mesh.level=1 --set optimization.max_evaluations=1 > "$o.log" 2>&1 ||
    { tail -5 "$o.log"; exit 1; }
  echo "Re $re level-1 optimum, far field at 60 D: $(grep 'best design' "$o.log" | sed 's/^karman: //')"
done

# 3. pictures and tables
$PY $CASE/shape_analysis.py $OUT/re40-l0 $OUT/re40-l1 -o $IMG/shapes-re40.png \
  --labels "Re 40 level 0,Re 40 level 1" --markdown "$OUT/shapes-re40.md"
$PY $CASE/shape_analysis.py $OUT/re1-l0 $OUT/re1-l1 -o $IMG/shapes-re1.png \
  --labels "Re 1 level 0,Re 1 level 1" --markdown "$OUT/shapes-re1.md"
cp "$OUT/re40-l1/optimization.png" $IMG/history-re40-l1.png
cp "$OUT/re1-l1/optimization.png" $IMG/history-re1-l1.png
# c_D of each optimum with its pressure and viscous parts, the KKT check
for d in "$OUT"/re*-l? "$OUT"/radial-re*-l? "$OUT"/corners-re*-l?; do
  $PY -c '
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
k, v = s["kkt"], s["values"]
print("%s: %s, %d evaluations (%d failed); c_D %.5f = %.5f + %.5f; KKT residual %.2e, largest "
      "relative constraint violation %.1e, wall time %.0f s" % (
          d, s["status"], s["evaluations"], s["failed"], v["cd"], v["cd_pressure"],
          v["cd_viscous"], k["residual"], k["max_relative_violation"], s["wall_time"]))' "$d"
done
