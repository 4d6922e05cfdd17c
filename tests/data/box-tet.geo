// Unit cube meshed with tetrahedra.  Boundaries: xmin, xmax, ymin, ymax, zmin, zmax.
DefineConstant[ level = {0, Name "level"} ];
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Mesh.MeshSizeMax = 0.34 / 2^level;
Physical Surface("xmin") = {1};
Physical Surface("xmax") = {2};
Physical Surface("ymin") = {3};
Physical Surface("ymax") = {4};
Physical Surface("zmin") = {5};
Physical Surface("zmax") = {6};
Physical Volume("fluid") = {1};
