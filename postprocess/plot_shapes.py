"""Picture of the shapes of a karman optimize campaign: the initial design, a few in between and
the optimized one, drawn from OUTDIR/shapes/*.csv (written by karman optimize) with matplotlib.

usage: /usr/bin/python3 postprocess/plot_shapes.py OUTDIR [OUTDIR2 ...] [-o OUT.png]
           [--walls W1,W2] [--evaluations 0,4,9] [--between N] [--titles T1,T2]

One panel per OUTDIR.  The walls drawn are those the optimization moved (unless --walls names
them); --evaluations picks the evaluations to draw (default: the first, N = 3 evenly spaced
successful ones in between, and the optimized design from shapes/optimized.csv).  3D walls are
cut by the plane z = const through the middle of the walls.  Writes OUTDIR/shapes.png unless
-o is given.
"""
import argparse
import csv
import glob
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402


def read_shape(path):
    """{wall: [face vertex lists [(x, y, z), ...]]} in file order."""
    walls = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            faces = walls.setdefault(row["wall"], {})
            faces.setdefault(int(row["face"]), []).append(
                (float(row["x"]), float(row["y"]), float(row["z"])))
    return {w: [faces[k] for k in sorted(faces)] for w, faces in walls.items()}


def segments(faces, z_cut):
    """2D segments of the faces: the faces themselves (2D, z = 0) or their cut by z = z_cut."""
    out = []
    for face in faces:
        if len(face) == 2:
            out.append([face[0][:2], face[1][:2]])
            continue
        cut = []
        for a, b in zip(face, face[1:] + face[:1]):
            da, db = a[2] - z_cut, b[2] - z_cut
            if (da < 0) != (db < 0):
                t = da / (da - db)
                cut.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
        if len(cut) == 2:
            out.append(cut)
    return out


def moved_walls(first, last):
    moved = []
    for wall, faces in first.items():
        if wall not in last or len(last[wall]) != len(faces):
            continue
        size = max(max(abs(c) for v in f for c in v) for f in faces) or 1.0
        shift = max(max(abs(p - q) for p, q in zip(u, v))
                    for fa, fb in zip(faces, last[wall]) for u, v in zip(fa, fb))
        if shift > 1e-12 * size:
            moved.append(wall)
    return moved


def objectives(outdir):
    path = os.path.join(outdir, "optimization.csv")
    if not os.path.exists(path):
        return {}
    return {int(r["evaluation"]): float(r["objective"])
            for r in csv.DictReader(open(path)) if r["ok"] == "1"}


def panel(ax, outdir, args):
    files = {int(re.search(r"shape_(\d+)\.csv$", p).group(1)): p
             for p in glob.glob(os.path.join(outdir, "shapes", "shape_*.csv"))}
    if not files:
        raise SystemExit(f"{outdir}: no shapes/shape_*.csv (written by karman optimize)")
    optimized = os.path.join(outdir, "shapes", "optimized.csv")
    J = objectives(outdir)
    first = min(files)
    if args.evaluations:
        picks = [int(k) for k in args.evaluations.split(",")]
        missing = [k for k in picks if k not in files]
        if missing:
            raise SystemExit(f"{outdir}: no shape of evaluation(s) {missing} "
                             f"(have {min(files)}..{max(files)})")
    else:
        good = sorted(k for k in files if k in J or not J)
        inner = good[1:]
        n = min(args.between, len(inner))
        picks = [first] + [inner[round((i + 1) * len(inner) / (n + 1)) - 1] for i in range(n)]
        picks = sorted(set(picks))
    shapes = [(k, read_shape(files[k])) for k in picks]
    if os.path.exists(optimized):
        shapes.append(("optimized", read_shape(optimized)))
    walls = args.walls.split(",") if args.walls else moved_walls(shapes[0][1], shapes[-1][1])
    if not walls:
        walls = sorted(shapes[0][1])
    for w in walls:
        if w not in shapes[0][1]:
            raise SystemExit(f"{outdir}: no wall '{w}' in the shapes (have {sorted(shapes[0][1])})")
    zs = [v[2] for w in walls for f in shapes[0][1][w] for v in f]
    z_cut = 0.5 * (min(zs) + max(zs))
    cmap = plt.get_cmap("viridis")
    xs, ys = [], []
    for i, (k, shape) in enumerate(shapes):
        segs = [s for w in walls for s in segments(shape[w], z_cut)]
        xs += [p[0] for s in segs for p in s]
        ys += [p[1] for s in segs for p in s]
        if k == first:
            style = dict(colors="0.4", linestyles="--", linewidths=1.2)
        elif k == "optimized":
            style = dict(colors="C3", linewidths=2.0)
        else:
            style = dict(colors=[cmap(i / max(1, len(shapes) - 1))], linewidths=0.9)
        label = "optimized" if k == "optimized" else f"evaluation {k}"
        if k == "optimized" and os.path.exists(os.path.join(outdir, "summary.json")):
            import json
            label += f" (J {json.load(open(os.path.join(outdir, 'summary.json')))['objective']:.5g})"
        elif k in J:
            label += f" (J {J[k]:.5g})"
        ax.add_collection(LineCollection(segs, label=label, **style))
    pad = 0.08 * max(max(xs) - min(xs), max(ys) - min(ys))
    ax.set_xlim(min(xs) - pad, max(xs) + pad)
    ax.set_ylim(min(ys) - pad, max(ys) + pad)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(fontsize=8, loc="best")
    cut = "" if all(len(f) == 2 for w in walls for f in shapes[0][1][w]) else f", cut z = {z_cut:.4g}"
    return ", ".join(walls) + cut


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("outdirs", nargs="+")
    ap.add_argument("-o", "--output")
    ap.add_argument("--walls")
    ap.add_argument("--evaluations")
    ap.add_argument("--between", type=int, default=3)
    ap.add_argument("--titles")
    args = ap.parse_args()
    titles = args.titles.split(",") if args.titles else args.outdirs
    fig, axes = plt.subplots(1, len(args.outdirs), figsize=(6 * len(args.outdirs), 5), squeeze=False)
    for ax, outdir, title in zip(axes[0], args.outdirs, titles):
        walls = panel(ax, outdir, args)
        ax.set_title(f"{title}: {walls}", fontsize=10)
    fig.tight_layout()
    png = args.output or os.path.join(args.outdirs[0], "shapes.png")
    fig.savefig(png, dpi=130)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
