#!/usr/bin/env bash
# System identification by probe matching (karman optimize with a parameter design entry and a
# probe-match objective on observations_file; coarse cylinder in a channel,
# tests/data/control-cylinder.geo, 10 steps of the impulsively started flow):
#  - observations made by karman with the hidden viscosity 1e-3 and inflow speed 1.5 at 6 probes
#    downstream of the cylinder (cases/cylinder-identification/make_observations.py);
#  - from 30 % off (1.3e-3, 1.05) the optimizer recovers both to 1e-6 relative without noise
#    (1 rank), and to 1 % with noise of 1 % of each probe signal's rms (2 ranks), the error then
#    within 3 of the reported standard deviations (Gauss-Newton estimate, summary.json);
#  - an observations file with the wrong number of columns or with times that do not increase is
#    refused with one error line naming the file.
# usage: control_identify.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
probes="[[0.3, 0.17], [0.3, 0.23], [0.4, 0.17], [0.4, 0.23], [0.5, 0.17], [0.5, 0.23]]"
cat > truth.yaml <<YAML
mesh: {file: $src/tests/data/control-cylinder.geo, level: 0, cache_dir: $work/cache}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 1.0, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.5, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}
initial: {velocity: [1, 0]}
time: {mode: unsteady, dt: 0.02, t_end: 0.2}
solver: {rtol: 1e-13, atol: 1e-15}
output: {vtk: false, hdf5: false, checkpoint_every: 0, probes: $probes}
YAML
sed -e 's/viscosity: 1.0e-3/viscosity: 1.3e-3/' -e 's/velocity: 1.5,/velocity: 1.05,/' -e '/^output/d' \
  truth.yaml > ident.yaml
cat >> ident.yaml <<YAML
output: {vtk: false}
objective: {type: probe-match, probes: $probes, observations_file: obs.csv, window: [0.02, 0.2]}
design:
  - {type: parameter, name: physics, parameters: [fluid.viscosity, boundaries.inlet.velocity], lower: [5.0e-4, 0.5], upper: [3.0e-3, 3.0]}
optimization: {algorithm: slsqp, max_evaluations: 40, xtol_rel: 1e-10, ftol_rel: 1e-15}
YAML
# (converged steps: the clean identification recovers the truth to 1e-6, below the algebraic
# error of karman run's default forward tolerances)
"$karman" run truth.yaml -o truth --set solver.tolerances=converged > truth.log 2>&1 || { tail -3 truth.log; fail "truth run"; }
mk="$src/cases/cylinder-identification/make_observations.py"
/usr/bin/python3 "$mk" truth/forces.csv obs.csv || fail "observations"
/usr/bin/python3 "$mk" truth/forces.csv obs-noisy.csv --noise 0.01 || fail "noisy observations"
"$karman" optimize ident.yaml -o clean > clean.log 2>&1 || { tail -3 clean.log; fail "identification"; }
mpirun -n 2 --oversubscribe "$karman" optimize ident.yaml -o noisy \
  --set objective.observations_file=obs-noisy.csv > noisy.log 2>&1 ||
  { tail -3 noisy.log; fail "identification with noise on 2 ranks"; }
/usr/bin/python3 - <<'PY' || exit 1
import json
truth = {"fluid.viscosity": 1e-3, "boundaries.inlet.velocity": 1.5}
for run, tol in (("clean", 1e-6), ("noisy", 1e-2)):
    s = json.load(open(f"{run}/summary.json"))
    start = s["initial_design"]
    ident = s["identification"]
    assert ident["observations"] == 10 * 6 * 3, ident["observations"]
    for name, value in truth.items():
        assert abs(start[name] - value) / value >= 0.29, (run, name, start[name])
        got = s["design"][name]
        err = abs(got - value) / value
        sd = ident["parameters"][name]["standard_deviation"]
        assert err <= tol, (run, name, got, err)
        if run == "noisy":
            assert ident["estimate_ok"] and sd > 0, (name, ident)
            assert abs(got - value) <= 3 * sd, (name, got, value, sd)
        print(f"{run}: {name} = {got:.10g} (true {value:g}, error {err:.1e}, sd {sd:.2e}), "
              f"misfit {ident['misfit']:.3e}, {s['evaluations']} evaluations")
PY
# bad observations: wrong number of columns, times not increasing
head -3 obs.csv | cut -d, -f1-10 > columns.csv
awk 'NR == 3 {print "0.01" substr($0, index($0, ","))} NR != 3' obs.csv > times.csv
for bad in columns times; do
  "$karman" optimize ident.yaml -o "bad_$bad" --set objective.observations_file=$bad.csv \
    > "$bad.log" 2>&1 && fail "observations $bad.csv accepted"
  [ "$(grep -c "^karman: error" "$bad.log")" = 1 ] || fail "$bad.csv: not one error line"
  grep error "$bad.log" | grep -q "ident.yaml: objective.observations_file .*/$bad.csv" ||
    { grep error "$bad.log"; fail "$bad.csv: no key and file in the message"; }
done
grep error columns.log | grep -q "expected 19 number" || { grep error columns.log; fail "columns message"; }
grep error times.log | grep -q "times must increase" || { grep error times.log; fail "times message"; }
echo "control_identify: all checks passed"
