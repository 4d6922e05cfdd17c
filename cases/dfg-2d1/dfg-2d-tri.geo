// Schäfer & Turek (1996) DFG 2D-1 geometry (channel [0,2.2] x [0,0.41], cylinder of diameter 0.1
// at (0.2, 0.2)) meshed the ordinary Gmsh way, as from CAD (issue 42): OpenCASCADE rectangle
// minus disk, a Distance + Threshold size field from the cylinder (h_near at it, h_far from
// 0.15 on), Gmsh's default 2D algorithm with Gmsh's defaults otherwise: unstructured triangles
// only, no boundary-layer quadrilaterals, non-orthogonality above 60 degrees where the sizes
// change fast (`karman mesh`).  `level` (set by karman with `-setnumber level N`) halves both
// sizes per level (about 4x the cells); the distances of the size field stay.
// Physical names as dfg-channel.geo: inlet (x = 0), outlet (x = 2.2), walls (y = 0, y = 0.41),
// cylinder, fluid.
SetFactory("OpenCASCADE");
DefineConstant[ level = {0, Name "level"} ];

L = 2.2; H = 0.41; xc = 0.2; yc = 0.2; r = 0.05;
f = 2^level;
h_near = 0.006 / f; // at the cylinder
h_far = 0.03 / f;   // away from it

Rectangle(1) = {0, 0, 0, L, H};
Disk(2) = {xc, yc, 0, r};
BooleanDifference(3) = { Surface{1}; Delete; }{ Surface{2}; Delete; };

eps = 1e-6;
cyl[] = Curve In BoundingBox{xc - r - eps, yc - r - eps, -eps, xc + r + eps, yc + r + eps, eps};

Field[1] = Distance;
Field[1].CurvesList = {cyl[]};
Field[2] = Threshold;
Field[2].InField = 1;
Field[2].SizeMin = h_near;
Field[2].SizeMax = h_far;
Field[2].DistMin = 0.0;
Field[2].DistMax = 0.15;
Background Field = 2;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;

Physical Curve("inlet") = Curve In BoundingBox{-eps, -eps, -eps, eps, H + eps, eps};
Physical Curve("outlet") = Curve In BoundingBox{L - eps, -eps, -eps, L + eps, H + eps, eps};
bottom[] = Curve In BoundingBox{-eps, -eps, -eps, L + eps, eps, eps};
top[] = Curve In BoundingBox{-eps, H - eps, -eps, L + eps, H + eps, eps};
Physical Curve("walls") = {bottom[], top[]};
Physical Curve("cylinder") = {cyl[]};
Physical Surface("fluid") = Surface{:};
