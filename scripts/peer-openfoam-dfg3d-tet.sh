#!/usr/bin/env bash
# The peer on the same meshes (issue 42): OpenFOAM's simpleFoam (Debian's openfoam, v1912) on
# the Gmsh tetrahedral DFG 3D-1Z channel of cases/dfg-3d1z/dfg-3d-tet.geo, levels LEVELS, on NP
# ranks, beside karman's defaults on the same .msh.  OpenFOAM: gmshToFoam, walls and cylinder as
# wall patches, the inflow profile 16 U_m y z (H - y)(H - z) / H^4 at the inlet faces' centroids,
# laminar, SIMPLEC (consistent) with 2 non-orthogonal correctors, `bounded Gauss linearUpwind
# grad(U)`, `Gauss linear corrected` Laplacians, GAMG for p, residualControl p 1e-8, U 1e-9;
# forceCoeffs with U 0.2, A_ref 0.041 (c_D, c_L as karman's).  Prints a table and writes it
# to results/peer-openfoam-dfg3d-tet.md.  Needs `apt-get install openfoam`.
# usage: scripts/peer-openfoam-dfg3d-tet.sh [LEVELS] [NP] [GRAD]   (default "0 1", 2, "Gauss linear")
# GRAD: OpenFOAM's gradient scheme (gradSchemes default), e.g. leastSquares; the table goes to
# results/peer-openfoam-dfg3d-tet.md for the default, to ...-GRAD.md (spaces as -) otherwise
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
levels=${1:-"0 1"} np=${2:-2} grad=${3:-"Gauss linear"}
command -v simpleFoam > /dev/null || { echo "simpleFoam not found: apt-get install openfoam" >&2; exit 1; }
. "$root/scripts/mpi-env.sh"
karman=$root/build/release/karman
case_file=$root/cases/dfg-3d1z/case.yaml
work=$root/out/peer-openfoam
suffix=""
[ "$grad" = "Gauss linear" ] || suffix="-${grad// /-}"
mkdir -p "$work"
foam() { # runs an OpenFOAM utility with its environment (its bashrc is not `set -u` clean)
  (set +eu; . /usr/share/openfoam/etc/bashrc > /dev/null 2>&1; "$@")
}
rows=""
for l in $levels; do
  dir=$work/L$l$suffix
  rm -rf "$dir" && mkdir -p "$dir/system" "$dir/constant" "$dir/0"
  # the mesh karman uses (its .karman-cache), in Gmsh's 2.2 format for gmshToFoam
  msh=$("$karman" mesh "$case_file" -o "$dir/karman-mesh" --set mesh.file=dfg-3d-tet.geo \
    --set mesh.level="$l" 2>&1 | sed -n 's/^karman: mesh \(.*\.msh\): .*/\1/p' | head -1)
  [ -f "$msh" ] || { echo "no mesh for level $l" >&2; exit 1; }
  gmsh "$msh" -save -format msh22 -o "$dir/mesh.msh" -v 1 > /dev/null
  H='FoamFile { version 2.0; format ascii; class dictionary; object'
  cat > "$dir/system/controlDict" <<EOC
$H controlDict; }
application simpleFoam; startFrom startTime; startTime 0; stopAt endTime; endTime 5000;
deltaT 1; writeControl timeStep; writeInterval 5000; purgeWrite 1; writeFormat ascii;
functions { forces { type forceCoeffs; libs ("libforces.so"); writeControl timeStep;
  writeInterval 1; patches (cylinder); rho rhoInf; rhoInf 1; CofR (0.5 0.2 0.205);
  liftDir (0 1 0); dragDir (1 0 0); pitchAxis (0 0 1); magUInf 0.2; lRef 0.1; Aref 0.041; } }
EOC
  cat > "$dir/system/fvSchemes" <<EOC
$H fvSchemes; }
ddtSchemes { default steadyState; } gradSchemes { default $grad; }
divSchemes { default none; div(phi,U) bounded Gauss linearUpwind grad(U);
  div((nuEff*dev2(T(grad(U))))) Gauss linear; }
laplacianSchemes { default Gauss linear corrected; } interpolationSchemes { default linear; }
snGradSchemes { default corrected; }
EOC
  cat > "$dir/system/fvSolution" <<EOC
$H fvSolution; }
solvers { p { solver GAMG; smoother GaussSeidel; tolerance 1e-10; relTol 0.05; }
  U { solver smoothSolver; smoother symGaussSeidel; tolerance 1e-12; relTol 0.05; } }
SIMPLE { consistent yes; nNonOrthogonalCorrectors 2; residualControl { p 1e-8; U 1e-9; } }
relaxationFactors { equations { U 0.9; ".*" 0.9; } fields { p 1; } }
EOC
  cat > "$dir/system/decomposeParDict" <<EOC
$H decomposeParDict; }
numberOfSubdomains $np; method hierarchical; coeffs { n ($np 1 1); }
EOC
  printf '%s transportProperties; }\ntransportModel Newtonian; nu 1e-3;\n' "$H" > "$dir/constant/transportProperties"
  printf '%s turbulenceProperties; }\nsimulationType laminar;\n' "$H" > "$dir/constant/turbulenceProperties"
  cat > "$dir/0/p" <<EOC
FoamFile { version 2.0; format ascii; class volScalarField; object p; }
dimensions [0 2 -2 0 0 0 0]; internalField uniform 0;
boundaryField { inlet { type zeroGradient; } outlet { type fixedValue; value uniform 0; }
  walls { type zeroGradient; } cylinder { type zeroGradient; } }
EOC
  foam gmshToFoam "$dir/mesh.msh" -case "$dir" > "$dir/log.gmshToFoam" 2>&1
  (cd "$dir" && /usr/bin/python3 - <<'EOP'
import re
b = open('constant/polyMesh/boundary').read()
for name in ['walls', 'cylinder']:
    b = re.sub(r'(%s\s*\{\s*type\s+)patch;(\s*physicalType\s+)patch;' % name, r'\1wall;\2wall;', b)
open('constant/polyMesh/boundary', 'w').write(b)
def body(path):
    s = open(path).read(); s = s[s.index('FoamFile'):]; return s[s.index('}') + 1:]
num = r'([-\d.eE+]+)'
pts = [tuple(map(float, m)) for m in re.findall(r'\(%s\s+%s\s+%s\)' % (num, num, num), body('constant/polyMesh/points'))]
faces = [tuple(map(int, m.split())) for m in re.findall(r'\d+\(([\d\s]+)\)', body('constant/polyMesh/faces'))]
m = re.search(r'inlet\s*\{[^}]*nFaces\s+(\d+);\s*startFace\s+(\d+);', b)
nf, sf = int(m.group(1)), int(m.group(2))
H, Um = 0.41, 0.45
vals = []
for f in faces[sf:sf + nf]:
    y = sum(pts[i][1] for i in f) / len(f); z = sum(pts[i][2] for i in f) / len(f)
    vals.append(16 * Um * y * z * (H - y) * (H - z) / H**4)
open('0/U', 'w').write('FoamFile { version 2.0; format ascii; class volVectorField; object U; }\n'
                       'dimensions [0 1 -1 0 0 0 0]; internalField uniform (0 0 0);\nboundaryField {\n'
                       ' inlet { type fixedValue; value nonuniform List<vector> %d (\n%s\n); }\n'
                       ' outlet { type zeroGradient; } walls { type noSlip; } cylinder { type noSlip; } }\n'
                       % (nf, '\n'.join('(%.12g 0 0)' % v for v in vals)))
EOP
  )
  cells=$(foam checkMesh -case "$dir" 2>&1 | sed -n 's/^ *cells: *\([0-9]*\)/\1/p')
  nonorth=$(foam checkMesh -case "$dir" 2>&1 | sed -n 's/.*non-orthogonality Max: \([0-9.]*\).*/\1/p')
  foam decomposePar -case "$dir" > "$dir/log.decomposePar" 2>&1
  t0=$(date +%s.%N)
  foam mpirun -n "$np" simpleFoam -case "$dir" -parallel > "$dir/log.simpleFoam" 2>&1
  t_of=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  its=$(sed -n 's/SIMPLE solution converged in \([0-9]*\) iterations/\1/p' "$dir/log.simpleFoam")
  read -r cd_of cl_of < <(tail -1 "$dir/postProcessing/forces/0/coefficient.dat" | awk '{printf "%.6f %.6f\n", $2, $4}')
  # karman's defaults on the same mesh
  t0=$(date +%s.%N)
  mpirun -n "$np" "$karman" run "$case_file" -o "$dir/karman" --set mesh.file=dfg-3d-tet.geo \
    --set mesh.level="$l" --set output.vtk=false > "$dir/karman.log" 2>&1
  t_k=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  newton=$(grep -c '^karman: newton' "$dir/karman.log")
  read -r cd_k cl_k < <(grep '^karman: newton' "$dir/karman.log" | tail -1 | sed 's/.*c_D \([-0-9.]*\)  c_L \([-0-9.]*\).*/\1 \2/')
  row="| $l | $cells | $nonorth° | ${its:-not converged} SIMPLE its, $t_of s | $cd_of | $cl_of | $((newton - 1)) Newton, $t_k s | $cd_k | $cl_k |"
  echo "$row"
  rows+="$row"$'\n'
done
{
  echo "# OpenFOAM simpleFoam (gradSchemes $grad) and karman on the Gmsh tetrahedral DFG 3D-1Z channel ($np ranks)"
  echo
  echo "\`scripts/peer-openfoam-dfg3d-tet.sh \"$levels\" $np \"$grad\"\`, $(date -u +%Y-%m-%d), $(git -C "$root" rev-parse --short HEAD); DFG intervals c_D [6.05, 6.25], c_L [0.008, 0.010]."
  echo
  echo "| level | cells | max non-orthogonality | OpenFOAM | c_D | c_L | karman (defaults) | c_D | c_L |"
  echo "|---:|---:|---:|---|---:|---:|---|---:|---:|"
  printf '%s' "$rows"
} > "$root/results/peer-openfoam-dfg3d-tet$suffix.md"
echo "wrote results/peer-openfoam-dfg3d-tet$suffix.md"
