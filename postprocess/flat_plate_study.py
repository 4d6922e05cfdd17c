#!/usr/bin/python3
"""Grid-convergence table of the RANS flat plate (cases/tmr-flat-plate) from karman run outputs.

For each output folder (one mesh level each, coarsest first): cells, Newton steps, C_D from
summary.json, and c_f at x = 0.97008 interpolated linearly between the cell-centred wall values
of flow_wall_0000.pvtu (|skin_friction|, whose sign follows the surface tangent).  From the three
finest levels: the observed order p = log2((f1 - f2) / (f2 - f3)) and the Richardson extrapolation
f3 + (f3 - f2) / (2^p - 1) (each refinement halves every spacing).  Printed as Markdown with the
TMR finest-grid values (CFL3D, FUN3D at M 0.2; FUN3D incompressible for c_f) beside.

usage: /usr/bin/python3 postprocess/flat_plate_study.py OUT_L0 OUT_L1 OUT_L2 [OUT_L3 ...]
"""
import json
import math
import os
import sys

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

X_STATION = 0.97008
TMR = {"cd": {"CFL3D": 0.00285985, "FUN3D": 0.00285247},
       "cf": {"CFL3D": 0.00270562, "FUN3D": 0.00270540, "FUN3D incompressible": 0.00272909}}


def wall_cf(folder):
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
    return float(np.interp(X_STATION, x[order], cf[order]))


def richardson(f1, f2, f3):
    """Observed order and extrapolated value from three levels (coarse to fine, ratio 2)."""
    if (f1 - f2) * (f2 - f3) <= 0:
        return float("nan"), float("nan")
    p = math.log2((f1 - f2) / (f2 - f3))
    return p, f3 + (f3 - f2) / (2**p - 1)


def main():
    folders = sys.argv[1:]
    if len(folders) < 3:
        sys.exit(__doc__)
    rows = []
    for folder in folders:
        s = json.load(open(os.path.join(folder, "summary.json")))
        if not s["converged"]:
            sys.exit(f"{folder}: not converged ({s['reason']})")
        rows.append(dict(cells=s["cells"], newton=s["newton_iterations"], ranks=s["ranks"],
                         fallback=s["linear_fallback"], cd=s["cd"], cf=wall_cf(folder)))
    print("| level | cells | ranks | Newton steps | C_D | c_f(x = 0.97008) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for level, r in enumerate(rows):
        print(f"| {level} | {r['cells']} | {r['ranks']} | {r['newton']}"
              f"{' (LU fallback)' if r['fallback'] else ''} | {r['cd']:.7f} | {r['cf']:.7f} |")
    print()
    for key, name in (("cd", "C_D"), ("cf", "c_f(x = 0.97008)")):
        p, extrapolated = richardson(*(r[key] for r in rows[-3:]))
        refs = ", ".join(f"{code} {value:.7f} ({extrapolated / value - 1:+.2%})"
                         for code, value in TMR[key].items())
        print(f"* {name}: observed order {p:.2f}, extrapolated {extrapolated:.7f}; TMR {refs}")


if __name__ == "__main__":
    main()
