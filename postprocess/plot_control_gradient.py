"""Plot the per-step control gradient of an unsteady adjoint (OUTDIR/control_gradient.csv).

usage: /usr/bin/python3 postprocess/plot_control_gradient.py OUTDIR PARAMETER [OUT.png]

PARAMETER is a column name without the dJ/d( ) wrapper, e.g. boundaries.cylinder.omega.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    outdir, name = sys.argv[1], sys.argv[2]
    png = sys.argv[3] if len(sys.argv) > 3 else os.path.join(outdir, "control_gradient.png")
    rows = list(csv.DictReader(open(os.path.join(outdir, "control_gradient.csv"))))
    key = "dJ/d(%s)" % name
    if key not in rows[0]:
        sys.exit("no column %s in control_gradient.csv (have: %s)" % (key, ", ".join(rows[0].keys())))
    t = [float(r["time"]) for r in rows]
    g = [float(r[key]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.plot(t, g, "-", color="C0")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel("time")
    ax.set_ylabel(key + " at t^n")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print("wrote", png)


if __name__ == "__main__":
    main()
