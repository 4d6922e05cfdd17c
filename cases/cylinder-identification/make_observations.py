#!/usr/bin/python3
"""Observations for probe matching from a karman run's forces.csv.

usage: make_observations.py FORCES_CSV OUT_CSV [--noise REL] [--seed N] [--t0 T]

Writes the rows t, p, u, v of every probe (the columns probeI_p, probeI_u, probeI_v of
forces.csv; the format of objective.observations_file) for the steps with t >= T (default: every
step after the initial state).  With --noise REL, Gaussian noise of standard deviation REL times
the root mean square of each column over the kept rows is added (seeded: the same file every
time).
"""
import argparse
import csv

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("forces")
    ap.add_argument("out")
    ap.add_argument("--noise", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--t0", type=float, default=1e-12)
    a = ap.parse_args()
    with open(a.forces) as f:
        rows = list(csv.reader(f))
    head, data = rows[0], np.array([[float(x) for x in r] for r in rows[1:]])
    cols = [i for i, h in enumerate(head) if h.startswith("probe")]
    if not cols:
        raise SystemExit(f"{a.forces}: no probe columns (give output.probes in the case)")
    t = data[:, head.index("time")]
    keep = t >= a.t0
    values = data[keep][:, cols]
    if a.noise > 0:
        rng = np.random.default_rng(a.seed)
        rms = np.sqrt(np.mean(values**2, axis=0))
        values = values + a.noise * rms * rng.standard_normal(values.shape)
    with open(a.out, "w") as f:
        f.write("# t, then p, u, v of every probe (" + ", ".join(head[i] for i in cols) + ")")
        f.write(f"; noise {a.noise:g} of each column's rms, seed {a.seed}\n")
        for ti, row in zip(t[keep], values):
            f.write(",".join(f"{x:.15e}" for x in [ti, *row]) + "\n")


if __name__ == "__main__":
    main()
