#!/usr/bin/env bash
# Bad input as a new user would try it, on 1 and 2 ranks: each must give exactly one
# "karman: error: ..." line naming the problem, a non-zero exit status, no PETSc
# traceback, and no hang (every run is under a timeout).
# usage: bad_input.sh KARMAN SOURCE_DIR WORK_DIR
set -u
karman=$1 src=$2 work=$3
mkdir -p "$work" && cd "$work" || exit 1
geo="$src/tests/data/control-cylinder.geo" # (the DFG channel, coarse: 452 cells)
failures=0

write_case() { # $1 file, $2 fluid block, $3 boundaries block, $4 mesh file
  cat > "$1" <<YAML
mesh: {file: ${4:-$geo}, level: 0, cache_dir: $work/cache}
fluid: $2
boundaries:
$3
YAML
}
good_bcs="  inlet: {type: velocity-inlet, velocity: 0.3}
  outlet: {type: pressure-outlet}
  walls: {type: wall}
  cylinder: {type: wall}"

write_case ok.yaml "{viscosity: 1.0e-3}" "$good_bcs"
write_case negative.yaml "{viscosity: -1.0e-3}" "$good_bcs"
write_case unknown-key.yaml "{viscosity: 1.0e-3, viscosty: 2}" "$good_bcs"
write_case wrong-name.yaml "{viscosity: 1.0e-3}" "${good_bcs/cylinder:/cylindre:}"
write_case missing-bc.yaml "{viscosity: 1.0e-3}" "$(echo "$good_bcs" | grep -v cylinder)"
write_case missing-mesh.yaml "{viscosity: 1.0e-3}" "$good_bcs" "$work/nothing.geo"
printf 'mesh: {file: a.geo\nfluid: {viscosity: 1}\n' > syntax.yaml
write_case duplicate.yaml "{viscosity: 1.0e-3}" "$good_bcs
  outlet: {type: wall}"
printf 'not a mesh\n' > broken.msh
write_case broken-mesh.yaml "{viscosity: 1.0e-3}" "$good_bcs" "$work/broken.msh"

check() { # $1 ranks, $2 expected fragment, $3 expected exit status ("nonzero" or a number), rest: args
  local np=$1 expect=$2 status_want=$3
  shift 3
  local out err status
  if [ "$np" = 1 ]; then
    timeout 120 "$karman" "$@" > out.txt 2> err.txt
  else
    timeout 120 mpirun -n "$np" --oversubscribe "$karman" "$@" > out.txt 2> err.txt
  fi
  status=$?
  local lines
  lines=$(grep -c '^karman: error' err.txt)
  local ok=1
  [ "$status" = 124 ] && { echo "HANG ($np ranks): karman $*"; ok=0; }
  [ "$status_want" = nonzero ] && [ "$status" = 0 ] && ok=0
  [ "$status_want" != nonzero ] && [ "$status" != "$status_want" ] && [ "$status_want" != any ] && ok=0
  [ "$lines" != 1 ] && ok=0
  grep -q -- "$expect" err.txt || ok=0
  grep -q 'PETSC ERROR' err.txt && ok=0
  if [ $ok = 1 ]; then
    echo "ok   ($np ranks, exit $status): $(grep '^karman: error' err.txt)"
  else
    echo "FAIL ($np ranks, exit $status, $lines error lines, expected '$expect'): karman $*"
    sed 's/^/    /' err.txt | head -20
    failures=$((failures + 1))
  fi
}

for np in 1 2; do
  check $np "nonexistent.yaml: case file not found" nonzero mesh nonexistent.yaml -o o
  check $np "syntax.yaml:2:6: YAML syntax error" nonzero mesh syntax.yaml -o o
  check $np "duplicate.yaml:8: duplicate key 'outlet' (first given on line 5)" nonzero mesh duplicate.yaml -o o
  check $np "unknown key 'viscosty' in 'fluid'" nonzero mesh unknown-key.yaml -o o
  check $np "'fluid.viscosity' expected a number > 0, got '-1.0e-3'" nonzero mesh negative.yaml -o o
  check $np "boundaries.cylindre: the mesh" nonzero mesh wrong-name.yaml -o o
  check $np "mesh boundary cylinder" nonzero mesh missing-bc.yaml -o o
  check $np "nothing.geo' not found" nonzero mesh missing-mesh.yaml -o o
  check $np "not a Gmsh .msh file" nonzero mesh broken-mesh.yaml -o o
  check $np "unknown key 'colour'" nonzero mesh ok.yaml -o o --set fluid.colour=red
  check $np "unknown command 'mesa'" 2 mesa ok.yaml
  rm -rf o
  # the message names where the best state's residual is largest, and the ParaView series holds
  # that residual per equation and cell
  check $np "with its residual per cell (residual_<field>); the largest is the" nonzero run ok.yaml \
    -o o --set solver.max_iterations=2
  [ -s o/last_good.pvd ] || { echo "FAIL: no last_good.pvd after a failed solve"; failures=$((failures + 1)); }
  grep -q 'Name="residual_velocity"' o/last_good_0000.pvtu ||
    { echo "FAIL: no residual_velocity in last_good_0000.pvtu"; failures=$((failures + 1)); }
  check $np "--restart applies to unsteady runs" nonzero run ok.yaml -o o --restart
  check $np "mesh.refine 1 needs a Gmsh .geo as mesh.file" nonzero mesh broken-mesh.yaml -o o \
    --set mesh.refine=1
  check $np "adjoint.error_estimate needs mesh.file to be a Gmsh .geo" nonzero adjoint \
    broken-mesh.yaml -o o --set adjoint.error_estimate=true
  check $np "adjoint.error_estimate refines the mesh once more: mesh.refine must be below 3" \
    nonzero adjoint ok.yaml -o o --set adjoint.error_estimate=true --set mesh.refine=3
  check $np "karman adapt needs mesh.file to be a Gmsh .geo" nonzero adapt broken-mesh.yaml -o o
  check $np "karman adapt adapts steady cases" nonzero adapt ok.yaml -o o --set time.mode=unsteady
  check $np "'adapt.growth' expected a number" nonzero adapt ok.yaml -o o --set adapt.growth=1
  check $np "adapt.anisotropic is for 2D meshes" nonzero adapt ok.yaml -o o \
    --set adapt.anisotropic=true --set mesh.dimension=3
  check $np "objective.walls: no boundary named 'cylindre'" nonzero adjoint ok.yaml -o o --set "objective.walls=[cylindre]"
  check $np "objective.probes: point (9., 0.2, 0.) is outside the mesh" nonzero adjoint ok.yaml -o o --set objective.type=probe-match --set "objective.probes=[[9, 0.2]]" --set "objective.observed=[[0, 0, 0]]"
  check $np "adjoint.parameters: the case has no parameter 'fluid.viscocity'" nonzero adjoint ok.yaml -o o --set "adjoint.parameters=[fluid.viscocity]"
  check $np "solver.rtol is 0.001: the unsteady adjoint needs time steps converged to 1e-08 or below" nonzero adjoint ok.yaml -o o --set time.mode=unsteady --set time.t_end=0.02 --set solver.rtol=1e-3
  rm -rf o
  check $np "--restart: no complete checkpoint in o/checkpoints" nonzero run ok.yaml -o o --restart --set time.mode=unsteady
  check $np "initial.file '$work/broken.msh' is not a karman fields file (format '')" nonzero run ok.yaml -o o --set initial.file="$work/broken.msh"
  check $np "initial.file '$work/nothing.h5' not found" nonzero run ok.yaml -o o --set initial.file="$work/nothing.h5"
  check $np "objective.points: point (5., 5., 0.) is outside the mesh" nonzero run ok.yaml -o o --set "objective.points=[[5, 5], [0.3, 0.2]]"
  # RANS: a negative viscosity ratio at inflow, a case without any wall
  check $np "'turbulence.freestream_ratio' expected a number >= 0, got '-3'" nonzero run ok.yaml -o o --set turbulence.model=sa-neg --set turbulence.freestream_ratio=-3
  check $np "ok.yaml: turbulence: the case has no wall" nonzero run ok.yaml -o o --set turbulence.model=sa-neg --set boundaries.walls.type=symmetry --set boundaries.cylinder.type=symmetry
  # the outlet made a wall: the inflow has nowhere to go (it ran 100 Newton steps without converging)
  check $np "ok.yaml: boundaries: no boundary fixes the pressure (a pressure-outlet or far-field), and the prescribed velocities carry a net inflow of" nonzero run ok.yaml -o o --set boundaries.outlet.type=wall
done
# the good case still works
timeout 120 "$karman" mesh ok.yaml -o o > out.txt 2> err.txt || { echo "FAIL: ok.yaml"; cat err.txt; failures=$((failures + 1)); }
echo "$failures failure(s)"
[ "$failures" = 0 ]
