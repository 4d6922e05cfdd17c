// The DFG 3D-1Z channel meshed the ordinary Gmsh way with a second, common size field: OpenCASCADE
// box minus cylinder, the minimum of a Distance + Threshold field from the cylinder and a Box
// field around it and its near wake, Gmsh's default tetrahedral algorithm, no optimization.
// Coarse (5 815 tetrahedra): the least-squares test of fits whose directions nearly lie in one
// plane (test_lsq_gradient.cpp).  The same file with hn = 0.012, hb = 0.035, hf = 0.08
// (`-setnumber`) gives the 28 849 tetrahedra of results/tet-diagnosis.md section 9.
SetFactory("OpenCASCADE");
DefineConstant[ hn = {0.03, Name "hn"} ]; // at the cylinder
DefineConstant[ hb = {0.06, Name "hb"} ]; // in the box x in [0.3, 1.2]
DefineConstant[ hf = {0.12, Name "hf"} ]; // elsewhere
// the written mesh scaled by this factor (the same tetrahedra): a micro-channel at the same
// Reynolds number with the viscosity, inlet profile and reference values scaled alike
DefineConstant[ scale = {1, Name "scale"} ];
Mesh.ScalingFactor = scale;
L = 2.5; H = 0.41; xc = 0.5; yc = 0.2; r = 0.05;
Box(1) = {0, 0, 0, L, H, H};
Cylinder(2) = {xc, yc, 0, 0, 0, H, r};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
eps = 1e-6;
cyl[] = Surface In BoundingBox{xc - r - eps, yc - r - eps, -eps, xc + r + eps, yc + r + eps, H + eps};
Field[1] = Distance;
Field[1].FacesList = {cyl[]};
Field[2] = Threshold;
Field[2].InField = 1;
Field[2].SizeMin = hn;
Field[2].SizeMax = hf;
Field[2].DistMin = 0.005;
Field[2].DistMax = 0.15;
Field[3] = Box;
Field[3].VIn = hb;
Field[3].VOut = hf;
Field[3].XMin = 0.3; Field[3].XMax = 1.2;
Field[3].YMin = -1; Field[3].YMax = 1; Field[3].ZMin = -1; Field[3].ZMax = 1;
Field[3].Thickness = 0.3;
Field[4] = Min;
Field[4].FieldsList = {2, 3};
Background Field = 4;
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
