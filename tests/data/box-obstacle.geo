// Unit cube with a box obstacle [0.3, 0.6] x [0.35, 0.6] x [0.4, 0.6] removed, meshed with
// tetrahedra.  Boundaries: outer (the six faces of the cube), obstacle (the six faces of the
// obstacle).  The obstacle has volume 0.015 and centroid (0.45, 0.475, 0.5).
DefineConstant[ level = {0, Name "level"} ];
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Box(2) = {0.3, 0.35, 0.4, 0.3, 0.25, 0.2};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.MeshSizeMax = 0.3 / 2^level;
e = 1e-6;
obstacle() = Surface In BoundingBox{0.3 - e, 0.35 - e, 0.4 - e, 0.6 + e, 0.6 + e, 0.6 + e};
outer() = Surface{:};
outer() -= obstacle();
Physical Surface("outer") = {outer()};
Physical Surface("obstacle") = {obstacle()};
Physical Volume("fluid") = {3};
