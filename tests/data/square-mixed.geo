// Unit square: unstructured triangles on the left half, structured quadrilaterals on
// the right half (a mixed mesh).  Boundaries: left, right, bottom, top.
DefineConstant[ level = {0, Name "level"} ];
n = 4 * 2^level;
h = 0.5 / n;
Point(1) = {0, 0, 0, h}; Point(2) = {0.5, 0, 0, h}; Point(3) = {1, 0, 0, h};
Point(4) = {1, 1, 0, h}; Point(5) = {0.5, 1, 0, h}; Point(6) = {0, 1, 0, h};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 5};
Line(5) = {5, 6}; Line(6) = {6, 1}; Line(7) = {2, 5};
Curve Loop(1) = {1, 7, 5, 6}; Plane Surface(1) = {1};
Curve Loop(2) = {2, 3, 4, -7}; Plane Surface(2) = {2};
Transfinite Curve {2, 4} = n + 1;
Transfinite Curve {3, 7} = 2 * n + 1;
Transfinite Surface {2};
Recombine Surface {2};
Physical Curve("bottom") = {1, 2};
Physical Curve("right") = {3};
Physical Curve("top") = {4, 5};
Physical Curve("left") = {6};
Physical Surface("fluid") = {1, 2};
