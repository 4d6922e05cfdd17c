#!/usr/bin/env bash
# The Python tests on NP ranks: the command line first computes the reference gradients of the
# same cases (`karman adjoint` on NP ranks: cli_steady/, cli_unsteady/ in WORK; `karman verify` of
# the design case: cli_design/), then pytest runs tests/python under mpirun -n NP (every rank runs
# every test; the calls are collective).  DESIGN_DIR: the work folder of tests/cli/verify_design.sh
# (ctest runs it first, a fixture), which ran the same `karman verify` on 1 and 2 ranks; its
# npNP/verify.json is used instead of running it again (when it is missing, it is run here).
# usage: run_pytest.sh KARMAN SOURCE_DIR WORK_DIR NP PYTHON PYTHONPATH [DESIGN_DIR]
set -u
karman=$1 src=$2 work=$3 np=$4 python=$5 pypath=$6 design=${7:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
run() { if [ "$np" = 1 ]; then "$@"; else mpirun -n "$np" --oversubscribe "$@"; fi; }

# unsteady: 6 steps in the coarse channel of the control tests (tests/data/control-cylinder.geo, 452
# cells), the cylinder's rotation rate one value per time level (levels 0..6)
printf '%s\n' 0.2 0.35 -0.1 0.5 0.25 -0.3 0.15 > omega.csv
cat > unsteady.yaml <<YAML
mesh: {file: $src/tests/data/control-cylinder.geo, level: 0}
fluid: {viscosity: 1.0e-3}
reference: {velocity: 1.0, length: 0.1}
boundaries:
  inlet: {type: velocity-inlet, velocity: 1.5, direction: [1, 0], profile: parabolic, profile_range: [0, 0.41]}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall, center: [0.2, 0.2], omega: {type: steps, file: omega.csv}}
initial: {velocity: [1, 0]}
time: {mode: unsteady, dt: 0.02, t_end: 0.12}
solver: {rtol: 1e-13, atol: 1e-15, linear: direct}
objective: {type: drag, walls: [cylinder], time: average, window: [0.0, 0.12]}
output: {vtk: false}
petsc: {adj_ksp_type: preonly}   # an LU per level: no time-based preconditioner reuse, reproducible
YAML
run "$karman" adjoint "$src/cases/dfg-2d1/case.yaml" -o cli_steady --set mesh.level=0 \
  --set mesh.cache_dir="$work/cache" > cli_steady.log 2>&1 || { tail -3 cli_steady.log; fail "steady adjoint"; }
run "$karman" adjoint unsteady.yaml -o cli_unsteady --set mesh.cache_dir="$work/cache" \
  > cli_unsteady.log 2>&1 || { tail -3 cli_unsteady.log; fail "unsteady adjoint"; }
# design gradients (every kind of shape parameterization, through the mesh deformation)
if [ -n "$design" ] && [ -s "$design/np$np/verify.json" ]; then
  mkdir -p cli_design && cp "$design/np$np/verify.json" cli_design/ || fail "copy of $design/np$np/verify.json"
else
  run "$karman" verify "$src/tests/data/naca0012-design.yaml" -o cli_design --set mesh.cache_dir="$work/cache" \
    > cli_design.log 2>&1 || { tail -3 cli_design.log; fail "verify of the design case"; }
fi
run "$karman" run "$src/cases/dfg-2d1/case.yaml" -o cli_bad --set mesh.levle=0 > cli_bad_key.log 2>&1 &&
  fail "a misspelt key was accepted"
export PYTHONPATH="$pypath${PYTHONPATH:+:$PYTHONPATH}" KARMAN_SOURCE_DIR="$src" KARMAN_TEST_WORK="$work"
# rank 0 reports; the other ranks write pytest_rank<R>.log (their failures still fail the run)
run bash -c 'r=${OMPI_COMM_WORLD_RANK:-0}
  if [ "$r" = 0 ]; then exec "$0" -m pytest -p no:cacheprovider --color=no -q "$1" -x --durations=0
  else exec "$0" -m pytest -p no:cacheprovider --color=no -q "$1" -x > "pytest_rank$r.log" 2>&1; fi' \
  "$python" "$src/tests/python" || { cat pytest_rank*.log 2> /dev/null | tail -20; fail "pytest on $np rank(s)"; }
