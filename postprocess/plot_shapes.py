"""Picture of the shapes of a karman optimize campaign: the initial design, a few in between and
the optimized one, drawn from OUTDIR/shapes/*.csv (written by karman optimize) with matplotlib.

usage: /usr/bin/python3 postprocess/plot_shapes.py OUTDIR [OUTDIR2 ...] [-o OUT.png]
           [--walls W1,W2] [--evaluations 0,4,9] [--between N] [--titles T1,T2] [--surface]

One panel per OUTDIR.  The walls drawn are those the optimization moved (unless --walls names
them); --evaluations picks the evaluations to draw (default: the first, N = 3 evenly spaced
successful ones in between, and the optimized design from shapes/optimized.csv).  3D walls are
cut by the plane z = const through the middle of the walls; with --surface (3D) a second panel
per OUTDIR shows the first and the optimized walls as shaded surfaces, seen from the side and
above the stream.  Writes OUTDIR/shapes.png unless -o is given.
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


def shape_files(outdir):
    """{evaluation: OUTDIR/shapes/shape_K.csv} and the path of shapes/optimized.csv."""
    files = {int(re.search(r"shape_(\d+)\.csv$", p).group(1)): p
             for p in glob.glob(os.path.join(outdir, "shapes", "shape_*.csv"))}
    if not files:
        raise SystemExit(f"{outdir}: no shapes/shape_*.csv (written by karman optimize)")
    return files, os.path.join(outdir, "shapes", "optimized.csv")


def panel(ax, outdir, args):
    files, optimized = shape_files(outdir)
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


def surface(ax, outdir, args):
    """The first design (grey, translucent) and the optimized one (red) as 3D surfaces."""
    files, optimized = shape_files(outdir)
    if not os.path.exists(optimized):
        raise SystemExit(f"{outdir}: --surface needs shapes/optimized.csv (the campaign's end)")
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    first, last = read_shape(files[min(files)]), read_shape(optimized)
    walls = args.walls.split(",") if args.walls else moved_walls(first, last) or sorted(first)
    if any(len(f) < 3 for w in walls for f in first[w]):
        raise SystemExit(f"{outdir}: --surface is for 3D walls (faces of 3 or more vertices)")
    from matplotlib.colors import to_rgb
    light = (-0.4, -0.6, 0.7)  # (toward the viewer and up)

    def shaded(faces, color):  # each face's colour by the cosine of its normal to the light
        out = []
        for f in faces:
            a, b, c = f[0], f[1], f[2]
            u = [b[i] - a[i] for i in range(3)]
            v = [c[i] - a[i] for i in range(3)]
            n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
            size = sum(x * x for x in n) ** 0.5 or 1.0
            k = 0.35 + 0.65 * abs(sum(n[i] * light[i] for i in range(3))) / size
            out.append(tuple(k * x for x in to_rgb(color)))
        return out

    points = []
    for shape, color, style in ((first, "0.7", dict(edgecolor="none", alpha=0.25)),
                                (last, "C3", dict(edgecolor="0.2", linewidth=0.1, alpha=0.9))):
        faces = [f for w in walls for f in shape[w]]
        ax.add_collection3d(Poly3DCollection(faces, facecolors=shaded(faces, color), **style))
        points += [v for f in faces for v in f]
    lo = [min(p[i] for p in points) for i in range(3)]
    hi = [max(p[i] for p in points) for i in range(3)]
    half = 0.55 * max(h - l for l, h in zip(lo, hi))
    for i, set_lim in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)):
        c = 0.5 * (lo[i] + hi[i])
        set_lim(c - half, c + half)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=20, azim=-60)
    ax.set_xlabel("x (stream)")
    ax.set_ylabel("y")
    ax.set_zlabel("z")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("outdirs", nargs="+")
    ap.add_argument("-o", "--output")
    ap.add_argument("--walls")
    ap.add_argument("--evaluations")
    ap.add_argument("--between", type=int, default=3)
    ap.add_argument("--titles")
    ap.add_argument("--surface", action="store_true")
    args = ap.parse_args()
    titles = args.titles.split(",") if args.titles else args.outdirs
    rows = 2 if args.surface else 1
    fig = plt.figure(figsize=(6 * len(args.outdirs), 5 * rows))
    for i, (outdir, title) in enumerate(zip(args.outdirs, titles)):
        ax = fig.add_subplot(rows, len(args.outdirs), i + 1)
        walls = panel(ax, outdir, args)
        ax.set_title(f"{title}: {walls}", fontsize=10)
        if args.surface:
            ax3 = fig.add_subplot(rows, len(args.outdirs), len(args.outdirs) + i + 1, projection="3d")
            surface(ax3, outdir, args)
            ax3.set_title(f"{title}: first (grey) and optimized (red)", fontsize=10)
    fig.tight_layout()
    png = args.output or os.path.join(args.outdirs[0], "shapes.png")
    fig.savefig(png, dpi=130)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
