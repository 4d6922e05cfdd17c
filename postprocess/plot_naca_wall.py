#!/usr/bin/python3
"""Surface pressure and skin friction of cases/naca0012-rans runs beside the TMR data.

Reads OUTDIR/flow_wall_0000.pvtu of karman run outputs (output.vtk: true; one angle each,
any levels) and draws two panels: c_p over x on both sides, and c_f on the upper side (y > 0),
with CFL3D's SA results on the 897 x 257 grid (reference/n0012cp_cfl3d_sa.dat,
n0012cf_cfl3d_sa.dat: M 0.15, point-vortex far-field correction on) and the experiment of
Gregory & O'Reilly (reference/CP_Gregory_expdata.dat: Re 2.88e6, upper side, digitized).
c_f is |tau_w| / (rho U^2 / 2) signed by the direction of the wall shear along the chord
(negative where the flow runs upstream, as TMR's).  Prints, per run, the RMS and largest
difference from CFL3D's c_p on 0.02 <= x <= 0.98 (interpolated along each side), the same with
karman's (incompressible) c_p times the Prandtl-Glauert factor 1 / sqrt(1 - M^2) of the
reference's M 0.15 (1.0114), and of c_f on the upper side, and writes the figure.

With --no-reference (angles TMR has no data for, shapes other than the NACA 0012: the turbulent
airfoil optimization's before and after, cases/naca0012-rans/optimize.yaml) only the runs are
drawn, c_f on both sides (upper solid, lower dashed), and nothing is compared.

usage: /usr/bin/python3 postprocess/plot_naca_wall.py --alpha 10 OUT1 [OUT2 ...]
           [--labels L1,L2] [-o naca-wall.png] [--no-reference] [--title TEXT]
"""
import argparse
import os
import re
import sys

import matplotlib
import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "cases", "naca0012-rans", "reference")


def tecplot_zones(path):
    """{zone title: array of rows} of a Tecplot ASCII file (`zone, t="..."` lines)."""
    zones, title = {}, None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#") or s.lower().startswith("variables"):
                continue
            m = re.match(r'zone.*t\s*=\s*"([^"]*)"', s, re.IGNORECASE)
            if m:
                title = m.group(1)
                zones[title] = []
                continue
            if title is None:
                sys.exit(f"{path}: data before the first zone line: {s[:40]}")
            zones[title].append([float(v) for v in s.split()])
    return {k: np.array(v) for k, v in zones.items()}


def zone_for(zones, alpha, path):
    for title, rows in zones.items():
        m = re.match(r"\s*alpha\s*=\s*([-0-9.]+)", title)
        if m and abs(float(m.group(1)) - alpha) < 1e-9:
            return rows
    sys.exit(f"{path}: no zone for alpha = {alpha:g} (zones: {', '.join(zones)})")


def wall_data(folder):
    """Cell-centre x, y, c_p and signed c_f of the wall faces of a run."""
    path = os.path.join(folder, "flow_wall_0000.pvtu")
    if not os.path.exists(path):
        sys.exit(f"{path}: missing (run with --set output.vtk=true)")
    reader = vtk.vtkXMLPUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    centres = vtk.vtkCellCenters()
    centres.SetInputData(reader.GetOutput())
    centres.Update()
    xyz = vtk_to_numpy(centres.GetOutput().GetPoints().GetData())
    data = reader.GetOutput().GetCellData()
    cp = vtk_to_numpy(data.GetArray("pressure_coefficient"))
    tau = vtk_to_numpy(data.GetArray("wall_shear_stress"))
    cf = np.abs(vtk_to_numpy(data.GetArray("skin_friction"))) * np.sign(tau[:, 0])
    return xyz[:, 0], xyz[:, 1], cp, cf


def side(x, y, values, upper):
    keep = y > 0 if upper else y < 0
    order = np.argsort(x[keep])
    return x[keep][order], values[keep][order]


def differences(x_ref, v_ref, x, v, lo=0.02, hi=0.98):
    """RMS and largest |v - v_ref| at the reference points in [lo, hi] (v interpolated)."""
    keep = (x_ref >= lo) & (x_ref <= hi)
    d = np.interp(x_ref[keep], x, v) - v_ref[keep]
    return float(np.sqrt(np.mean(d * d))), float(np.max(np.abs(d)))


def finish(fig, ax_p, ax_f, output, cp_title, cf_label, cf_title):
    """Axes labels, titles and legends of the two panels; writes the figure."""
    ax_p.invert_yaxis()
    ax_p.set_xlabel("x / c")
    ax_p.set_ylabel("c_p")
    ax_p.set_title(cp_title)
    ax_p.legend(fontsize=8)
    ax_f.set_xlabel("x / c")
    ax_f.set_ylabel(cf_label)
    ax_f.set_title(cf_title)
    ax_f.set_ylim(bottom=min(0.0, ax_f.get_ylim()[0]))
    ax_f.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"wrote {output}")


def runs_only(args, labels):
    """The runs' c_p (both sides) and c_f (upper solid, lower dashed), without reference data."""
    fig, (ax_p, ax_f) = plt.subplots(1, 2, figsize=(12, 4.6))
    for k, (folder, label) in enumerate(zip(args.folders, labels)):
        x, y, cp, cf = wall_data(folder)
        for upper in (True, False):
            xs, cps = side(x, y, cp, upper)
            ax_p.plot(xs, cps, "-", lw=1, color=f"C{k}", label=label if upper else None)
            xs, cfs = side(x, y, cf, upper)
            ax_f.plot(xs, cfs, "-" if upper else "--", lw=1, color=f"C{k}",
                      label=f"{label}, {'upper' if upper else 'lower'}")
    finish(fig, ax_p, ax_f, args.output, args.title or f"alpha {args.alpha:g}: surface pressure",
           "c_f", "skin friction")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--alpha", type=float, required=True, help="angle of attack (degrees)")
    ap.add_argument("--labels", default="")
    ap.add_argument("-o", "--output", default="naca-wall.png")
    ap.add_argument("--no-reference", action="store_true",
                    help="only the runs (no TMR data, no differences), c_f on both sides")
    ap.add_argument("--title", default="", help="title of the c_p panel")
    args = ap.parse_args()
    labels = args.labels.split(",") if args.labels else [os.path.basename(os.path.normpath(f))
                                                         for f in args.folders]
    if len(labels) != len(args.folders):
        sys.exit(f"--labels: {len(labels)} labels for {len(args.folders)} folders")
    if args.no_reference:
        return runs_only(args, labels)
    cp_path = os.path.join(REFERENCE, "n0012cp_cfl3d_sa.dat")
    cf_path = os.path.join(REFERENCE, "n0012cf_cfl3d_sa.dat")
    exp_path = os.path.join(REFERENCE, "CP_Gregory_expdata.dat")
    cp_ref = zone_for(tecplot_zones(cp_path), args.alpha, cp_path)
    cf_ref = zone_for(tecplot_zones(cf_path), args.alpha, cf_path)
    exp = tecplot_zones(exp_path)
    # CFL3D's c_p: from the trailing edge along the lower side to the leading edge, then back
    # along the upper side
    le = int(np.argmin(cp_ref[:, 0]))
    ref_sides = {False: cp_ref[: le + 1][::-1], True: cp_ref[le:]}

    fig, (ax_p, ax_f) = plt.subplots(1, 2, figsize=(12, 4.6))
    ax_p.plot(cp_ref[:, 0], cp_ref[:, 1], "k-", lw=2.5, alpha=0.35, label="CFL3D SA (TMR)")
    for title, rows in exp.items():
        m = re.match(r"\s*alpha\s*=\s*([-0-9.]+)", title)
        if m and abs(float(m.group(1)) - args.alpha) < 1e-9:
            ax_p.plot(rows[:, 0], rows[:, 1], "ks", mfc="none", ms=4,
                      label="Gregory & O'Reilly (exp.)")
    ax_f.plot(cf_ref[:, 0], cf_ref[:, 1], "k-", lw=2.5, alpha=0.35, label="CFL3D SA (TMR)")
    print(f"alpha {args.alpha:g}: differences from CFL3D on 0.02 <= x <= 0.98")
    pg = 1 / np.sqrt(1 - 0.15**2)
    print(f"{'run':>12} {'c_p RMS':>9} {'c_p max':>9} {'PG RMS':>9} {'PG max':>9} "
          f"{'c_f RMS':>10} {'c_f max':>10}")
    for folder, label in zip(args.folders, labels):
        x, y, cp, cf = wall_data(folder)
        stats, stats_pg = [], []
        for upper in (True, False):
            xs, cps = side(x, y, cp, upper)
            ax_p.plot(xs, cps, "-", lw=1, label=label if upper else None,
                      color=f"C{labels.index(label)}")
            stats.append(differences(ref_sides[upper][:, 0], ref_sides[upper][:, 1], xs, cps))
            stats_pg.append(
                differences(ref_sides[upper][:, 0], ref_sides[upper][:, 1], xs, pg * cps))
        xu, cfu = side(x, y, cf, True)
        ax_f.plot(xu, cfu, "-", lw=1, label=label, color=f"C{labels.index(label)}")
        cf_rms, cf_max = differences(cf_ref[:, 0], cf_ref[:, 1], xu, cfu)
        rms = [float(np.sqrt(0.5 * (t[0][0] ** 2 + t[1][0] ** 2))) for t in (stats, stats_pg)]
        peak = [max(t[0][1], t[1][1]) for t in (stats, stats_pg)]
        print(f"{label:>12} {rms[0]:9.4f} {peak[0]:9.4f} {rms[1]:9.4f} {peak[1]:9.4f} "
              f"{cf_rms:10.2e} {cf_max:10.2e}")
    finish(fig, ax_p, ax_f, args.output,
           f"NACA 0012, Re 6e6, alpha {args.alpha:g}: surface pressure", "c_f (upper side)",
           "skin friction, upper side")


if __name__ == "__main__":
    main()
