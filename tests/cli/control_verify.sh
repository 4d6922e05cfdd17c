#!/usr/bin/env bash
# `karman verify` of the control design variables (tests/data/control-cylinder.yaml: coarse
# cylinder in a channel, 8 unsteady steps; a time-function entry (amplitude and frequency of the
# rotary oscillation), a per-step entry (the inflow speed at every level, with a smoothness
# penalty) and a parameter entry (viscosity); objective mean drag + control cost; constraints
# mean lift = 0, r.m.s. lift fluctuation <= 0.5 and control power <= 1), through forward runs and the unsteady adjoint, on 1 and
# on 2 ranks:
#  - every entry's Taylor test has rate >= 1.9 (or is linear to round-off) for the objective and
#    every constraint, and so has the one over all variables;
#  - dF/da of the checked variables (of every entry) against fourth-order central differences
#    within 1e-6 relative, for the objective and every constraint;
#  - the design gradients of 1 and 2 ranks agree to 1e-8 relative, by variable name, with the
#    levels' GMRES solves to adjoint.rtol 1e-12 (the ranks' block-Jacobi ILU smoothers differ: at
#    the default 1e-10 the r.m.s. lift's smallest per-step components were 1e-7 apart, measured);
#  - a steady case (tests/data/control-steady.yaml: viscosity, inflow speed and rotation rate as
#    parameter variables, drag with a lift constraint) passes the same checks on 1 and 2 ranks;
#  - with time.dt auto (a time-function and a parameter entry, the lift constraint) the finite
#    differences, run with the first evaluation's steps, match the gradient within 1e-6;
#  - bad input is refused with one error line naming the file and the key: a time-function variable
#    on a constant function, an unknown parameter, lower > upper, a window outside the run, a
#    parameter of the function that it does not have, an r.m.s. constraint over one level.
# usage: control_verify.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
case="$src/tests/data/control-cylinder.yaml"
opts=(--set mesh.cache_dir="$work/cache")
fail() { echo "FAIL: $*"; exit 1; }
"$karman" verify "$case" -o np1 "${opts[@]}" --set adjoint.rtol=1e-12 > np1.log 2>&1 ||
  { grep -E "FAILED|error" np1.log | head -20; fail "verify on 1 rank"; }
mpirun -n 2 --oversubscribe "$karman" verify "$case" -o np2 "${opts[@]}" --set adjoint.rtol=1e-12 > np2.log 2>&1 ||
  { grep -E "FAILED|error" np2.log | head -20; fail "verify on 2 ranks"; }
/usr/bin/python3 - <<'PY' || exit 1
import json
kinds = {"rotation": "time-function", "inflow": "per-step", "fluid": "parameter"}
prefix = {"rotation": "boundaries.cylinder.omega.", "inflow": "boundaries.inlet.velocity[",
          "fluid": "fluid.viscosity"}
functions = ["objective", "mean_lift", "rms_lift", "power"]
runs = {np: json.load(open(f"np{np}/verify.json")) for np in (1, 2)}
for np, v in runs.items():
    assert v["failures"] == 0, (np, v["failures"])
    entries = v["design_entries"]
    assert {e: x["kind"] for e, x in entries.items()} == kinds, entries
    assert entries["inflow"]["variables"] == 8, entries
    assert sorted(v["design_functions"]) == sorted(functions), list(v["design_functions"])
    taylor = v["design_taylor_entries"]
    assert set(taylor) == set(entries) | {"all"}, list(taylor)
    rates = {}
    for entry, fs in taylor.items():
        assert sorted(fs) == sorted(functions), (entry, list(fs))
        for f, t in fs.items():
            if t["linear"]:
                # the power does not depend on viscosity or inflow: zero derivative, zero remainder
                assert max(s["remainder"] for s in t["steps"]) <= 1e-12 * max(
                    abs(v["design_functions"][f]), 1e-300), (np, entry, f, t)
                continue
            assert min(t["rates"]) >= 1.9, (np, entry, f, t["rates"])
            rates.setdefault(entry, []).append(min(t["rates"]))
    for entry in entries:
        assert not taylor[entry]["objective"]["linear"], entry
    d = v["design"]
    checked = {e for e in prefix for name in d if name.startswith(prefix[e])}
    assert checked == set(entries), (checked, list(entries))
    worst = 0.0
    for name, fs in d.items():
        for f, c in fs.items():
            assert c["relative_difference"] <= 1e-6, (np, name, f, c)
            worst = max(worst, c["relative_difference"])
    print(f"{np} rank(s): {len(d)} variables by FD, worst {worst:.1e}; min Taylor rate per entry " +
          ", ".join(f"{e} {min(r):.3f}" for e, r in rates.items()))
g1, g2 = runs[1]["design_gradient"], runs[2]["design_gradient"]
assert sorted(g1) == sorted(g2), "other variables on 2 ranks"
worst = 0.0
for f in functions:
    scale = max(abs(g1[n][f]) for n in g1)
    for n in g1:
        a, b = g1[n][f], g2[n][f]
        assert abs(a - b) <= 1e-8 * abs(a) + 1e-12 * scale, (n, f, a, b)
        if abs(a) > 1e-9 * scale:
            worst = max(worst, abs(a - b) / abs(a))
print(f"{len(g1)} variables x {len(functions)} functions: 1 and 2 ranks agree to {worst:.1e}")
PY

# steady: parameter entries through Newton and the steady adjoint
for np in 1 2; do
  mpirun -n $np --oversubscribe "$karman" verify "$src/tests/data/control-steady.yaml" -o steady$np \
    "${opts[@]}" > steady$np.log 2>&1 || { grep -E "FAILED|error" steady$np.log | head; fail "steady verify on $np rank(s)"; }
  grep -c "boundaries.cylinder.omega  *lift" steady$np.log | grep -q 1 || fail "steady: omega not checked"
done

# bad input: one error line naming the file and the key
refuse() { # NAME SED-EXPRESSION EXPECTED-TEXT [--set ...]
  local name=$1 expr=$2 text=$3
  shift 3
  sed "$expr" "$case" > "$name.yaml"
  sed -i "s|file: control-cylinder.geo|file: $src/tests/data/control-cylinder.geo|" "$name.yaml"
  "$karman" verify "$name.yaml" -o "bad_$name" "${opts[@]}" "$@" > "$name.log" 2>&1 &&
    fail "$name: accepted"
  [ "$(grep -c "^karman: error" "$name.log")" = 1 ] || { cat "$name.log" | tail -5; fail "$name: not one error line"; }
  grep "error" "$name.log" | grep -qF "$name.yaml: $text" ||
    { grep error "$name.log"; fail "$name: the message does not say '$name.yaml: $text'"; }
}
refuse constant 's/omega: {type: sine, amplitude: 0.5, frequency: 2.0, phase: 0.3}/omega: 0.5/' \
  "'design[0].function': 'boundaries.cylinder.omega' is constant (0.5)"
refuse unknown 's/parameters: \[fluid.viscosity\]/parameters: [fluid.viscosty]/' \
  "'design[2].parameters': the case has no parameter 'fluid.viscosty'"
refuse bounds 's/lower: \[5.0e-4\], upper: \[2.0e-3\]/lower: [3.0e-3], upper: [2.0e-3]/' \
  "'design[2].lower' (0.003) is greater than 'design[2].upper' (0.002)"
refuse window 's/window: \[0.08, 0.16\], control_cost/window: [0.08, 0.3], control_cost/' \
  "objective.window must be [t0, t1] with 0 <= t0 < t1 <= time.t_end = 0.16"
refuse knot 's/parameters: \[amplitude, frequency\]/parameters: [amplitude, "knot[2]"]/' \
  "'design[0].parameters': 'knot[2]' is not a parameter of boundaries.cylinder.omega"
refuse count 's/lower: \[1.0\], upper: \[2.0\]/lower: [1.0, 1.0], upper: [2.0]/' \
  "'design[1].lower' has 2 values; expected 1 (for all) or 8 (one per variable)"
refuse spread 's/time: std, window: \[0.08, 0.16\]/time: std, window: [0.15, 0.16]/' \
  "objective.time std: the objective lift is constant over the window, where its square root has no derivative"
# time.dt auto: the first evaluation chooses the steps, the perturbed ones repeat them (so that the
# differences and the gradient belong to one step sequence); a time-function and a parameter entry
# with a lift constraint (per-step entries and the control power need a fixed dt)
sed -e 's|file: control-cylinder.geo|file: '"$src"'/tests/data/control-cylinder.geo|' \
  -e 's|time: {mode: unsteady, dt: 0.02, t_end: 0.16}|time: {mode: unsteady, dt: auto, tolerance: 1.0e-3, dt_initial: 0.002, t_end: 0.16}|' \
  -e '/type: per-step/d' -e '/type: control-power/d' -e '/time: std/d' "$case" > auto.yaml
# (the LU of the exact Jacobian: on these 452 cells 1.8x faster than the multigrid, which the other
# runs here use)
"$karman" verify auto.yaml -o auto "${opts[@]}" --set adjoint.rtol=1e-12 --set solver.linear=direct \
  --set solver.preconditioner_matrix=exact > auto.log 2>&1 ||
  { grep -E "FAILED|error" auto.log | head -20; fail "verify with time.dt auto"; }
grep -q "time.dt auto: [0-9]* steps chosen by the first evaluation; the later ones repeat them" auto.log ||
  fail "dt auto: no fixed step sequence announced"
/usr/bin/python3 - <<'PY' || exit 1
import json
v = json.load(open("auto/verify.json"))
assert v["failures"] == 0, v["failures"]
worst = max(c["relative_difference"] for fs in v["design"].values() for c in fs.values())
assert worst <= 1e-6, worst
print(f"dt auto: {len(v['design'])} variables by FD with the first evaluation's steps, worst {worst:.1e}")
PY
echo "control_verify: all checks passed"
