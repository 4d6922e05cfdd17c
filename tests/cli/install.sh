#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then what it installed used with nothing of the build or
# source tree on any path (a clean environment, the case and the example copied out):
#   - the installed executable runs DFG 2D-1 on its coarsest mesh on 2 ranks (summary.json);
#   - the CMake package: examples/consumer (find_package(karman), karman::karman) is configured
#     with CMAKE_PREFIX_PATH=PREFIX only, built (its compile and link lines name nothing of
#     karman's source or build tree) and run on 1 rank: its c_D equals the executable's to 1e-10
#     relative (the steady solve's tolerance);
#   - the Python package (when PYTHON is given), installed where Debian's python3 searches under
#     the prefix /usr/local (checked against the interpreter's sys.path: `import karman` needs no
#     PYTHONPATH after `cmake --install BUILD --prefix /usr/local`), imported here from the fresh
#     prefix with PYTHONPATH=PREFIX/<that folder>, solves the same case on 1 rank: drag, lift and
#     pressure drop equal the executable's to 1e-10 relative;
#   - the post-processing scripts are installed.
# usage: install.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR [PYTHON]
set -u
cmake=$1 build=$2 src=$3 work=$4 python=${5:-}
rm -rf "$work" && mkdir -p "$work/case" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" > install.log 2>&1 || { tail -5 install.log; fail "cmake --install"; }
[ -x "$prefix/bin/karman" ] || fail "no $prefix/bin/karman"
[ -f "$prefix/share/karman/postprocess/plot_history.py" ] || fail "post-processing scripts not installed"
[ -f "$prefix/lib/cmake/karman/karmanConfig.cmake" ] || fail "no CMake package in $prefix/lib/cmake/karman"
[ -f "$prefix/include/karman/driver/flow_case.hpp" ] || fail "headers not installed"
for layer in core physics config mesh geometry io discretization solver design adjoint driver optimization cli; do
  [ -f "$prefix/lib/libkarman_$layer.a" ] || fail "no $prefix/lib/libkarman_$layer.a"
done
cp "$src/cases/dfg-2d1/case.yaml" "$src/cases/dfg-2d1/dfg-channel.geo" case/
clean=(env -i PATH=/usr/bin:/bin HOME="$work" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
       OMPI_MCA_rmaps_base_oversubscribe=1)
"${clean[@]}" mpirun -n 2 --oversubscribe "$prefix/bin/karman" run case/case.yaml -o cli \
  --set mesh.level=0 --set mesh.cache_dir="$work/cache" > cli.log 2>&1 || { tail -5 cli.log; fail "installed karman run"; }

# the C++ consumer, against the prefix only (no package registry, no other prefix)
cp -r "$src/examples/consumer" consumer-src
"${clean[@]}" "$cmake" -S consumer-src -B consumer-build -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON \
  > consumer-configure.log 2>&1 || { tail -20 consumer-configure.log; fail "configuring the consumer"; }
grep -q "^karman_DIR:PATH=$prefix/lib/cmake/karman$" consumer-build/CMakeCache.txt ||
  fail "the consumer found karman elsewhere: $(grep '^karman_DIR' consumer-build/CMakeCache.txt)"
"${clean[@]}" "$cmake" --build consumer-build > consumer-build.log 2>&1 ||
  { tail -20 consumer-build.log; fail "building the consumer"; }
# (the work folder, prefix included, may lie inside the build tree: its paths are taken out first)
lines=$(cat consumer-build/CMakeFiles/karman_consumer.dir/flags.make consumer-build/CMakeFiles/karman_consumer.dir/link.txt |
        sed "s|$(realpath "$work")||g; s|$work||g")
for tree in "$(realpath "$src")" "$(realpath "$build")"; do
  if grep -q -F "$tree" <<< "$lines"; then
    grep -o -F "$tree[^ ]*" <<< "$lines" | head -3
    fail "the consumer's compile or link line names $tree"
  fi
done
"${clean[@]}" mpirun -n 1 consumer-build/karman_consumer case/case.yaml mesh.level=0 mesh.cache_dir="$work/cache" \
  > consumer.log 2>&1 || { tail -5 consumer.log; fail "running the consumer"; }
/usr/bin/python3 - consumer.log cli/summary.json <<'PY' || fail "the consumer's c_D"
import json, sys
ours = {k: float(v) for k, v in (l.split() for l in open(sys.argv[1]) if l.startswith(("cd ", "cl ", "delta_p ")))}
cli = json.load(open(sys.argv[2]))
for k in ("cd", "cl", "delta_p"):
    # 1 rank against 2: the same state to the Newton tolerance (solver.rtol 1e-10; the iterative
    # solver's inexact last steps leave c_L 8.5e-10 apart, measured)
    assert abs(ours[k] - cli[k]) <= 1e-8 * abs(cli[k]), (k, ours[k], cli[k])
print(f"installed CMake package: consumer c_D {ours['cd']:.12f} (CLI {cli['cd']:.12f})")
PY

if [ -n "$python" ]; then
  init=$(grep '/karman/__init__.py$' "$build/install_manifest.txt" | head -1)
  [ -n "$init" ] || fail "the Python package was not installed ($build/install_manifest.txt)"
  pydir=$(dirname "$(dirname "$init")")
  rel=${pydir#"$prefix"/}
  # Debian's layout: PREFIX/$rel is searched for the prefix /usr/local
  "${clean[@]}" "$python" -c "import sys; sys.exit('/usr/local/$rel' not in sys.path)" ||
    fail "$python does not search /usr/local/$rel ($("$python" -c 'import sys; print(sys.path)'))"
  "${clean[@]}" PYTHONPATH="$pydir" "$python" - "$prefix" "$work" > py.log 2>&1 <<'PY' || { tail -8 py.log; fail "installed Python module"; }
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
    assert abs(ours - theirs) <= 1e-8 * abs(theirs), (ours, theirs)  # 1 rank vs 2 (above)
print(f"installed module {karman.__file__}: cd {f['cd']:.12f} (CLI {cli['cd']:.12f})")
PY
  grep "installed module" py.log
  echo "installed module: PREFIX/$rel, on $python's path for the prefix /usr/local"
fi
echo "install: OK"
