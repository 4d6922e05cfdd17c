// Schäfer & Turek (1996) DFG 3D-1Z geometry (channel [0,2.5] x [0,0.41] x [0,0.41], cylinder of
// diameter 0.1 across it, axis along z at (x, y) = (0.5, 0.2)) meshed the ordinary Gmsh way, as
// a user would from CAD: OpenCASCADE box minus cylinder, a Distance + Threshold size field from
// the cylinder (0.012 near it, 0.06 far), Gmsh's default tetrahedral algorithm (Delaunay) with
// Gmsh's default settings and no further optimization pass (no Netgen optimizer; Gmsh's own
// Mesh.Optimize stays at its default).  Unstructured tetrahedra with strong non-orthogonality:
// levels 0 and 1 are the meshes of issue 42, 31 840 and 237 538 tetrahedra, maximum
// non-orthogonality 69.0 and 69.7 degrees, skewness 1.23 and 1.49 (`karman mesh`).
// `level` (set by karman with `-setnumber level N`) halves both sizes per level (about 7.5x the
// cells); the distances of the size field stay.  `scale` (< 1: coarser) for the tests
// (tests/data/dfg-3d-tet-coarse.geo sets it before including this file).
// Physical names: inlet (x = 0), outlet (x = 2.5), walls (y = 0, y = 0.41, z = 0, z = 0.41),
// cylinder, fluid (as dfg-3d-channel.geo).
SetFactory("OpenCASCADE");
DefineConstant[ level = {0, Name "level"} ];
DefineConstant[ scale = {1, Name "scale"} ];

L = 2.5; H = 0.41; xc = 0.5; yc = 0.2; r = 0.05;
f = scale * 2^level;
// the size field (`mesh.parameters=[hn=..., hf=..., dmin=..., dmax=...]`; the issue's mesh by
// default): hn at the cylinder up to dmin from it, growing linearly to hf at dmax
DefineConstant[ hn = {0.012, Name "hn"} ];
DefineConstant[ hf = {0.06, Name "hf"} ];
DefineConstant[ dmin = {0.01, Name "dmin"} ];
DefineConstant[ dmax = {0.25, Name "dmax"} ];
h_near = hn / f; // at the cylinder
h_far = hf / f;  // away from it

Box(1) = {0, 0, 0, L, H, H};
Cylinder(2) = {xc, yc, 0, 0, 0, H, r};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };

eps = 1e-6;
cyl[] = Surface In BoundingBox{xc - r - eps, yc - r - eps, -eps, xc + r + eps, yc + r + eps, H + eps};

Field[1] = Distance;
Field[1].FacesList = {cyl[]};
Field[2] = Threshold;
Field[2].InField = 1;
Field[2].SizeMin = h_near;
Field[2].SizeMax = h_far;
Field[2].DistMin = dmin;
Field[2].DistMax = dmax;
Background Field = 2;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;

Physical Surface("inlet") = Surface In BoundingBox{-eps, -eps, -eps, eps, H + eps, H + eps};
Physical Surface("outlet") = Surface In BoundingBox{L - eps, -eps, -eps, L + eps, H + eps, H + eps};
bottom[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, H + eps, eps};
top[] = Surface In BoundingBox{-eps, -eps, H - eps, L + eps, H + eps, H + eps};
south[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, eps, H + eps};
north[] = Surface In BoundingBox{-eps, H - eps, -eps, L + eps, H + eps, H + eps};
Physical Surface("walls") = {bottom[], top[], south[], north[]};
Physical Surface("cylinder") = {cyl[]};
Physical Volume("fluid") = Volume{:};
