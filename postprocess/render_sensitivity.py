"""Render the surface sensitivity of a karman adjoint run to a PNG with ParaView.

usage: pvpython --force-offscreen-rendering postprocess/render_sensitivity.py OUTDIR WALL OUT.png
                [--zoom R] [--field surface_sensitivity|sensitivity_density]

Shows the flow pressure (OUTDIR/flow.pvd) around the wall, and the wall coloured by the
sensitivity of the objective to a normal displacement of the wall into the fluid
(OUTDIR/sensitivity_WALL.pvd, written by `karman adjoint`), drawn as a thick band with
a diverging colour map centred on zero.
"""
import argparse
import os

from paraview.simple import (ColorBy, CreateView, ExtractSurface, GetColorTransferFunction, OpenDataFile,
                             Render, SaveScreenshot, Show, Tube, UpdatePipeline)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir")
    parser.add_argument("wall")
    parser.add_argument("png")
    parser.add_argument("--zoom", type=float, default=0.0, help="half-width of the view around the wall (0: auto)")
    parser.add_argument("--field", default="sensitivity_density")
    parser.add_argument("--table", default="", help="also write the field by polar angle to this CSV file")
    args = parser.parse_args()

    flow = OpenDataFile(os.path.join(args.outdir, "flow.pvd"))
    wall = OpenDataFile(os.path.join(args.outdir, "sensitivity_%s.pvd" % args.wall))
    UpdatePipeline(proxy=wall)
    bounds = wall.GetDataInformation().GetBounds()
    cx, cy = 0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3])
    size = max(bounds[1] - bounds[0], bounds[3] - bounds[2])
    half = args.zoom if args.zoom > 0 else 1.5 * size

    view = CreateView("RenderView")
    view.ViewSize = [1400, 1000]
    view.OrientationAxesVisibility = 0
    flow_display = Show(flow, view)
    ColorBy(flow_display, ("CELLS", "pressure"))
    pressure_lut = GetColorTransferFunction("pressure")
    pressure_lut.ApplyPreset("Grayscale", True)
    flow_display.SetScalarBarVisibility(view, False)

    band = Tube(Input=ExtractSurface(Input=wall))
    band.Radius = 0.04 * size
    band_display = Show(band, view)
    ColorBy(band_display, ("POINTS", args.field))
    lut = GetColorTransferFunction(args.field)
    lut.ApplyPreset("Cool to Warm", True)
    UpdatePipeline(proxy=band)
    rng = band.PointData[args.field].GetRange()
    m = max(abs(rng[0]), abs(rng[1]))
    lut.RescaleTransferFunction(-m, m)
    band_display.SetScalarBarVisibility(view, True)
    bar = band_display.GetScalarBar(view) if hasattr(band_display, "GetScalarBar") else None
    if bar is not None:
        bar.Title = args.field.replace("_", " ")
        bar.WindowLocation = "Any Location"
        bar.Position = [0.85, 0.2]

    Render(view)  # first render resets the camera; set ours afterwards
    view.CameraPosition = [cx, cy, 10 * half]
    view.CameraFocalPoint = [cx, cy, 0]
    view.CameraViewUp = [0, 1, 0]
    view.CameraParallelProjection = 1
    view.CameraParallelScale = half
    Render(view)
    SaveScreenshot(args.png, view, ImageResolution=[1400, 1000])
    print("wrote %s (%s in [%g, %g])" % (args.png, args.field, rng[0], rng[1]))
    if args.table:
        # the sensitivity around the wall, by polar angle about its centre (for plots and READMEs)
        from paraview import servermanager
        import math
        data = servermanager.Fetch(ExtractSurface(Input=wall))
        arr = data.GetPointData().GetArray(args.field)
        with open(args.table, "w") as out:
            out.write("angle_deg,x,y,%s\n" % args.field)
            rows = []
            for i in range(data.GetNumberOfPoints()):
                x, y, _ = data.GetPoint(i)
                rows.append((math.degrees(math.atan2(y - cy, x - cx)), x, y, arr.GetValue(i)))
            for r in sorted(rows):
                out.write("%.3f,%.8g,%.8g,%.8g\n" % r)
        print("wrote", args.table)


if __name__ == "__main__":
    main()
