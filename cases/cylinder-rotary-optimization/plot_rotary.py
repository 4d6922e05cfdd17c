#!/usr/bin/python3
"""Figures and tables of the rotary-oscillation optimization at one Reynolds number (run.sh):

  OUT/history.png   objective per evaluation of the sine (A, f) optimizations (every start) and
                    of the per-step one, and the paths of (A, f)
  OUT/omega.png     omega(t): the start of the sine search, the best sine, the free per-step
                    control
  OUT/drag.png      c_D(t) and c_L(t) uncontrolled, with the best sine and with the per-step control
  OUT/spectra.png   amplitude spectra of c_L and c_D over the objective's window
  OUT/results.md    the table of the README (uncontrolled and controlled means, reductions, A, f)

usage: plot_rotary.py OUT RE   (OUT = out/cylinder-rotary-optimization/reRE)
"""
import csv
import glob
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

out, re = sys.argv[1], sys.argv[2]
T0, T1 = 8.0, 24.0  # the objective's window (sine.yaml, perstep.yaml)


def table(path):
    return list(csv.DictReader(open(path)))


def column(rows, key):
    return np.array([float(r[key]) for r in rows])


def forces(run):
    rows = table(f"{out}/{run}/forces.csv")
    return column(rows, "time"), column(rows, "cd"), column(rows, "cl")


def hann_mean(t, y):
    """The Hann-weighted mean over [T0, T1] (objective.weighting: hann)."""
    k = (t >= T0 - 1e-9) & (t <= T1 + 1e-9)
    w = np.sin(np.pi * (t[k] - t[k][0]) / (t[k][-1] - t[k][0])) ** 2
    return float(np.sum(w * y[k]) / np.sum(w))


def strouhal(t, cl, t0):
    """Lift frequency from the zero up-crossings after t0."""
    k = np.where((t[1:] >= t0) & (cl[:-1] < 0) & (cl[1:] >= 0))[0]
    z = t[k] + (t[k + 1] - t[k]) * (-cl[k]) / (cl[k + 1] - cl[k])
    return (len(z) - 1) / (z[-1] - z[0]) if len(z) > 1 else float("nan")


KA, KF = "boundaries.cylinder.omega.amplitude", "boundaries.cylinder.omega.frequency"
sine = json.load(open(f"{out}/sine-best/summary.json"))  # the start with the lowest J (run.sh)
# every start of the sine search (run.sh): (directory name, summary, label)
starts = []
for path in sorted(glob.glob(f"{out}/sine-A*-f*/summary.json")):
    r = json.load(open(path))
    x0 = r["initial_design"]
    starts.append((os.path.basename(os.path.dirname(path)), r, f"({x0[KA]:g}, {x0[KF]:g})"))
perstep = json.load(open(f"{out}/perstep/summary.json"))
spin = json.load(open(f"{out}/spinup/summary.json"))
A, f = sine["design"][KA], sine["design"][KF]
A0, f0 = sine["initial_design"][KA], sine["initial_design"][KF]

# history
hp = table(f"{out}/perstep/optimization.csv")
fig, ax = plt.subplots(1, 2, figsize=(11, 4))
for k, (run, r, start) in enumerate(starts):
    hs, ds = table(f"{out}/{run}/optimization.csv"), table(f"{out}/{run}/designs.csv")
    x0, name = r["initial_design"], f"sine from {start}"
    ax[0].plot(column(hs, "evaluation"), column(hs, "objective"), "o-", label=name)
    ax[1].plot(column(ds, KF), column(ds, KA), "o-", label=name)
    ax[1].plot([x0[KF]], [x0[KA]], "k^", label="starts" if k == 0 else None)
ax[0].plot(column(hp, "evaluation"), column(hp, "objective"), "s-",
           label="per-step omega(t^n) from the best sine\n(with its smoothness penalty)")
ax[0].set_xlabel("evaluation"), ax[0].set_ylabel("J = mean c_D + control cost")
ax[0].legend(fontsize=8), ax[0].grid(alpha=0.3)
ax[1].plot([f], [A], "r*", ms=14, label="best optimum")
ax[1].set_xlabel("forcing frequency f (St_f = f D / U)"), ax[1].set_ylabel("amplitude A [U/D]")
ax[1].legend(fontsize=8), ax[1].grid(alpha=0.3)
fig.suptitle(f"Re = {re}: optimization history")
fig.tight_layout()
fig.savefig(f"{out}/history.png", dpi=120)

# omega(t)
c = table(f"{out}/perstep/controls.csv")
tc = column(c, "t")
fig, ax = plt.subplots(figsize=(10, 3.6))
ax.plot(tc, A0 * np.sin(2 * np.pi * f0 * tc), color="0.6", lw=1, label=f"start: A {A0:g}, f {f0:g}")
ax.plot(tc, column(c, "boundaries.cylinder.omega.start"), "b", label=f"best sine: A {A:.3f}, f {f:.3f}")
ax.plot(tc, column(c, "boundaries.cylinder.omega.best"), "r", label="free per-step control")
ax.axvspan(T0, T1, color="y", alpha=0.1, label="objective window")
ax.set_xlabel("t [D/U]"), ax.set_ylabel("omega [U/D]"), ax.legend(ncol=2, fontsize=8)
ax.set_title(f"Re = {re}: cylinder rotation rate")
fig.tight_layout()
fig.savefig(f"{out}/omega.png", dpi=120)

# drag and lift histories, spectra
runs = [("replay-none", "uncontrolled", "k"), ("replay-sine", "best sine", "b"),
        ("replay-perstep", "per-step control", "r")]
hist = {run: forces(run) for run, _, _ in runs}
fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
for run, label, color in runs:
    t, cd, cl = hist[run]
    ax[0].plot(t, cd, color=color, lw=1, label=label)
    ax[1].plot(t, cl, color=color, lw=1)
for a in ax:
    a.axvspan(T0, T1, color="y", alpha=0.1)
    a.grid(alpha=0.3)
ax[0].set_ylabel("c_D"), ax[1].set_ylabel("c_L"), ax[1].set_xlabel("t [D/U]")
ax[0].legend(fontsize=8)
ax[0].set_title(f"Re = {re}: forces (objective window shaded)")
fig.tight_layout()
fig.savefig(f"{out}/drag.png", dpi=120)

fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
for run, label, color in runs:
    t, cd, cl = hist[run]
    k = (t >= T0) & (t <= T1)
    w = np.hanning(k.sum())
    freq = np.fft.rfftfreq(k.sum(), d=t[1] - t[0])
    for i, y in enumerate((cl[k], cd[k])):
        amp = 2 * np.abs(np.fft.rfft((y - y.mean()) * w)) / w.sum()
        ax[i].semilogy(freq, amp + 1e-8, color=color, lw=1, label=label)
st0 = spin["strouhal"]
for i, name in enumerate(("c_L", "c_D")):
    ax[i].axvline(st0, color="k", ls=":", lw=0.8)
    ax[i].axvline(f, color="b", ls="--", lw=0.8)
    ax[i].set_xlim(0, 2.5), ax[i].set_ylim(1e-5, 2)
    ax[i].set_xlabel("frequency f D / U"), ax[i].set_ylabel(f"amplitude of {name}")
    ax[i].grid(alpha=0.3)
ax[0].legend(fontsize=8)
fig.suptitle(f"Re = {re}: spectra over t in [{T0:g}, {T1:g}] (dotted: natural St, dashed: best f)")
fig.tight_layout()
fig.savefig(f"{out}/spectra.png", dpi=120)

# table
t, cd, cl = hist["replay-none"]
base = hann_mean(t, cd)
rows = ["| run | J | mean c_D (Hann, [8, 24]) | drag change | c_L r.m.s. | mean omega^2 | lift frequency |",
        "|---|---|---|---|---|---|---|"]


def row(label, t, cd, cl, om2, J=None, cost=0.0):
    """A table row; J: the optimizer's objective, else the Hann mean of c_D + cost."""
    k = (t >= T0) & (t <= T1)
    m = hann_mean(t, cd)
    J = m + cost if J is None else J
    rms = math.sqrt(float(np.mean((cl[k] - cl[k].mean()) ** 2)))
    return (f"| {label} | {J:.5f} | {m:.5f} | {100 * (m - base) / base:+.1f} % | {rms:.4f} | "
            f"{om2:.3f} | {strouhal(t, cl, T0):.4f} |")


om = column(c, "boundaries.cylinder.omega.best")
om2_perstep = float(np.mean(om[(tc >= T0) & (tc <= T1)] ** 2))
rows.append(row("uncontrolled", *hist["replay-none"], 0.0))
rows.append(row("best sine", *hist["replay-sine"], A * A / 2, J=sine["objective"]))
rows.append(row("per-step control", *hist["replay-perstep"], om2_perstep, J=perstep["J"]))
# the probes (run.sh): the objective of a strong, fast sine from its forces (the control cost
# beta sum_n dt omega_n^2 over the whole run, as in the objective)
for probe in sorted(glob.glob(f"{out}/probe-A*-f*/forces.csv")):
    name = os.path.basename(os.path.dirname(probe))
    Ap, fp = (float(v) for v in name[len("probe-A"):].split("-f"))
    t, cd, cl = forces(name)
    tn = t[t > 1e-9]
    cost = 1e-4 * float(np.sum((tn[1:] - tn[:-1]).mean() * (Ap * np.sin(2 * np.pi * fp * tn)) ** 2))
    rows.append(row(f"sine A {Ap:g}, f {fp:g}", t, cd, cl, Ap * Ap / 2, cost=cost))
rows += ["", "| sine start (A, f) | optimum A | optimum f | J start | J optimum | evaluations | stop |",
         "|---|---|---|---|---|---|---|"]
for run, r, start in starts:
    x = r["design"]
    rows.append(f"| {start} | {x[KA]:.4f} | {x[KF]:.4f} | {r['initial_objective']:.5f} "
                f"| {r['objective']:.5f} | {r['evaluations']} | {r['status']} |")
rows += ["", f"best sine: A = {A:.4f}, f = {f:.4f} (start A = {A0:g}, f = {f0:g}); per-step from it: "
         f"{perstep['evaluations']} evaluations, {perstep['status']}, J {float(hp[0]['J']):.5f} -> "
         f"{perstep['J']:.5f} (smoothness penalty {perstep['penalty']:.5f} "
         f"not in J)"]


def evaluations(run, title, summary):
    """Every evaluation of one campaign: design, objective, gradient, time split, memory."""
    h, ds = table(f"{out}/{run}/optimization.csv"), table(f"{out}/{run}/designs.csv")
    lines = ["", f"### {title}", "",
             "| evaluation | design | J (+ penalty) | gradient norm | forward [s] | adjoint [s] | peak memory [MiB] |",
             "|---|---|---|---|---|---|---|"]
    for r, d in zip(h, ds):
        x = [float(v) for k, v in d.items() if k != "evaluation"]
        design = ", ".join(f"{v:.5f}" for v in x) if len(x) <= 4 else f"{len(x)} values"
        lines.append(f"| {r['evaluation']} | {design} | {float(r['objective']):.6f} "
                     f"| {float(r['gradient_norm']):.3g} | {float(r['forward_time']):.0f} "
                     f"| {float(r['adjoint_time']):.0f} | {float(r['forward_memory_mib']):.0f} |")
    return lines + ["", f"status: {summary['status']}, {summary['evaluations']} evaluations"]


for run, r, start in starts:
    rows += evaluations(run, f"sine (A, f), SLSQP from {start}", r)
rows += evaluations("perstep", "per-step omega(t^n), L-BFGS from the best sine", perstep)
rows += ["", "Peak memory: the process high-water mark (sum over ranks) when the evaluation ended."]
open(f"{out}/results.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
