#!/usr/bin/python3
"""Figures and table of the identification case: history of the misfit and of the two
parameters (identification.png) and a table of the results (identification.md).

usage: plot_identification.py OUT   (the folder of run.sh)
"""
import csv
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

out = sys.argv[1]
truth = {"fluid.viscosity": 1e-3, "boundaries.inlet.velocity": 1.5}
fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
rows = ["| run | parameter | start | identified | true | error | standard deviation |",
        "|---|---|---|---|---|---|---|"]
for run in ("clean", "noisy"):
    hist = list(csv.DictReader(open(f"{out}/{run}/optimization.csv")))
    des = list(csv.DictReader(open(f"{out}/{run}/designs.csv")))
    k = [int(r["evaluation"]) for r in hist]
    ax[0].semilogy(k, [float(r["objective"]) for r in hist], "o-", label=run)
    for i, name in enumerate(truth):
        ax[i + 1].plot(k, [float(d[name]) / truth[name] for d in des], "o-", label=run)
    s = json.load(open(f"{out}/{run}/summary.json"))
    for name, value in truth.items():
        got = s["design"][name]
        sd = s["identification"]["parameters"][name]["standard_deviation"]
        rows.append(f"| {run} | {name} | {s['initial_design'][name]:.6g} | {got:.10g} | {value:g} | "
                    f"{abs(got - value) / value:.2e} | {sd:.2e} |")
    rows.append(f"| {run} | misfit | | {s['identification']['misfit']:.4e} | | | "
                f"{s['evaluations']} evaluations, {s['status']} |")
ax[0].set_xlabel("evaluation"), ax[0].set_ylabel("misfit J")
for i, name in enumerate(truth):
    ax[i + 1].axhline(1.0, color="k", lw=0.5)
    ax[i + 1].set_xlabel("evaluation"), ax[i + 1].set_ylabel(f"{name} / true value")
for a in ax:
    a.legend()
fig.tight_layout()
fig.savefig(f"{out}/identification.png", dpi=120)
open(f"{out}/identification.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
