// The sphere of diameter 1 in the far-field sphere of radius 50 meshed the ordinary Gmsh way (as
// a user would from CAD, issue 42): OpenCASCADE sphere minus sphere, unstructured tetrahedra
// (Gmsh's default algorithm and settings) whose size grows linearly from h0 at the body, h = h0 +
// 0.3 d (d: distance from the body; 14.9 at R = 50).  Level 0: 15 817 tetrahedra (Gmsh 4.8.4).
// `level` (set by karman with `-setnumber level N`) halves h0 and the growth per level.
// Physical names as body3d.geo: body, farfield, fluid.  README.md: "Gmsh's tetrahedra".
SetFactory("OpenCASCADE");
DefineConstant[ level = {0, Name "level"} ];
DefineConstant[ R = {50, Name "R"} ];
f = 2^level;
h0 = 0.1 / f;
g = 0.3 / f;

Sphere(1) = {0, 0, 0, R};
Sphere(2) = {0, 0, 0, 0.5};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
body[] = Surface In BoundingBox{-0.6, -0.6, -0.6, 0.6, 0.6, 0.6};
far[] = Boundary{ Volume{3}; };
far[] -= body[];
Physical Surface("body") = body[];
Physical Surface("farfield") = far[];
Physical Volume("fluid") = {3};

Field[1] = Distance;
Field[1].FacesList = {body[]};
Field[1].NumPointsPerCurve = 100;
Field[2] = MathEval;
Field[2].F = Sprintf("%g + %g * F1", h0, g);
Background Field = 2;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
