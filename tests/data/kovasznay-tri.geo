// Kovasznay-flow domain [-0.5, 1] x [-0.5, 1.5], unstructured triangles, h = 0.1 / 2^level.
// Boundaries: west, east, south, north.
DefineConstant[ level = {0, Name "level"} ];
h = 0.1 / 2^level;
Point(1) = {-0.5, -0.5, 0, h}; Point(2) = {1, -0.5, 0, h}; Point(3) = {1, 1.5, 0, h}; Point(4) = {-0.5, 1.5, 0, h};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Curve("south") = {1};
Physical Curve("east") = {2};
Physical Curve("north") = {3};
Physical Curve("west") = {4};
Physical Surface("fluid") = {1};
