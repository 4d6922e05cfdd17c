// Box channel [0,2] x [0,1] x [0,1] with hexahedra (level 0: 8 x 4 x 4).
// Boundaries: inlet (x = 0), outlet (x = 2), walls (y = 0, y = 1, z = 0), top (z = 1).
DefineConstant[ level = {0, Name "level"} ];
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 2, 1, 1};
n = 4 * 2^level;
Transfinite Curve {:} = n + 1;
Transfinite Curve {9, 10, 11, 12} = 2 * n + 1;
Transfinite Surface {:};
Recombine Surface {:};
Transfinite Volume {1};
Physical Surface("inlet") = {1};
Physical Surface("outlet") = {2};
Physical Surface("walls") = {3, 4, 5};
Physical Surface("top") = {6};
Physical Volume("fluid") = {1};
