#!/usr/bin/env bash
# karman optimize of a per-step control (tests/data/control-perstep.yaml, 8 steps: the cylinder's
# rotation rate at every level, from a sine, with a smoothness penalty; mean drag + control cost;
# L-BFGS with bounds):
#  - the objective decreases; the store-all campaign's journal cut after evaluation m (2, 5) and
#    continued with revolve (3 snapshots, states recomputed) evaluates the same design m (the
#    replay fixes NLopt's path) with per-step gradients equal to store-all's to 1e-9 relative;
#  - a campaign killed with SIGKILL during the backward (adjoint) sweep of its 3rd evaluation, and
#    one killed during the forward run of its 3rd evaluation (KARMAN_TEST_KILL), restarted with
#    --restart, keep the journaled evaluations (replayed, not recomputed) and end on the path of
#    the uninterrupted campaign, bitwise (1 rank; the adjoint's levels are solved by LU,
#    -adj_ksp_type preonly: with the default GMRES the gradients of two runs may differ by
#    ~1e-15 relative (iterative solves stop at their tolerance, not at a fixed operation count),
#    and L-BFGS's line search carries that to 1e-12 ... 2e-5 in the designs of later
#    evaluations, measured);
#  - on 2 ranks: the first gradient equals 1 rank's to 1e-10 and the best objective to 1e-6 (the
#    ranks' gradients differ at round-off, and the L-BFGS line search amplifies that to 1e-8 ...
#    1e-5 in the designs of later evaluations, measured).
# usage: control_optimize.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
sed "s|file: control-cylinder.geo, level: 0|file: $src/tests/data/control-cylinder.geo, level: 0, cache_dir: $work/cache|" \
  "$src/tests/data/control-perstep.yaml" > case.yaml
grep -q "cache_dir: $work/cache" case.yaml || fail "tests/data/control-perstep.yaml: its mesh line changed"
run() { # NAME [ARGS]
  local name=$1
  shift
  "$karman" optimize case.yaml -o "$name" "$@" > "$name.log" 2>&1 || { tail -3 "$name.log"; fail "$name"; }
}
run store
grep -q "lbfgs" store.log || fail "not lbfgs"
[ -s store/controls.csv ] || fail "no controls.csv"
[ "$(wc -l < store/controls.csv)" = 9 ] || fail "controls.csv should have 8 rows"
for m in 2 5; do
  mkdir -p revolve$m
  head -n $((m + 1)) store/optimization-journal.jsonl > revolve$m/optimization-journal.jsonl
  run revolve$m --restart --set adjoint.schedule=revolve --set adjoint.snapshots=3 \
    --set optimization.max_evaluations=$((m + 1))
  tail -1 revolve$m/optimization.csv | grep -q "^$m,0,1,.*,[1-9][0-9]*,[0-9.]*,$" ||
    fail "revolve: evaluation $m not computed, or no state recomputed"
done

# killed campaigns, restarted
for phase in adjoint forward; do
  mkdir -p "kill_$phase"
  { KARMAN_TEST_KILL=$phase:3 "$karman" optimize case.yaml -o "kill_$phase" > "kill_$phase.log" 2>&1; } 2> /dev/null &&
    fail "KARMAN_TEST_KILL=$phase:3 did not kill the campaign"
  [ "$(grep -c '"index"' kill_$phase/optimization-journal.jsonl)" = 2 ] ||
    fail "$phase kill: the journal should hold 2 evaluations"
  # where it died: after the 2nd evaluation's line, in the backward sweep (adjoint levels logged,
  # not level 1) or in the forward run (no adjoint level logged)
  after=$(sed -n '/evaluation   1 /,$p' "kill_$phase.log" | tail -n +2)
  if [ $phase = adjoint ]; then
    echo "$after" | grep -q "adjoint level" || fail "adjoint kill: not in the backward sweep"
    echo "$after" | grep -q "adjoint level     1 " && fail "adjoint kill: the sweep finished"
  else
    echo "$after" | grep -q "adjoint level" && fail "forward kill: not in the forward run"
  fi
  cp "kill_$phase/optimization-journal.jsonl" "journal_$phase.jsonl"
  "$karman" optimize case.yaml -o "kill_$phase" --restart > "restart_$phase.log" 2>&1 ||
    { tail -3 "restart_$phase.log"; fail "restart after the $phase kill"; }
  grep -q "after 6 evaluations (2 replayed, 0 failed)" "restart_$phase.log" ||
    fail "restart after the $phase kill: not 2 evaluations replayed of 6"
done
mpirun -n 2 --oversubscribe "$karman" optimize case.yaml -o np2 > np2.log 2>&1 || { tail -3 np2.log; fail "2 ranks"; }

/usr/bin/python3 - <<'PY' || exit 1
import csv, json
def journal(d):
    rows = [json.loads(l) for l in open(f"{d}/optimization-journal.jsonl") if l.strip()]
    return [r for r in rows if "index" in r]
def rel(a, b):
    s = max(max(abs(x) for x in a), 1e-300)
    return max(abs(x - y) for x, y in zip(a, b)) / s
store = journal("store")
assert len(store) == 6, len(store)
assert min(e["f"] for e in store) < store[0]["f"] * (1 - 1e-3), [e["f"] for e in store]
for m in (2, 5):
    r = journal(f"revolve{m}")[m]
    assert r["x"] == store[m]["x"], m
    worst = rel(store[m]["df"], r["df"])
    assert worst <= 1e-9, (m, worst)
    print(f"evaluation {m} with revolve (3 snapshots): per-step gradient = store-all's to {worst:.1e}")
print(f"objective {store[0]['f']:.8f} -> {min(e['f'] for e in store):.8f}")
for phase in ("adjoint", "forward"):
    k = journal(f"kill_{phase}")
    assert len(k) == len(store), (phase, len(k))
    before = [json.loads(l) for l in open(f"journal_{phase}.jsonl") if '"index"' in l]
    assert k[:2] == before, phase  # journaled before the kill: replayed, not recomputed
    dx = max(rel(a["x"], b["x"]) for a, b in zip(store, k))
    df = max(abs(a["f"] - b["f"]) / abs(a["f"]) for a, b in zip(store, k))
    assert all(a[key] == b[key] for a, b in zip(store, k) for key in ("x", "f", "df")), (phase, dx, df)
    print(f"killed in the {phase} and restarted: same path (designs {dx:.1e}, objectives {df:.1e})")
n2 = journal("np2")
g = rel(store[0]["df"], n2[0]["df"])
f1, f2 = min(e["f"] for e in store), min(e["f"] for e in n2)
assert len(n2) == len(store) and g <= 1e-10 and abs(f1 - f2) <= 1e-6 * abs(f1), (len(n2), g, f1, f2)
print(f"2 ranks: first gradient = 1 rank's to {g:.1e}, best objective {f2:.10f} (1 rank {f1:.10f})")
PY
echo "control_optimize: all checks passed"
