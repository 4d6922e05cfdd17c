"""The drag's surface sensitivity on the cylinder of DFG 3D-1Z, unrolled: colour = sensitivity
density (dJ/dn per unit area, n the normal displacement into the fluid) over the angle from the
front stagnation line and the spanwise coordinate z, plus the density around the cylinder at
mid-height (z = H/2) and near a side wall.

usage: /usr/bin/python3 cases/dfg-3d1z/plot_sensitivity.py ADJOINT_OUTDIR OUT.png
(ADJOINT_OUTDIR: a `karman adjoint` output folder; reads sensitivity_cylinder_0000/*.vtu)
"""
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.tri as mtri
import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

XC, YC, H = 0.5, 0.2, 0.41


def read(outdir):
    xs, vals = [], []
    files = sorted(glob.glob(os.path.join(outdir, "sensitivity_cylinder_0000", "*.vtu")))
    if not files:
        sys.exit(f"plot_sensitivity: no sensitivity_cylinder_0000/*.vtu in {outdir}")
    for f in files:
        r = vtk.vtkXMLUnstructuredGridReader()
        r.SetFileName(f)
        r.Update()
        g = r.GetOutput()
        xs.append(vtk_to_numpy(g.GetPoints().GetData()))
        vals.append(vtk_to_numpy(g.GetPointData().GetArray("sensitivity_density")))
    x, v = np.concatenate(xs), np.concatenate(vals)
    # the pieces share their boundary vertices: keep one copy
    _, keep = np.unique(np.round(x, 9), axis=0, return_index=True)
    return x[keep], v[keep]


def main():
    outdir, png = sys.argv[1], sys.argv[2]
    x, s = read(outdir)
    phi = np.degrees(np.arctan2(x[:, 1] - YC, -(x[:, 0] - XC)))  # 0 at the front, +-180 behind
    z = x[:, 2]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1.6, 1]})
    tri = mtri.Triangulation(phi, z)
    lim = np.max(np.abs(s))
    c = ax.tricontourf(tri, s, levels=np.linspace(-lim, lim, 41), cmap="RdBu_r")
    fig.colorbar(c, ax=ax, label="dc_D/dn per unit area")
    ax.set_xlabel("angle from the front stagnation line [deg]")
    ax.set_ylabel("z")
    ax.set_title("drag sensitivity on the cylinder (unrolled)")
    for zt, label in ((0.5 * H, "z = H/2"), (0.05 * H, "z = 0.05 H")):
        near = np.abs(z - zt) <= np.min(np.abs(z - zt)) + 1e-9
        order = np.argsort(phi[near])
        bx.plot(phi[near][order], s[near][order], label=label)
    bx.axhline(0, color="k", lw=0.5)
    bx.set_xlabel("angle from the front stagnation line [deg]")
    bx.set_ylabel("dc_D/dn per unit area")
    bx.legend()
    bx.set_title("around the cylinder")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"plot_sensitivity: {len(s)} wall vertices, density in [{s.min():.4g}, {s.max():.4g}] -> {png}")


if __name__ == "__main__":
    main()
