// Schäfer & Turek (1996) DFG 2D-1 geometry (channel [0,2.2] x [0,0.41], cylinder of diameter 0.1
// at (0.2, 0.2)) meshed with anisotropic triangles, as an anisotropic adaptation would leave it
// (issue 42): OpenCASCADE rectangle minus disk, Gmsh's BAMG algorithm with a metric field
// (MathEvalAniso) of two sizes, h_x along the channel and h_y across it:
//   h_x = min(0.03, 0.005 + 0.25 d)               d: the distance from the cylinder
//   h_y = min(h_x, 0.002 + 0.2 min(y, 0.41 - y))   thinner towards the channel walls
// divided by 2^level.  Triangles only.  Where the two sizes part (near the channel walls, up to
// about 20:1), the triangles are strongly non-orthogonal: up to 85 degrees on every level
// (`karman mesh`; Gmsh's isotropic 2D algorithms stay below 44 degrees, dfg-2d-tri.geo).
// Physical names as dfg-channel.geo: inlet (x = 0), outlet (x = 2.2), walls (y = 0, y = 0.41),
// cylinder, fluid.
SetFactory("OpenCASCADE");
DefineConstant[ level = {0, Name "level"} ];

L = 2.2; H = 0.41; xc = 0.2; yc = 0.2; r = 0.05;
f = 2^level;

Rectangle(1) = {0, 0, 0, L, H};
Disk(2) = {xc, yc, 0, r};
BooleanDifference(3) = { Surface{1}; Delete; }{ Surface{2}; Delete; };

eps = 1e-6;
cyl[] = Curve In BoundingBox{xc - r - eps, yc - r - eps, -eps, xc + r + eps, yc + r + eps, eps};

// the metric diag(1 / h_x^2, 1 / h_y^2) (the expressions repeat h_x: Gmsh's MathEval fields
// take no variables)
Field[1] = MathEvalAniso;
Field[1].M11 = Sprintf("(%g)^2 / (min(0.03, 0.005 + 0.25 * (sqrt((x-0.2)^2 + (y-0.2)^2) - 0.05)))^2", f);
Field[1].M22 = Sprintf("(%g)^2 / (min(min(0.03, 0.005 + 0.25 * (sqrt((x-0.2)^2 + (y-0.2)^2) - 0.05)), 0.002 + 0.2 * min(y, 0.41 - y)))^2", f);
Field[1].M12 = "0";
Field[1].M13 = "0";
Field[1].M23 = "0";
Field[1].M33 = "1";
Background Field = 1;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.Algorithm = 7; // BAMG: the 2D algorithm that follows an anisotropic metric

Physical Curve("inlet") = Curve In BoundingBox{-eps, -eps, -eps, eps, H + eps, eps};
Physical Curve("outlet") = Curve In BoundingBox{L - eps, -eps, -eps, L + eps, H + eps, eps};
bottom[] = Curve In BoundingBox{-eps, -eps, -eps, L + eps, eps, eps};
top[] = Curve In BoundingBox{-eps, H - eps, -eps, L + eps, H + eps, eps};
Physical Curve("walls") = {bottom[], top[]};
Physical Curve("cylinder") = {cyl[]};
Physical Surface("fluid") = Surface{:};
