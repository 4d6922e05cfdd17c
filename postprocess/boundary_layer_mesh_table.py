#!/usr/bin/python3
"""Meshes a RANS case's .geo at several levels and prints a Markdown table of its
boundary-layer resolution: cells, wall faces, the first-cell height h on the wall (cell area /
wall-face length), the largest cell aspect ratio (longer / shorter distance between the
midpoints of opposite edges), the wall skew (largest angle between a wall face's normal and the
line from its centre to the cell centroid), the largest non-orthogonality of the interior faces
(angle between the face normal and the line joining the two cell centroids, as karman's mesh
check), and y+ = h u_tau / nu with u_tau = U sqrt(|c_f| / 2) from a reference skin-friction
distribution (the TMR CFL3D finest-grid c_f; U = 1, nu = 1/Re).  The first cell centre sits at
h/2: its y+ is half.  Every cell must have a positive (counter-clockwise) area.

usage: /usr/bin/python3 postprocess/boundary_layer_mesh_table.py CASE [LEVEL ...]
  CASE: tmr-flat-plate | tmr-bump | naca0012-rans (the folder under cases/); levels 0-3 by
  default.  Needs gmsh on PATH; the meshes go to a temporary folder.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# per case: geo file, Reynolds number per unit length, reference c_f file and zones, the
# wall stretch where y+ is reported (x range; the leading edge is singular), stations
CASES = {
    "tmr-flat-plate": dict(geo="flat-plate.geo", Re=5e6, cf="cf_plate.dat", zones=["CFL3D"],
                           xrange=(0.01, 2.0), stations=[0.97008]),
    "tmr-bump": dict(geo="bump.geo", Re=3e6, cf="cf_bump.dat", zones=["CFL3D"],
                     xrange=(0.01, 1.49), stations=[0.75]),
    "naca0012-rans": dict(geo="naca0012-rans.geo", Re=6e6, cf="n0012cf_cfl3d_sa.dat",
                          zones=["alpha=10, upper surface", "alpha=15, upper surface"],
                          xrange=(0.0, 1.0), stations=[0.5]),
}


def read_zones(path):
    zones, cur = {}, None
    for line in open(path):
        s = line.strip()
        if not s or s.startswith("#") or s.lower().startswith("variables"):
            continue
        if s.lower().startswith("zone"):
            cur = s.split("t=", 1)[1].strip().strip('"')
            zones[cur] = []
            continue
        zones[cur].append([float(v) for v in s.split()[:2]])
    return {k: np.array(v) for k, v in zones.items()}


def read_msh22(path):
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    names, nodes, edges, cells = {}, None, [], []
    while i < len(lines):
        s = lines[i].strip()
        if s == "$PhysicalNames":
            n = int(lines[i + 1])
            for k in range(n):
                d, tag, name = lines[i + 2 + k].split(maxsplit=2)
                names[int(tag)] = name.strip('"')
            i += n + 2
        elif s == "$Nodes":
            n = int(lines[i + 1])
            a = np.array([l.split() for l in lines[i + 2:i + 2 + n]], float)
            ids = a[:, 0].astype(int)
            nodes = np.zeros((ids.max() + 1, 2))
            nodes[ids] = a[:, 1:3]
            i += n + 2
        elif s == "$Elements":
            n = int(lines[i + 1])
            for l in lines[i + 2:i + 2 + n]:
                v = [int(x) for x in l.split()]
                typ, ntag = v[1], v[2]
                conn = v[3 + ntag:]
                if typ == 1:
                    edges.append((names.get(v[3], ""), conn[0], conn[1]))
                elif typ == 3:
                    cells.append(conn)
                elif typ == 2:
                    raise SystemExit("triangles found: this table is for quadrilateral meshes")
            i += n + 2
        else:
            i += 1
    return nodes, edges, np.array(cells)


def stats(msh):
    nodes, edges, quads = read_msh22(msh)
    P = nodes[quads]  # (n, 4, 2)
    x, y = P[..., 0], P[..., 1]
    # area and centroid (of the polygon, as karman's geometry), about the first vertex
    X, Y = x - x[:, :1], y - y[:, :1]
    X1, Y1 = np.roll(X, -1, 1), np.roll(Y, -1, 1)
    cross = X * Y1 - X1 * Y
    area = 0.5 * cross.sum(axis=1)
    centroid = np.stack([((X + X1) * cross).sum(1) / (6 * area) + x[:, 0],
                         ((Y + Y1) * cross).sum(1) / (6 * area) + y[:, 0]], 1)
    mid = 0.5 * (P + np.roll(P, -1, 1))  # edge k from vertex k to k+1
    m1 = np.linalg.norm(mid[:, 0] - mid[:, 2], axis=1)
    m2 = np.linalg.norm(mid[:, 1] - mid[:, 3], axis=1)
    aspect = np.maximum(m1, m2) / np.minimum(m1, m2)
    # edge -> cell for the wall edges
    key = {}
    for c, q in enumerate(quads):
        for k in range(4):
            a, b = q[k], q[(k + 1) % 4]
            key[(min(a, b), max(a, b))] = c
    wall = [(a, b) for name, a, b in edges if name == "wall"]
    xs, h, skew = [], [], []
    for a, b in wall:
        c = key[(min(a, b), max(a, b))]
        pa, pb = nodes[a], nodes[b]
        length = np.linalg.norm(pb - pa)
        m = 0.5 * (pa + pb)
        t = (pb - pa) / length
        n = np.array([-t[1], t[0]])
        d = centroid[c] - m
        if np.dot(n, d) < 0:
            n = -n
        xs.append(m[0])
        h.append(area[c] / length)
        skew.append(np.degrees(np.arccos(min(1.0, np.dot(n, d) / np.linalg.norm(d)))))
    xs, h, skew = np.array(xs), np.array(h), np.array(skew)
    # non-orthogonality of the interior faces: angle between the face normal and the line
    # joining the two cell centroids
    a = quads.reshape(-1)
    b = np.roll(quads, -1, 1).reshape(-1)
    cell = np.repeat(np.arange(len(quads)), 4)
    lo_, hi_ = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((hi_, lo_))
    lo_, hi_, cell, a, b = lo_[order], hi_[order], cell[order], a[order], b[order]
    pair = np.where((lo_[1:] == lo_[:-1]) & (hi_[1:] == hi_[:-1]))[0]
    t = nodes[b[pair]] - nodes[a[pair]]
    n = np.stack([t[:, 1], -t[:, 0]], 1)
    d = centroid[cell[pair + 1]] - centroid[cell[pair]]
    cosang = np.abs(np.sum(n * d, 1)) / (np.linalg.norm(n, axis=1) * np.linalg.norm(d, axis=1))
    nonorth = np.degrees(np.arccos(np.clip(cosang, 0, 1))).max()
    return dict(cells=len(quads), wall_faces=len(wall), min_area=area.min(),
                max_aspect=aspect.max(), xs=xs, h=h, skew=skew, wall_skew=skew.max(),
                nonorth=nonorth)


def main():
    case = sys.argv[1]
    levels = [int(v) for v in sys.argv[2:]] or [0, 1, 2, 3]
    cfg = CASES[case]
    folder = os.path.join(ROOT, "cases", case)
    nu = 1.0 / cfg["Re"]
    zones = read_zones(os.path.join(folder, "reference", cfg["cf"]))
    cf = []
    for z in cfg["zones"]:
        d = zones[z]
        d = d[np.argsort(d[:, 0])]
        cf.append(d)
    lo, hi = cfg["xrange"]
    head = ("| level | cells | wall faces | first-cell height h (min - max) | max aspect ratio "
            "| wall-normal skew at the wall (deg) | max non-orthogonality (deg) | " +
            " | ".join(f"y+ at x = {s} ({z})" for z in cfg["zones"] for s in cfg["stations"]) +
            " | " + " | ".join(f"max y+, x in [{lo}, {hi}] ({z})" for z in cfg["zones"]) + " |")
    print(head)
    print("|" + "---:|" * (head.count("|") - 1))
    with tempfile.TemporaryDirectory() as tmp:
        for level in levels:
            msh = os.path.join(tmp, f"{case}-{level}.msh")
            subprocess.run(["gmsh", "-2", os.path.join(folder, cfg["geo"]), "-setnumber", "level",
                            str(level), "-format", "msh22", "-o", msh], check=True,
                           stdout=subprocess.DEVNULL)
            s = stats(msh)
            if s["min_area"] <= 0:
                raise SystemExit(f"level {level}: a cell with area {s['min_area']} <= 0")
            row = [str(level), f"{s['cells']:,}".replace(",", " "), str(s["wall_faces"]),
                   f"{s['h'].min():.3g} - {s['h'].max():.3g}", f"{s['max_aspect']:.3g}",
                   f"{s['wall_skew']:.2f}", f"{s['nonorth']:.1f}"]
            at, mx = [], []
            for d in cf:
                ut = np.sqrt(np.abs(np.interp(s["xs"], d[:, 0], d[:, 1])) / 2)
                yplus = s["h"] * ut / nu
                for st in cfg["stations"]:
                    k = np.argmin(np.abs(s["xs"] - st))
                    at.append(f"{yplus[k]:.2f}")
                sel = (s["xs"] >= lo) & (s["xs"] <= hi)
                mx.append(f"{yplus[sel].max():.2f}")
            print("| " + " | ".join(row + at + mx) + " |")


if __name__ == "__main__":
    main()
