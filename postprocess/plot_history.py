"""Plot a karman force history (OUTDIR/forces.csv) with matplotlib.

usage: /usr/bin/python3 postprocess/plot_history.py OUTDIR [OUT.png]

Steady runs: residual norms and c_D, c_L per Newton iteration.  Unsteady runs: c_D and
c_L over time.  Writes OUTDIR/history.png unless OUT.png is given.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    png = sys.argv[2] if len(sys.argv) > 2 else os.path.join(outdir, "history.png")
    rows = list(csv.DictReader(open(os.path.join(outdir, "forces.csv"))))
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    if "iteration" in rows[0]:
        x = [int(r["iteration"]) for r in rows]
        for key in ("residual", "residual_continuity", "residual_momentum"):
            axes[0].semilogy(x, [max(float(r[key]), 1e-300) for r in rows], "o-", label=key.replace("_", " "))
        axes[0].set_ylabel("residual norm")
        axes[1].set_xlabel("Newton iteration")
    else:
        x = [float(r["time"]) for r in rows]
        axes[0].plot(x, [float(r["cd"]) for r in rows], label="c_D")
        axes[0].set_ylabel("c_D")
        axes[1].set_xlabel("time")
    axes[1].plot(x, [float(r["cl"]) for r in rows], label="c_L", color="C3")
    axes[1].set_ylabel("c_L")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print("wrote", png)


if __name__ == "__main__":
    main()
