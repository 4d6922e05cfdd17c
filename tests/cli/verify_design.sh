#!/usr/bin/env bash
# `karman verify` of the design gradients (tests/data/naca0012-design.yaml: NACA 0012, Re 200,
# 2 degrees; every kind of design variable at once: ffd, hicks-henne, rigid angle and
# translation, surface-normal, radial; constraints area, centroid x and y, thickness, lift), through the
# mesh deformation and the re-solves, on 1 and on 2 ranks:
#  - every design entry's Taylor test has rate >= 1.9 (or is linear to round-off) for the
#    objective and for every constraint, and so has the one over all variables;
#  - dF/da of every checked variable (variables of every entry) against fourth-order central
#    differences within 1e-6 relative, for the objective and every constraint;
#  - the design gradients (every variable, every function) of 1 and 2 ranks agree to 1e-8
#    relative, by variable name.
# usage: verify_design.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
case="$src/tests/data/naca0012-design.yaml"
opts=(--set mesh.cache_dir="$work/cache")
fail() { echo "FAIL: $*"; exit 1; }
"$karman" verify "$case" -o np1 "${opts[@]}" > np1.log 2>&1 ||
  { grep -E "FAILED|error" np1.log | head -20; fail "verify on 1 rank"; }
mpirun -n 2 --oversubscribe "$karman" verify "$case" -o np2 "${opts[@]}" > np2.log 2>&1 ||
  { grep -E "FAILED|error" np2.log | head -20; fail "verify on 2 ranks"; }
/usr/bin/python3 - <<'PY' || exit 1
import json, math
kinds = {"ffd", "hicks-henne", "rigid", "surface-normal", "radial"}
functions = ["objective", "area", "centroid_x", "centroid_y", "thickness", "lift"]
runs = {np: json.load(open(f"np{np}/verify.json")) for np in (1, 2)}
for np, v in runs.items():
    assert v["failures"] == 0, (np, v["failures"])
    entries = v["design_entries"]
    assert {e["kind"] for e in entries.values()} == kinds, entries
    assert sorted(v["design_functions"]) == sorted(functions), list(v["design_functions"])
    # Taylor tests: every entry (and all variables), every function
    taylor = v["design_taylor_entries"]
    assert set(taylor) == set(entries) | {"all"}, list(taylor)
    rates = {}
    for entry, fs in taylor.items():
        assert sorted(fs) == sorted(functions), (entry, list(fs))
        for f, t in fs.items():
            if t["linear"]:
                r = max(s["remainder"] for s in t["steps"])
                assert r <= 1e-12 * max(abs(v["design_functions"][f]), 1e-300) + \
                    1e-12 * abs(4e-3 * t["directional_derivative"]), (np, entry, f, t)
                continue
            assert min(t["rates"]) >= 1.9, (np, entry, f, t["rates"])
            rates.setdefault(entry, []).append(min(t["rates"]))
    # every entry has a nonlinear (really tested) function, the objective at least
    for entry in entries:
        assert not taylor[entry]["objective"]["linear"], entry
    # finite differences: variables of every entry, every function, 1e-6
    d = v["design"]
    checked = {name.split(".")[0] for name in d}
    assert checked == set(entries), (checked, list(entries))
    worst = {}
    for name, fs in d.items():
        assert sorted(fs) == sorted(functions), (name, list(fs))
        for f, c in fs.items():
            assert c["relative_difference"] <= 1e-6, (np, name, f, c)
            e = name.split(".")[0]
            worst[e] = max(worst.get(e, 0.0), c["relative_difference"])
    print(f"{np} rank(s): " + "; ".join(
        f"{e} ({entries[e]['kind']}, {entries[e]['variables']} variables): min rate "
        f"{min(rates[e]):.3f}, FD {worst[e]:.1e}" for e in entries) +
        f"; all variables: min rate {min(rates['all']):.3f}")
# 1 vs 2 ranks, by variable name: 1e-8 relative (entries that vanish analytically: 1e-12 of the
# function's largest)
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
print(f"{len(g1)} variables x {len(functions)} functions: 1 and 2 ranks agree to {worst:.1e} (relative)")
PY
echo "verify_design: all checks passed"
