#!/usr/bin/env bash
# Taylor-Couette flow between a rotating inner cylinder (r1 = 0.5, omega = 1) and a fixed
# outer one (r2 = 1), nu = 0.1, an exact Navier-Stokes solution:
#   u_theta = A r + B / r,  B = omega r1^2 r2^2 / (r2^2 - r1^2),  A = -B / r2^2,
#   torque on the inner cylinder per unit depth M = -4 pi mu B   (c_M = 2 M here).
# Checks, on O-grid levels 1-3 (1 rank) and level 2 on 2 ranks:
#  - c_M converges to the exact value at order >= 1.9 and is within 2e-3 of it on level 3
#    (the torque needs the symmetric stress on the rotating wall, not only mu du/dn);
#  - the cell velocities converge to the exact u_theta at order >= 1.9 (max norm);
#  - 1 and 2 ranks give the same c_M to 1e-10.
# usage: couette.sh KARMAN SOURCE_DIR WORK_DIR
set -eu
karman=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
cat > couette.yaml <<YAML
mesh: {file: $src/tests/data/annulus.geo, level: 1, cache_dir: $work/cache}
fluid: {density: 1.0, viscosity: 0.1}
reference: {velocity: 1.0, length: 1.0}
boundaries:
  inner: {type: wall, omega: 1.0, center: [0, 0]}
  outer: {type: wall}
objective: {type: moment, walls: [inner]}
YAML
for l in 1 2 3; do "$karman" run couette.yaml -o L$l --set mesh.level=$l > L$l.log; done
mpirun -n 2 --oversubscribe "$karman" run couette.yaml -o L2np2 --set mesh.level=2 > L2np2.log
/usr/bin/python3 - <<'PY'
import json, math
import h5py, numpy as np
r1, r2, omega, mu = 0.5, 1.0, 1.0, 0.1
B = omega * r1**2 * r2**2 / (r2**2 - r1**2)
A = -B / r2**2
cm_exact = 2 * (-4 * math.pi * mu * B)
cm, uerr = [], []
for l in (1, 2, 3):
    s = json.load(open(f"L{l}/summary.json"))
    assert s["converged"], l
    cm.append(s["cm"])
    with h5py.File(f"L{l}/flow.h5", "r") as f:
        V, C, u = f["mesh/vertices"][:], f["mesh/cells"][:], f["fields/velocity"][:]
    x = np.array([V[c[c >= 0]].mean(axis=0) for c in C])  # quad centres (vertex mean)
    r = np.hypot(x[:, 0], x[:, 1])
    ut = (-x[:, 1] * u[:, 0] + x[:, 0] * u[:, 1]) / r
    uerr.append(np.abs(ut - (A * r + B / r)).max())
    print(f"level {l}: c_M {cm[-1]:.10f} (exact {cm_exact:.10f}, error {cm[-1] - cm_exact:+.2e}), "
          f"max |u_theta error| {uerr[-1]:.2e}")
for k in range(2):
    oc = math.log2(abs(cm[k] - cm_exact) / abs(cm[k + 1] - cm_exact))
    ou = math.log2(uerr[k] / uerr[k + 1])
    print(f"order levels {k + 1}-{k + 2}: torque {oc:.2f}, velocity {ou:.2f}")
    assert oc >= 1.9 and ou >= 1.9, (oc, ou)
assert abs(cm[2] - cm_exact) <= 2e-3 * abs(cm_exact), cm
p = json.load(open("L2np2/summary.json"))["cm"]
print(f"level 2 on 2 ranks: c_M {p:.12f}, 1 rank {cm[1]:.12f}")
assert abs(p - cm[1]) <= 1e-10 * abs(cm[1])
PY
