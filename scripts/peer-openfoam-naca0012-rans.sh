#!/usr/bin/env bash
# The peer on the same meshes for the RANS NACA 0012 (TMR 2DN00, Re 6e6, 10 degrees; issue 44):
# OpenFOAM's simpleFoam (Debian's openfoam, v1912) with its SpalartAllmaras model on the C-meshes
# of cases/naca0012-rans/naca0012-rans.geo, levels LEVELS; levels >= 2 on NP ranks (decomposePar
# hierarchical (1 NP 1): the halves y > 0 and y < 0 for NP 2; Debian's v1912 ships only the
# dummy stub of scotchDecomp), the others on 1 rank.  The 2D mesh is gmsh's, made with karman's arguments (-2
# -setnumber level N -nt 1, msh 2.2 here); a python step extrudes every quadrilateral into one
# hexahedron of thickness DZ = 0.1 (the 2D cells unchanged) with patches wall, farfield, outlet
# and frontAndBack (empty) for gmshToFoam; checkMesh's non-orthogonality and aspect ratio are
# reported.  Flow: U = (cos 10, sin 10), nu = 1/6e6, nuTilda = 3 nu and nut = nuTilda fv1(3) in
# the free stream and at the start, freestreamVelocity / freestreamPressure (p = 0) / freestream
# on farfield and outlet, noSlip and nuTilda = nut = 0 on the wall.  Numerics: steady SIMPLEC
# (consistent; relaxation U 0.7, nuTilda 0.7, p 1), `bounded Gauss linearUpwind grad(U)` for U,
# `bounded Gauss upwind` for nuTilda (first order, as TMR's CFL3D runs), `Gauss linear
# corrected` Laplacians, meshWave wall
# distance, GAMG for p, smoothSolver for U and nuTilda; residualControl p 1e-7, U 1e-8, nuTilda
# 1e-8, at most MAXIT (20000) iterations and LIMIT (2400) s of wall time per level (then
# `stopAt writeNow` is set in the running case's controlDict).  forceCoeffs on the wall with
# magUInf 1, lRef 1, Aref DZ (per unit span), wind axes.  Per level: cells, iterations, wall time,
# peak memory (/usr/bin/time -v, max resident set size summed over the ranks), final C_D and C_L
# and the iteration (and rank 0's ExecutionTime) from which C_D stays within 1 % and 0.1 % of its
# final value.  Prints the table and writes it to results/peer-openfoam-naca0012-rans.md.
# karman is not run (its figures are in cases/naca0012-rans/README.md).
# Needs `apt-get install openfoam gmsh`.
# usage: scripts/peer-openfoam-naca0012-rans.sh [LEVELS] [NP]   (default "0 1 2", 2)
# environment: MAXIT (default 20000), LIMIT (wall seconds per level, default 2400), CONSISTENT
# (SIMPLEC: yes, SIMPLE: no; default yes), RELAX_U, RELAX_NUT, RELAX_P (default 0.7, 0.7, 1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
levels=${1:-"0 1 2"} np=${2:-2}
maxit=${MAXIT:-20000} limit=${LIMIT:-2400}
consistent=${CONSISTENT:-yes} relax_u=${RELAX_U:-0.7} relax_nut=${RELAX_NUT:-0.7} relax_p=${RELAX_P:-1}
command -v simpleFoam > /dev/null || { echo "simpleFoam not found: apt-get install openfoam" >&2; exit 1; }
command -v gmsh > /dev/null || { echo "gmsh not found: apt-get install gmsh" >&2; exit 1; }
. "$root/scripts/mpi-env.sh"
geo=$root/cases/naca0012-rans/naca0012-rans.geo
work=$root/out/peer-openfoam-naca0012-rans
mkdir -p "$work"
foam() { # runs an OpenFOAM utility with its environment (its bashrc is not `set -u` clean, and
  # takes the positional parameters as its own arguments: with the command's it took 1.5 min)
  (cmd=("$@") && set -- && set +eu && . /usr/share/openfoam/etc/bashrc > /dev/null 2>&1; "${cmd[@]}")
}
# free stream: 10 degrees, nu = 1/6e6, nuTilda = 3 nu, nut = nuTilda fv1(chi = 3), cv1 = 7.1
read -r ux uy nu nutilda nut < <(/usr/bin/python3 -c "
import math
a = math.radians(10); nu = 1 / 6e6; chi = 3.0; fv1 = chi**3 / (chi**3 + 7.1**3)
print(f'{math.cos(a):.16g} {math.sin(a):.16g} {nu:.16g} {chi * nu:.16g} {chi * nu * fv1:.16g}')")
dz=0.1
H='FoamFile { version 2.0; format ascii; class dictionary; object'
rows="" checks=""
for l in $levels; do
  n=1
  [ "$l" -ge 2 ] && n=$np
  dir=$work/L$l
  rm -rf "$dir" && mkdir -p "$dir/system" "$dir/constant" "$dir/0"
  # karman's mesh: gmsh -2 -setnumber level N -nt 1 (src/mesh/gmsh_mesher.cpp), here as msh 2.2
  gmsh "$geo" -2 -setnumber level "$l" -nt 1 -format msh22 -o "$dir/mesh2d.msh" -v 1 > "$dir/log.gmsh" 2>&1
  # one layer of hexahedra: node i at z = 0 and z = DZ, each quadrilateral (counter-clockwise)
  # a hexahedron, each boundary line a quadrilateral of its patch, both faces of each
  # quadrilateral in frontAndBack
  /usr/bin/python3 - "$dir/mesh2d.msh" "$dir/mesh.msh" "$dz" <<'EOP'
import sys
src, dst, dz = sys.argv[1], sys.argv[2], float(sys.argv[3])
lines = open(src).read().split('\n')
sec = {l: i for i, l in enumerate(lines) if l.startswith('$')}
names = {}
for l in lines[sec['$PhysicalNames'] + 2:sec['$EndPhysicalNames']]:
    d, t, nm = l.split(); names[int(t)] = nm.strip('"')
xy = {}
for l in lines[sec['$Nodes'] + 2:sec['$EndNodes']]:
    i, x, y, z = l.split(); xy[int(i)] = (float(x), float(y))
quads, edges = [], []
for l in lines[sec['$Elements'] + 2:sec['$EndElements']]:
    v = list(map(int, l.split())); typ, nt = v[1], v[2]; phys = names[v[3]]; nodes = v[3 + nt:]
    if typ == 3 and phys == 'fluid': quads.append(nodes)
    elif typ == 1 and phys in ('wall', 'farfield', 'outlet'): edges.append((phys, nodes))
    else: sys.exit('unexpected element type %d in %s' % (typ, phys))
used = sorted({i for q in quads for i in q})
num = {old: k + 1 for k, old in enumerate(used)}
N = len(used)
flipped = 0
for q in quads:
    a = sum(xy[q[k]][0] * xy[q[(k + 1) % 4]][1] - xy[q[(k + 1) % 4]][0] * xy[q[k]][1] for k in range(4))
    if a < 0: q.reverse(); flipped += 1
pid = {'wall': 1, 'farfield': 2, 'outlet': 3, 'frontAndBack': 4, 'fluid': 5}
out = ['$MeshFormat', '2.2 0 8', '$EndMeshFormat', '$PhysicalNames', '5',
       '2 1 "wall"', '2 2 "farfield"', '2 3 "outlet"', '2 4 "frontAndBack"', '3 5 "fluid"',
       '$EndPhysicalNames', '$Nodes', str(2 * N)]
out += ['%d %.17g %.17g 0' % (num[i], *xy[i]) for i in used]
out += ['%d %.17g %.17g %.17g' % (num[i] + N, *xy[i], dz) for i in used]
els = []
for phys, (a, b) in edges:
    a, b = num[a], num[b]; els.append((3, pid[phys], (a, b, b + N, a + N)))
for q in quads:
    q = [num[i] for i in q]
    els.append((3, 4, tuple(reversed(q)))); els.append((3, 4, tuple(i + N for i in q)))
    els.append((5, 5, tuple(q) + tuple(i + N for i in q)))
out += ['$EndNodes', '$Elements', str(len(els))]
out += ['%d %d 2 %d %d %s' % (k + 1, t, p, p, ' '.join(map(str, v))) for k, (t, p, v) in enumerate(els)]
out += ['$EndElements', '']
open(dst, 'w').write('\n'.join(out))
print('%d quadrilaterals (%d reordered counter-clockwise), %d boundary lines' % (len(quads), flipped, len(edges)))
EOP
  cat > "$dir/system/controlDict" <<EOC
$H controlDict; }
application simpleFoam; startFrom startTime; startTime 0; stopAt endTime; endTime $maxit;
deltaT 1; writeControl timeStep; writeInterval $maxit; purgeWrite 1; writeFormat ascii;
writePrecision 10; runTimeModifiable true;
functions { forces { type forceCoeffs; libs ("libforces.so"); writeControl timeStep;
  writeInterval 1; patches (wall); rho rhoInf; rhoInf 1; CofR (0.25 0 0);
  liftDir (-$uy $ux 0); dragDir ($ux $uy 0); pitchAxis (0 0 1); magUInf 1; lRef 1; Aref $dz; } }
EOC
  cat > "$dir/system/fvSchemes" <<EOC
$H fvSchemes; }
ddtSchemes { default steadyState; } gradSchemes { default Gauss linear; }
divSchemes { default none; div(phi,U) bounded Gauss linearUpwind grad(U);
  div(phi,nuTilda) bounded Gauss upwind; div((nuEff*dev2(T(grad(U))))) Gauss linear; }
laplacianSchemes { default Gauss linear corrected; } interpolationSchemes { default linear; }
snGradSchemes { default corrected; } wallDist { method meshWave; }
EOC
  cat > "$dir/system/fvSolution" <<EOC
$H fvSolution; }
solvers { p { solver GAMG; smoother GaussSeidel; tolerance 1e-12; relTol 0.05; }
  "(U|nuTilda)" { solver smoothSolver; smoother symGaussSeidel; tolerance 1e-14; relTol 0.1; } }
SIMPLE { consistent $consistent; nNonOrthogonalCorrectors 0;
  residualControl { p 1e-7; U 1e-8; nuTilda 1e-8; } }
relaxationFactors { equations { U $relax_u; nuTilda $relax_nut; } fields { p $relax_p; } }
EOC
  cat > "$dir/system/decomposeParDict" <<EOC
$H decomposeParDict; }
numberOfSubdomains $n; method hierarchical; coeffs { n (1 $n 1); }
EOC
  foam gmshToFoam "$dir/mesh.msh" -case "$dir" > "$dir/log.gmshToFoam" 2>&1
  (cd "$dir" && /usr/bin/python3 - <<'EOP'
import re
b = open('constant/polyMesh/boundary').read()
def retype(b, name, typ):
    m = re.search(r'\n\s*%s\s*\{[^}]*\}' % name, b)
    blk = re.sub(r'\n\s*physicalType\s+\w+;', '', m.group(0))
    blk = re.sub(r'(\n\s*type\s+)\w+;', r'\g<1>%s;' % typ, blk)
    return b[:m.start()] + blk + b[m.end():]
b = retype(retype(b, 'wall', 'wall'), 'frontAndBack', 'empty')
open('constant/polyMesh/boundary', 'w').write(b)
EOP
  )
  foam checkMesh -case "$dir" > "$dir/log.checkMesh" 2>&1 || true
  cells=$(sed -n 's/^ *cells: *\([0-9]*\)/\1/p' "$dir/log.checkMesh" | head -1)
  nonorth=$(sed -n 's/.*non-orthogonality Max: \([0-9.e+-]*\).*/\1/p' "$dir/log.checkMesh" | head -1)
  aspect=$(sed -n 's/.*Max aspect ratio[:=] *\([0-9.e+-]*\).*/\1/p' "$dir/log.checkMesh" | head -1)
  checks+="level $l: $(grep -E 'aspect ratio|non-orthogonality Max|Max skewness|mesh checks|Mesh OK' \
    "$dir/log.checkMesh" | grep -v '<<' | sed 's/^ *//' | paste -sd '|' | sed 's/|/; /g')"$'\n'

  printf '%s transportProperties; }\ntransportModel Newtonian; nu %s;\n' "$H" "$nu" > "$dir/constant/transportProperties"
  printf '%s turbulenceProperties; }\nsimulationType RAS;\nRAS { RASModel SpalartAllmaras; turbulence on; printCoeffs on; }\n' "$H" > "$dir/constant/turbulenceProperties"
  field() { # name class dimensions internal farfield-bc wall-bc
    cat > "$dir/0/$1" <<EOC
FoamFile { version 2.0; format ascii; class $2; object $1; }
dimensions $3; internalField uniform $4;
boundaryField { farfield { $5 } outlet { $5 } wall { $6 } frontAndBack { type empty; } }
EOC
  }
  field U volVectorField '[0 1 -1 0 0 0 0]' "($ux $uy 0)" \
    "type freestreamVelocity; freestreamValue uniform ($ux $uy 0);" 'type noSlip;'
  field p volScalarField '[0 2 -2 0 0 0 0]' 0 'type freestreamPressure; freestreamValue uniform 0;' \
    'type zeroGradient;'
  field nuTilda volScalarField '[0 2 -1 0 0 0 0]' "$nutilda" \
    "type freestream; freestreamValue uniform $nutilda;" 'type fixedValue; value uniform 0;'
  field nut volScalarField '[0 2 -1 0 0 0 0]' "$nut" \
    "type calculated; value uniform $nut;" 'type fixedValue; value uniform 0;'

  # the wall-time limit: stopAt writeNow in the running case's controlDict after LIMIT s
  rm -f "$dir/.done"
  trap 'touch "$dir/.done" 2> /dev/null || true' EXIT # a failed step must not leave it running
  (exec > /dev/null 2>&1; end=$((SECONDS + limit))
    while [ $SECONDS -lt $end ] && [ ! -e "$dir/.done" ]; do sleep 2; done
    [ -e "$dir/.done" ] || sed -i 's/stopAt endTime;/stopAt writeNow;/' "$dir/system/controlDict") &
  watcher=$!
  t0=$(date +%s.%N)
  if [ "$n" -gt 1 ]; then
    foam decomposePar -case "$dir" > "$dir/log.decomposePar" 2>&1
    # every rank under /usr/bin/time -v: its own peak resident set size
    foam mpirun --allow-run-as-root --oversubscribe -np "$n" sh -c \
      'exec /usr/bin/time -v -o "$0/time.$OMPI_COMM_WORLD_RANK" simpleFoam -parallel -case "$0"' \
      "$dir" > "$dir/log.simpleFoam" 2>&1 || echo "level $l: simpleFoam failed" >&2
  else
    foam /usr/bin/time -v -o "$dir/time.0" simpleFoam -case "$dir" > "$dir/log.simpleFoam" 2>&1 ||
      echo "level $l: simpleFoam failed" >&2
  fi
  t_of=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  touch "$dir/.done"
  wait "$watcher" || true
  row=$(/usr/bin/python3 - "$dir" "$l" "$cells" "$nonorth" "$aspect" "$n" "$t_of" <<'EOP'
import glob, re, sys
d, l, cells, nonorth, aspect, n, t = sys.argv[1:]
log = open(d + '/log.simpleFoam').read()
# rank 0's ExecutionTime at the end of each iteration
et, it = {}, None
for line in log.split('\n'):
    m = re.match(r'Time = (\d+)$', line)
    if m: it = int(m.group(1))
    m = re.match(r'ExecutionTime = ([\d.e+-]+) s\s+ClockTime = (\d+) s', line)
    if m and it is not None: et[it] = float(m.group(1))
res = {}
for f, r in re.findall(r'Solving for (\w+), Initial residual = ([\d.e+-]+)', log): res[f] = r
conv = re.search(r'SIMPLE solution converged in (\d+) iterations', log)
last = max(et) if et else 0
status = ('converged, %s its' % conv.group(1) if conv else
          'not converged: stopped at it %d (%s)' % (last, 'FOAM FATAL' if 'FOAM FATAL' in log else
          'crashed: floating point exception' if 'sigFpe' in log else
          'wall-time limit' if 'writeNow' in open(d + '/system/controlDict').read() else 'cap'))
rss = sum(int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', open(f).read()).group(1))
          for f in glob.glob(d + '/time.*'))
rows = []
for f in glob.glob(d + '/postProcessing/forces/0/coefficient*.dat'):
    hdr = None
    for line in open(f):
        if line.startswith('# Time'): hdr = line[1:].split()
        elif not line.startswith('#') and line.strip():
            v = line.split(); rows.append((int(float(v[0])), float(v[hdr.index('Cd')]), float(v[hdr.index('Cl')])))
rows.sort()
# final values: the last iteration's if converged, else the means over the last tenth of the
# iterations (at least 100; a limit cycle is averaged), with that tail's range of C_D
tail = rows[-1:] if conv else rows[-max(100, len(rows) // 10):]
cd = sum(r[1] for r in tail) / len(tail); cl = sum(r[2] for r in tail) / len(tail)
spread = '' if conv else ' (mean of the last %d its; C_D %.7f..%.7f, C_L %.6f..%.6f)' % (
    len(tail), min(r[1] for r in tail), max(r[1] for r in tail), min(r[2] for r in tail), max(r[2] for r in tail))
def first(series, tol):
    k = len(series)
    while k > 0 and abs(series[k - 1][1] - cd) <= tol * abs(cd): k -= 1
    if k == len(series): return 'never'
    return 'it %d, %.1f s' % (series[k][0], et.get(series[k][0], float('nan')))
# the same on the mean of the last 10 iterations (the limit cycles' periods are 2 to 10)
ma = [(rows[k][0], sum(r[1] for r in rows[k - 9:k + 1]) / 10) for k in range(9, len(rows))]
def settle(tol):
    return '%s (10-it mean: %s)' % (first(rows, tol), first(ma, tol))
print('| %s | %s | %s | %s | %s | %s | %s s (ExecutionTime %.1f s) | %.0f MiB | %.7f | %.6f%s | %s | %s | %s |' % (
    l, n, cells, nonorth, aspect, status, t, et.get(last, float('nan')), rss / 1024, cd, cl, spread,
    settle(0.01), settle(0.001), ', '.join('%s %s' % kv for kv in res.items())))
EOP
  )
  echo "$row"
  rows+="$row"$'\n'
done
{
  echo "# OpenFOAM simpleFoam (SpalartAllmaras) on karman's NACA 0012 C-meshes (TMR 2DN00, 10°)"
  echo
  echo "\`MAXIT=$maxit LIMIT=$limit CONSISTENT=$consistent RELAX_U=$relax_u RELAX_NUT=$relax_nut RELAX_P=$relax_p"
  echo "scripts/peer-openfoam-naca0012-rans.sh \"$levels\" $np\`,"
  echo "$(date -u +%Y-%m-%d), $(git -C "$root" rev-parse --short HEAD), OpenFOAM $(foam sh -c 'echo $WM_PROJECT_VERSION'),"
  echo "$(nproc) cores; levels >= 2 on $np ranks (decomposePar hierarchical (1 $np 1): scotch is a dummy stub"
  echo "in Debian's package), the others on 1 rank."
  echo
  echo "Mesh: \`gmsh naca0012-rans.geo -2 -setnumber level N -nt 1\` (karman's call, msh 2.2), each"
  echo "quadrilateral extruded to one hexahedron ($dz thick), \`gmshToFoam\`, frontAndBack \`empty\`,"
  echo "wall \`wall\`.  Flow: U = ($ux, $uy), nu = $nu, nuTilda = 3 nu = $nutilda and"
  echo "nut = nuTilda fv1(3) = $nut in the free stream and initially; farfield and outlet"
  echo "\`freestreamVelocity\`, \`freestreamPressure\` (p 0), \`freestream\` (nuTilda), \`calculated\` (nut);"
  echo "wall \`noSlip\`, p \`zeroGradient\`, nuTilda = nut = 0.  Numerics: steady SIMPLE(C) (\`consistent $consistent\`,"
  echo "relaxation U $relax_u, nuTilda $relax_nut, p $relax_p, no non-orthogonal correctors), \`bounded Gauss linearUpwind"
  echo "grad(U)\`, \`bounded Gauss upwind\` for nuTilda, \`Gauss linear\` gradients, \`Gauss linear corrected\`"
  echo "Laplacians, meshWave wall distance; p GAMG (GaussSeidel, relTol 0.05), U and nuTilda"
  echo "smoothSolver symGaussSeidel (relTol 0.1); residualControl p 1e-7, U 1e-8, nuTilda 1e-8 (initial"
  echo "residuals); forceCoeffs on wall, magUInf 1, lRef 1, Aref $dz (per unit span), wind axes."
  echo
  echo "Wall time: the solver run (decomposePar included on more than 1 rank) by \`date\`; memory: the"
  echo "peak resident set size of each rank by \`/usr/bin/time -v\`, summed.  \"C_D within 1 % / 0.1 %\":"
  echo "the iteration from which C_D stays within that fraction of its final value, with rank 0's"
  echo "ExecutionTime (CPU seconds) then.  Final value: the last iteration's if residualControl was met,"
  echo "else the mean over the last tenth of the iterations (the range of that tail is given); in"
  echo "brackets the same for the mean of the last 10 iterations (which averages a limit cycle)."
  echo
  echo "| level | ranks | cells | max non-orthogonality (°) | max aspect ratio | iterations | wall time | peak memory | C_D | C_L | C_D within 1 % | C_D within 0.1 % | last initial residuals |"
  echo "|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---|---|---|"
  printf '%s' "$rows"
  echo
  echo "checkMesh (\`out/peer-openfoam-naca0012-rans/L*/log.checkMesh\`):"
  echo
  printf '%s' "$checks" | sed 's/^/    /'
  echo
  echo "karman (cases/naca0012-rans/README.md, not re-run here): level 1 on 1 rank C_D 0.0126646,"
  echo "C_L 1.077117, 41.5 s, 271 MiB; level 2 on 2 ranks C_D 0.0124323, C_L 1.080033, 93.6 s, 792 MiB."
  echo "TMR CFL3D (no point vortex, 14.7e6 cells, M 0.15): C_L 1.09065, C_D 0.0122623."
} > "$root/results/peer-openfoam-naca0012-rans.md"
echo "wrote results/peer-openfoam-naca0012-rans.md"
