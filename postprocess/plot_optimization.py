"""Plot a karman optimize campaign (OUTDIR/optimization.csv) with matplotlib.

usage: /usr/bin/python3 postprocess/plot_optimization.py OUTDIR [OUT.png]

Top: the objective of every evaluation (failed designs marked at the bottom), bottom: each
constraint relative to its bound (from OUTDIR/summary.json), |C/bound - 1| on a log scale.
Writes OUTDIR/optimization.png unless OUT.png is given.
"""
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    png = sys.argv[2] if len(sys.argv) > 2 else os.path.join(outdir, "optimization.png")
    rows = list(csv.DictReader(open(os.path.join(outdir, "optimization.csv"))))
    summary = json.load(open(os.path.join(outdir, "summary.json")))
    bounds = {k: v["bound"] for k, v in summary.get("constraints", {}).items()}
    ok = [r for r in rows if r["ok"] == "1"]
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    axes[0].plot([int(r["evaluation"]) for r in ok], [float(r["objective"]) for r in ok], "o-")
    failed = [int(r["evaluation"]) for r in rows if r["ok"] != "1"]
    if failed:
        y0 = min(float(r["objective"]) for r in ok)
        axes[0].plot(failed, [y0] * len(failed), "rx", label="failed design (backed off)")
        axes[0].legend()
    axes[0].set_ylabel("objective")
    axes[0].set_title(f"karman optimize: {summary['status']}, best {summary['objective']:.6g}")
    for name, bound in bounds.items():
        scale = abs(bound) if bound != 0 else 1.0
        axes[1].semilogy([int(r["evaluation"]) for r in ok],
                         [max(abs(float(r[name]) - bound) / scale, 1e-16) for r in ok], "o-", label=name)
    axes[1].set_ylabel("|C - bound| / |bound|")
    axes[1].set_xlabel("evaluation")
    if bounds:
        axes[1].legend()
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"plot_optimization: {png}")


if __name__ == "__main__":
    main()
