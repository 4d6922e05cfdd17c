#!/usr/bin/env python3
"""System identification from Python: the viscosity of DFG 2D-1 (coarse mesh) from velocity
probes, by L-BFGS on the probe misfit with karman's exact adjoint gradient.  The "measured"
data are karman's own probes at nu = 1.3e-3 with 1 % noise; the search starts at 1e-3.
    PYTHONPATH=build/release/python /usr/bin/python3 postprocess/identify_viscosity.py"""
import numpy as np, scipy.optimize, karman

NU = "fluid.viscosity"
probes = [[0.3, 0.2], [0.45, 0.25], [0.6, 0.15], [0.8, 0.2]]
sim = karman.Simulation(karman.Case.load("cases/dfg-2d1/case.yaml", {"mesh.level": 0, "output.probes": probes}))
sim.set_parameters({NU: 1.3e-3}); sim.solve()
data = sim.forces()["probes"] * (1 + 0.01 * np.random.default_rng(0).standard_normal((len(probes), 3)))
misfit = {"type": "probe-match", "probes": probes, "observed": data, "component_weights": [0, 1, 1]}

def J(x):  # x: viscosity in units of 1e-3
    sim.set_parameters({NU: x[0] * 1e-3}); sim.solve(warm_start=True)
    g = sim.gradient(misfit)
    return g["J"], np.array([g["gradient"][NU] * 1e-3])

r = scipy.optimize.minimize(J, [1.0], jac=True, method="L-BFGS-B", bounds=[(0.3, 3.0)])
if karman.rank() == 0:
    print(f"identified nu = {r.x[0] * 1e-3:.6g} (true 1.3e-3), misfit {r.fun:.3e}, {r.nfev} solves")
