"""Shape of a karman optimize run beside the circle it started from, and the features that the
literature on minimum-drag profiles compares: length, thickness, nose and tail angles, and the
wall shear along the surface (Pironneau 1973: constant on the optimal Stokes body).

usage: /usr/bin/python3 cases/shape-min-drag/shape_analysis.py OUT [OUT2 ...] -o shapes.png
           [--labels L1,L2] [--markdown table.md]

Reads OUT/shape_cylinder.pvd (its first entry: the reference circle), OUT/flow_optimized_cylinder
_0000.pvtu (the optimized wall with pressure coefficient and wall shear stress) and
OUT/summary.json.  Prints one table row per OUT (and writes them to --markdown):
  length, thickness (along x and y), their ratio, the area and centroid of the wall polygon,
  the nose and tail angles: the angle between the chords from the front-most (rear-most) wall
  vertex to the wall points 0.1 D away along the wall on either side (D = the circle's
  diameter; 0.1 D is 2-3 wall faces on level 1), and the corner angle of the two faces that
  meet at that vertex.
With --radial-degree P (a `type: radial` design about the origin, control point 0 at angle 0, as
re40-corners.yaml and re*-radial.yaml): also the end angles of the design's own curve r(theta) =
0.5 + sum a_i B_i(theta) (the map of src/design/shape_parameterization.cpp with the best design of
OUT/summary.json), between the chords to the points 0.1 D away along that curve and between its
tangents; the wall polygon's angles above depend on where the mesh has vertices near the tips.
Needs python3-vtk9 (reads the VTK XML files) and matplotlib.
"""
import argparse
import json
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import vtk  # noqa: E402
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402


def read_wall(path):
    """Ordered closed polygon [(x, y)] of a 2D wall file and its cell fields (one per face)."""
    reader = (vtk.vtkXMLPUnstructuredGridReader() if path.endswith(".pvtu")
              else vtk.vtkXMLUnstructuredGridReader())
    reader.SetFileName(path)
    reader.Update()
    grid = reader.GetOutput()
    raw = vtk_to_numpy(grid.GetPoints().GetData())
    # the pieces of several ranks repeat their shared end points: one id per position
    key_id, ids, pts = {}, [], []
    for p in raw:
        key = (round(float(p[0]), 12), round(float(p[1]), 12))
        if key not in key_id:
            key_id[key] = len(pts)
            pts.append(p)
        ids.append(key_id[key])
    fields = {}
    cd = grid.GetCellData()
    for i in range(cd.GetNumberOfArrays()):
        fields[cd.GetArrayName(i)] = vtk_to_numpy(cd.GetArray(i))
    faces = []
    for c in range(grid.GetNumberOfCells()):
        cell = grid.GetCell(c).GetPointIds()
        faces.append((ids[cell.GetId(0)], ids[cell.GetId(1)]))
    # walk the faces into a loop
    nxt = {}
    for k, (a, b) in enumerate(faces):
        nxt.setdefault(a, []).append((b, k))
        nxt.setdefault(b, []).append((a, k))
    start = faces[0][0]
    loop, order, prev, cur = [start], [], None, start
    used = set()
    while True:
        cand = [(v, k) for v, k in nxt[cur] if k not in used]
        if not cand:
            break
        v, k = cand[0]
        used.add(k)
        order.append(k)
        if v == start:
            break
        loop.append(v)
        prev, cur = cur, v
    poly = [(float(pts[i][0]), float(pts[i][1])) for i in loop]
    # counter-clockwise
    if signed_area(poly) < 0:
        poly.reverse()
        order.reverse()
    return poly, {name: [f[k] for k in order] for name, f in fields.items()}, order


def signed_area(poly):
    s = 0.0
    for i in range(len(poly)):
        x0, y0 = poly[i]
        x1, y1 = poly[(i + 1) % len(poly)]
        s += x0 * y1 - x1 * y0
    return 0.5 * s


def centroid(poly):
    a = signed_area(poly)
    cx = cy = 0.0
    for i in range(len(poly)):
        x0, y0 = poly[i]
        x1, y1 = poly[(i + 1) % len(poly)]
        w = x0 * y1 - x1 * y0
        cx += (x0 + x1) * w
        cy += (y0 + y1) * w
    return cx / (6 * a), cy / (6 * a)


def point_along(poly, i, step, dist):
    """The point at arc length `dist` from vertex i walking in direction step (+1 / -1)."""
    n = len(poly)
    left = dist
    cur = i
    while True:
        nx = (cur + step) % n
        x0, y0 = poly[cur]
        x1, y1 = poly[nx]
        seg = math.hypot(x1 - x0, y1 - y0)
        if seg >= left:
            t = left / seg
            return (x0 + t * (x1 - x0), y0 + t * (y1 - y0))
        left -= seg
        cur = nx


def angle_at(p, a, b):
    """Included angle at p between the chords p->a and p->b, in degrees."""
    ux, uy = a[0] - p[0], a[1] - p[1]
    vx, vy = b[0] - p[0], b[1] - p[1]
    c = (ux * vx + uy * vy) / (math.hypot(ux, uy) * math.hypot(vx, vy))
    return math.degrees(math.acos(max(-1.0, min(1.0, c))))


def end_angles(poly, i, diameter):
    n = len(poly)
    chord = angle_at(poly[i], point_along(poly, i, 1, 0.1 * diameter),
                     point_along(poly, i, -1, 0.1 * diameter))
    corner = angle_at(poly[i], poly[(i + 1) % n], poly[(i - 1) % n])
    return chord, corner


def cardinal_bspline(p, t):
    if t < 0 or t >= p + 1:
        return 0.0
    if p == 0:
        return 1.0
    return (t * cardinal_bspline(p - 1, t) + (p + 1 - t) * cardinal_bspline(p - 1, t - 1)) / p


def radial_point(a, degree, theta):
    """The wall point of the radial map at angle theta (periodic uniform B-splines)."""
    n = len(a)
    u = theta * n / (2 * math.pi)
    dr = 0.0
    for i in range(n):
        t = u - i
        t -= n * math.floor((t + 0.5 * n) / n)
        dr += a[i] * cardinal_bspline(degree, t + 0.5 * (degree + 1))
    r = 0.5 + dr
    return (r * math.cos(theta), r * math.sin(theta))


def radial_end_angles(a, degree, theta, diameter):
    """Chord (0.1 D along the curve) and tangent angles of the map's curve at angle theta."""
    p = radial_point(a, degree, theta)
    ends = []
    for sign in (1, -1):
        q, s, th, step = p, 0.0, theta, sign * 1e-5
        while s < 0.1 * diameter:
            th += step
            nq = radial_point(a, degree, th)
            s += math.dist(q, nq)
            q = nq
        ends.append(q)
    h = 1e-7
    tangent = angle_at(p, radial_point(a, degree, theta + h), radial_point(a, degree, theta - h))
    return angle_at(p, ends[0], ends[1]), tangent


def first_pvd_file(out, name):
    text = open(os.path.join(out, name)).read()
    files = re.findall(r'file="([^"]+)"', text)
    return os.path.join(out, files[0])


def metrics(poly, diameter):
    xs = [p[0] for p in poly]
    ys = [p[1] for p in poly]
    front = min(range(len(poly)), key=lambda i: (poly[i][0], abs(poly[i][1])))
    rear = max(range(len(poly)), key=lambda i: (poly[i][0], -abs(poly[i][1])))
    length, thick = max(xs) - min(xs), max(ys) - min(ys)
    return {
        "length": length, "thickness": thick, "ratio": length / thick,
        "area": signed_area(poly), "centroid": centroid(poly),
        "nose": end_angles(poly, front, diameter), "tail": end_angles(poly, rear, diameter),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outs", nargs="+")
    ap.add_argument("-o", "--output", default="shapes.png")
    ap.add_argument("--labels", default="")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--radial-degree", type=int, default=-1)
    args = ap.parse_args()
    labels = args.labels.split(",") if args.labels else args.outs
    fig, axes = plt.subplots(len(args.outs), 2, figsize=(11, 3.2 * len(args.outs)),
                             squeeze=False, gridspec_kw={"width_ratios": [1.3, 1]})
    rows = ["| run | c_D circle -> optimum | length | thickness | length/thickness | nose angle "
            "(chords 0.1 D / corner) | tail angle (chords 0.1 D / corner) | area | centroid |",
            "|---|---|---|---|---|---|---|---|---|"]
    map_rows = ["", "| run | the map's nose angle (chords 0.1 D / tangents) | the map's tail angle "
                "(chords 0.1 D / tangents) |", "|---|---|---|"]
    for k, out in enumerate(args.outs):
        circle, _, _ = read_wall(first_pvd_file(out, "shape_cylinder.pvd"))
        shape, fields, _ = read_wall(os.path.join(out, "flow_optimized_cylinder_0000.pvtu"))
        summary = json.load(open(os.path.join(out, "summary.json")))
        rows_csv = [r.split(",") for r in open(os.path.join(out, "optimization.csv"))]
        cd0 = float(rows_csv[1][3])
        diameter = max(p[0] for p in circle) - min(p[0] for p in circle)
        m = metrics(shape, diameter)
        if args.radial_degree >= 0:
            names = json.loads(open(os.path.join(out, "optimization-journal.jsonl")).readline())
            a = [summary["design"][name] for name in names["names"]]
            nose = radial_end_angles(a, args.radial_degree, math.pi, diameter)
            tail = radial_end_angles(a, args.radial_degree, 0.0, diameter)
            map_rows.append(f"| {labels[k]} | {nose[0]:.1f}° / {nose[1]:.1f}° | "
                            f"{tail[0]:.1f}° / {tail[1]:.1f}° |")
        rows.append(
            f"| {labels[k]} | {cd0:.4f} -> {summary['values']['cd']:.4f} "
            f"({100 * (summary['values']['cd'] / cd0 - 1):+.1f} %) | {m['length']:.3f} | "
            f"{m['thickness']:.3f} | {m['ratio']:.2f} | {m['nose'][0]:.0f}° / {m['nose'][1]:.0f}° | "
            f"{m['tail'][0]:.0f}° / {m['tail'][1]:.0f}° | {m['area']:.6f} | "
            f"({m['centroid'][0]:.1e}, {m['centroid'][1]:.1e}) |")
        ax = axes[k][0]
        ax.fill([p[0] for p in circle], [p[1] for p in circle], color="0.85", label="circle (start)")
        ax.plot([p[0] for p in shape] + [shape[0][0]], [p[1] for p in shape] + [shape[0][1]],
                "k.-", lw=1.2, ms=3, label=f"optimum, c_D {summary['values']['cd']:.4f}")
        ax.set_aspect("equal")
        ax.set_title(f"{labels[k]}: c_D {cd0:.4f} -> {summary['values']['cd']:.4f}")
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(True, alpha=0.3)
        # wall shear and pressure coefficient along the upper surface
        ax2 = axes[k][1]
        mids = [((shape[i][0] + shape[(i + 1) % len(shape)][0]) / 2,
                 (shape[i][1] + shape[(i + 1) % len(shape)][1]) / 2) for i in range(len(shape))]
        upper = sorted((mx, i) for i, (mx, my) in enumerate(mids) if my >= 0)
        if "skin_friction" in fields:
            cf = [abs(float(fields["skin_friction"][i])) for _, i in upper]
            ax2.plot([x for x, _ in upper], cf, "b.-", label="|c_f| (upper side)")
        if "pressure_coefficient" in fields:
            ax2.plot([x for x, _ in upper], [fields["pressure_coefficient"][i] for _, i in upper],
                     "r.-", label="c_p (upper side)")
        ax2.set_xlabel("x")
        ax2.legend(fontsize=8)
        ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    text = "\n".join(rows + (map_rows if args.radial_degree >= 0 else []))
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text + "\n")
    print(f"shape_analysis: {args.output}")


if __name__ == "__main__":
    main()
