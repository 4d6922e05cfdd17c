"""Open a karman ParaView collection (.pvd) with ParaView and print what it holds.

usage: pvpython postprocess/inspect_pvd.py OUTDIR/flow.pvd [more.pvd ...]

Prints, per file: the time steps, the number of cells and points (all pieces
merged) and every cell and point array with its number of components and range at
the last time step.  Needs ParaView's Python (Debian: python3-paraview, which conflicts with
libvtk9-dev, so use it on a post-processing machine or swap the packages).
"""
import sys

from paraview.simple import OpenDataFile, UpdatePipeline


def inspect(path):
    reader = OpenDataFile(path)
    times = list(reader.TimestepValues) if hasattr(reader, "TimestepValues") else []
    if not isinstance(times, list):
        times = [times]
    last = times[-1] if times else 0.0
    UpdatePipeline(time=last, proxy=reader)
    info = reader.GetDataInformation()
    print(f"{path}: {len(times)} time step(s) {times[:3]}{'...' if len(times) > 3 else ''}")
    print(f"  cells {info.GetNumberOfCells()}, points {info.GetNumberOfPoints()}")
    for kind, data in (("cell", reader.CellData), ("point", reader.PointData)):
        for name in data.keys():
            array = data[name]
            ranges = [array.GetRange(c) for c in range(array.GetNumberOfComponents())]
            print(f"  {kind} array {name}: {array.GetNumberOfComponents()} component(s), range {ranges}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        inspect(p)
