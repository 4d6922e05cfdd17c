#!/usr/bin/env bash
# The neural-control example (cases/neural-control, coarse setting; label long, ~6 min on 1 rank):
# spin-up, then 10 Adam steps of the network through the unsteady adjoint, then the direct
# per-step optimization with the same budget; both must end below the uncontrolled mean drag and
# objective, and iteration 0 of both is the same uncontrolled flow.
# usage: neural_control.sh KARMAN SOURCE_DIR WORK_DIR PYTHON PYTHONPATH
set -u
karman=$1 src=$2 work=$3 python=$4 pypath=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
"$karman" run "$src/cases/neural-control/spinup.yaml" -o spinup > spinup.log 2>&1 || { tail -3 spinup.log; fail "spin-up"; }
export PYTHONPATH="$pypath${PYTHONPATH:+:$PYTHONPATH}"
for mode in network direct; do
  flag=""; [ "$mode" = direct ] && flag=--direct
  "$python" "$src/cases/neural-control/train.py" -o "$mode" --iterations 10 $flag \
    --set initial.file="$work/spinup/flow.h5" > "$mode.log" 2>&1 || { tail -5 "$mode.log"; fail "train.py $flag"; }
done
"$python" - <<'PY' || exit 1
import json
s = {m: json.load(open(f"{m}/summary.json")) for m in ("network", "direct")}
for m, v in s.items():
    u, b = v["uncontrolled"], v["best"]
    print(f"{m}: J {u['J']:.6f} -> {b['J']:.6f}, mean drag {u['mean_drag']:.6f} -> {b['mean_drag']:.6f}")
    assert b["J"] < u["J"] and b["mean_drag"] < u["mean_drag"], m
assert abs(s["network"]["uncontrolled"]["J"] - s["direct"]["uncontrolled"]["J"]) <= 1e-12 * s["direct"]["uncontrolled"]["J"]
PY
echo "neural_control: OK"
