"""Per-period extrema of the lift (and drag) of unsteady karman runs, side by side.

usage: /usr/bin/python3 postprocess/lift_peaks.py [--from T] OUTDIR [OUTDIR ...]

For each run, every local maximum and minimum of c_L (and maximum of c_D) after time T
(default 0), each located by the parabola through the three samples around it, so that
the value does not depend on where the time steps fall.  With two or more runs the
extrema are matched by period (nearest time) and the differences to the first run are
printed: e.g. two runs forked from the same checkpoint with one setting changed show
how that setting moves the limit cycle, period by period.
"""
import csv
import os
import sys


def extrema(rows, key, t0, sign):
    """(t, value) of the local maxima (sign 1) or minima (sign -1) of `key` after t0"""
    out = []
    for i in range(1, len(rows) - 1):
        t = float(rows[i]["time"])
        a, b, c = (sign * float(rows[j][key]) for j in (i - 1, i, i + 1))
        if t >= t0 and a < b >= c:
            curv = 2 * b - a - c
            out.append((t, sign * (b + (c - a) ** 2 / (8 * curv) if curv > 0 else b)))
    return out


def main():
    args = sys.argv[1:]
    t0 = 0.0
    if len(args) >= 2 and args[0] == "--from":
        t0, args = float(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    runs = []
    for d in args:
        path = os.path.join(d, "forces.csv")
        if not os.path.exists(path):
            sys.exit(f"lift_peaks: no force history {path}")
        rows = list(csv.DictReader(open(path)))
        if not rows or "time" not in rows[0]:
            sys.exit(f"lift_peaks: {path} is not an unsteady force history (no time column)")
        runs.append({"cl max": extrema(rows, "cl", t0, 1), "cl min": extrema(rows, "cl", t0, -1),
                     "cd max": extrema(rows, "cd", t0, 1)})
    for i, d in enumerate(args):
        print(f"[{i}] {d}")
    for kind in ("cl max", "cl min", "cd max"):
        print(f"\n{kind}: time, value per run" + ("; difference to [0]" if len(runs) > 1 else ""))
        for t, v in runs[0][kind]:
            line, diffs = f"  t {t:7.4f}  [0] {v:+.5f}", []
            for k, r in enumerate(runs[1:], 1):
                near = min(r[kind], key=lambda e: abs(e[0] - t), default=None)
                if near is None or abs(near[0] - t) > 0.05:  # no extremum of that period
                    continue
                line += f"  [{k}] {near[1]:+.5f}"
                diffs.append(f"{near[1] - v:+.5f}")
            print(line + ("  diff " + " ".join(diffs) if diffs else ""))


if __name__ == "__main__":
    main()
