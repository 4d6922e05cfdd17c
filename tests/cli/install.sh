#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then the installed karman and the installed Python
# package used with nothing of the build or source tree on their paths (a clean environment, the
# case copied out): the installed executable runs DFG 2D-1 on its coarsest mesh on 2 ranks, the
# installed module (imported from PREFIX/lib/python3/dist-packages) solves the same case on 1
# rank, and the drag, lift and pressure drop of the two agree to 1e-10 relative (the steady
# solve's tolerance); the post-processing scripts are installed.
# usage: install.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR PYTHON
set -u
cmake=$1 build=$2 src=$3 work=$4 python=$5
rm -rf "$work" && mkdir -p "$work/case" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" > install.log 2>&1 || { tail -5 install.log; fail "cmake --install"; }
[ -x "$prefix/bin/karman" ] || fail "no $prefix/bin/karman"
[ -f "$prefix/share/karman/postprocess/plot_history.py" ] || fail "post-processing scripts not installed"
cp "$src/cases/dfg-2d1/case.yaml" "$src/cases/dfg-2d1/dfg-channel.geo" case/
clean=(env -i PATH=/usr/bin:/bin HOME="$work" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
       OMPI_MCA_rmaps_base_oversubscribe=1)
"${clean[@]}" mpirun -n 2 --oversubscribe "$prefix/bin/karman" run case/case.yaml -o cli \
  --set mesh.level=0 --set mesh.cache_dir="$work/cache" > cli.log 2>&1 || { tail -5 cli.log; fail "installed karman run"; }
"${clean[@]}" PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" - "$prefix" "$work" > py.log 2>&1 <<'PY' || { tail -8 py.log; fail "installed Python module"; }
import json, os, sys
import karman
prefix, work = sys.argv[1], sys.argv[2]
assert os.path.realpath(karman.__file__).startswith(os.path.realpath(prefix)), karman.__file__
sim = karman.Simulation(karman.Case.load(os.path.join(work, "case", "case.yaml"),
                                         {"mesh.level": 0, "mesh.cache_dir": os.path.join(work, "cache")}))
sim.solve()
f = sim.forces()
cli = json.load(open(os.path.join(work, "cli", "summary.json")))
for ours, theirs in ((f["cd"], cli["cd"]), (f["cl"], cli["cl"]), (f["delta_p"], cli["delta_p"])):
    assert abs(ours - theirs) <= 1e-10 * abs(theirs), (ours, theirs)
print(f"installed module {karman.__file__}: cd {f['cd']:.12f} (CLI {cli['cd']:.12f})")
PY
cat py.log | grep "installed module"
echo "install: OK"
