#!/usr/bin/python3
"""Grid-convergence table of a TMR RANS case (cases/tmr-flat-plate, cases/tmr-bump,
cases/naca0012-rans at 10 degrees) from karman run outputs.

For each output folder (one mesh level each, coarsest first): cells, ranks, Newton steps, the
force coefficients from summary.json, and c_f at the case's stations, interpolated linearly
between the cell-centred wall values of flow_wall_0000.pvtu (|skin_friction|, whose sign follows
the surface tangent).  From the three finest levels: the observed order p = log2((f1 - f2) /
(f2 - f3)) and the Richardson extrapolation f3 + (f3 - f2) / (2^p - 1) (each refinement halves
every spacing; "n/a" when the three do not converge monotonically).  Printed as Markdown with
the TMR finest-grid values beside (CFL3D, FUN3D at M 0.2, at M 0.15 for the NACA 0012 without the
point-vortex correction; for the flat plate also FUN3D incompressible).  karman is
incompressible: for C_L and the pressure drag the extrapolated value is also compared after the
Prandtl-Glauert factor 1 / sqrt(1 - M^2) of the references' Mach number (1.0206 at M 0.2,
1.0114 at M 0.15), i.e. with the incompressible value the references imply.

usage: /usr/bin/python3 postprocess/tmr_study.py flat-plate|bump|naca0012 OUT_L0 OUT_L1 OUT_L2 [...]
"""
import json
import math
import os
import sys

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

# per case: (key, label, TMR references); keys are summary.json's or "cf@x" for c_f at x
CASES = {
    "flat-plate": [
        ("cd", "C_D", {"CFL3D": 0.00285985, "FUN3D": 0.00285247}),
        ("cf@0.97008", "c_f(x = 0.97008)",
         {"CFL3D": 0.00270562, "FUN3D": 0.00270540, "FUN3D incompressible": 0.00272909}),
    ],
    "bump": [
        ("cd", "C_D", {"CFL3D": 0.003572382, "FUN3D": 0.003561061}),
        ("cd_pressure", "C_D pressure", {"CFL3D": 0.0003816982, "FUN3D": 0.0003823120}),
        ("cd_viscous", "C_D viscous", {"CFL3D": 0.003190684, "FUN3D": 0.003178749}),
        ("cl", "C_L", {"CFL3D": 0.02490011, "FUN3D": 0.02494156}),
        ("cf@0.75", "c_f(x = 0.75)", {"CFL3D": 0.00614937, "FUN3D": 0.00615136}),
        ("cf@0.6321975", "c_f(x = 0.6321975)", {"CFL3D": 0.00518518, "FUN3D": 0.00518689}),
        ("cf@0.8678025", "c_f(x = 0.8678025)", {"CFL3D": 0.00267774, "FUN3D": 0.00268084}),
    ],
    # finest grids of TMR's numerics study (family II, 14.7e6 cells, no point vortex), alpha 10
    "naca0012": [
        ("cd", "C_D", {"CFL3D": 0.0122623, "FUN3D": 0.0122740}),
        ("cd_pressure", "C_D pressure", {"CFL3D": 0.0060611, "FUN3D": 0.0060681}),
        ("cd_viscous", "C_D viscous", {"CFL3D": 0.0062012, "FUN3D": 0.0062059}),
        ("cl", "C_L", {"CFL3D": 1.09065, "FUN3D": 1.09102}),
    ],
}
# the references' Mach number (Prandtl-Glauert comparison of C_L and the pressure drag)
MACH = {"flat-plate": 0.2, "bump": 0.2, "naca0012": 0.15}


def wall_cf(folder, stations):
    reader = vtk.vtkXMLPUnstructuredGridReader()
    path = os.path.join(folder, "flow_wall_0000.pvtu")
    if not os.path.exists(path):
        sys.exit(f"{path}: missing (run with output.vtk: true)")
    reader.SetFileName(path)
    reader.Update()
    centres = vtk.vtkCellCenters()
    centres.SetInputData(reader.GetOutput())
    centres.Update()
    x = vtk_to_numpy(centres.GetOutput().GetPoints().GetData())[:, 0]
    cf = np.abs(vtk_to_numpy(reader.GetOutput().GetCellData().GetArray("skin_friction")))
    order = np.argsort(x)
    return {s: float(np.interp(s, x[order], cf[order])) for s in stations}


def richardson(f1, f2, f3):
    """Observed order and extrapolated value from three levels (coarse to fine, ratio 2)."""
    if (f1 - f2) * (f2 - f3) <= 0 or abs(f2 - f3) >= abs(f1 - f2):
        return float("nan"), float("nan")  # not converging monotonically (order <= 0)
    p = math.log2((f1 - f2) / (f2 - f3))
    return p, f3 + (f3 - f2) / (2**p - 1)


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    quantities = CASES[sys.argv[1]]
    stations = [float(k[3:]) for k, _, _ in quantities if k.startswith("cf@")]
    rows = []
    for folder in sys.argv[2:]:
        s = json.load(open(os.path.join(folder, "summary.json")))
        if not s["converged"]:
            sys.exit(f"{folder}: not converged ({s['reason']})")
        cf = wall_cf(folder, stations) if stations else {}
        row = dict(cells=s["cells"], newton=s["newton_iterations"], ranks=s["ranks"],
                   fallback=s["linear_fallback"], gmres=s["linear_iterations"],
                   time=s["wall_time"], memory=s["peak_memory_mib"])
        for key, _, _ in quantities:
            row[key] = cf[float(key[3:])] if key.startswith("cf@") else s[key]
        rows.append(row)
    print("| level | cells | ranks | Newton steps | GMRES iterations | solve | peak memory | "
          + " | ".join(label for _, label, _ in quantities) + " |")
    print("|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(quantities))
    for level, r in enumerate(rows):
        values = " | ".join(f"{r[key]:.7f}" for key, _, _ in quantities)
        print(f"| {level} | {r['cells']} | {r['ranks']} | {r['newton']}"
              f"{' (LU fallback)' if r['fallback'] else ''} | {r['gmres']} | {r['time']:.1f} s | "
              f"{r['memory']:.0f} MiB | {values} |")
    print()
    for key, label, tmr in quantities:
        p, extrapolated = richardson(*(r[key] for r in rows[-3:]))
        if math.isnan(p):
            finest = rows[-1][key]
            refs = ", ".join(f"{code} {value:.7f} ({finest / value - 1:+.2%})"
                             for code, value in tmr.items())
            print(f"* {label}: not converging monotonically over the three finest levels, n/a; "
                  f"finest {finest:.7f}; TMR {refs}")
            continue
        refs = ", ".join(f"{code} {value:.7f} ({extrapolated / value - 1:+.2%})"
                         for code, value in tmr.items())
        line = f"* {label}: observed order {p:.2f}, extrapolated {extrapolated:.7f}; TMR {refs}"
        if key in ("cl", "cd_pressure"):
            pg = 1 / math.sqrt(1 - MACH[sys.argv[1]] ** 2)
            line += "; x Prandtl-Glauert {:.4f}: ".format(pg) + ", ".join(
                f"{code} {extrapolated * pg / value - 1:+.2%}" for code, value in tmr.items())
        print(line)


if __name__ == "__main__":
    main()
