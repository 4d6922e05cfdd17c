// Annulus r in [0.5, 1] for Taylor-Couette flow: an O-grid of quadrilaterals,
// 32 * 2^level cells around and 4 * 2^level across.
// Physical names: inner, outer, fluid.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
r = 0.5; R = 1.0;
nq = 8 * f + 1; nr = 4 * f + 1;
Point(1) = {0, 0, 0};
s = Sqrt(0.5);
Point(2) = {r * s, r * s, 0};   Point(3) = {-r * s, r * s, 0};
Point(4) = {-r * s, -r * s, 0}; Point(5) = {r * s, -r * s, 0};
Point(6) = {R * s, R * s, 0};   Point(7) = {-R * s, R * s, 0};
Point(8) = {-R * s, -R * s, 0}; Point(9) = {R * s, -R * s, 0};
Circle(1) = {2, 1, 3}; Circle(2) = {3, 1, 4}; Circle(3) = {4, 1, 5}; Circle(4) = {5, 1, 2};
Circle(5) = {6, 1, 7}; Circle(6) = {7, 1, 8}; Circle(7) = {8, 1, 9}; Circle(8) = {9, 1, 6};
Line(9) = {2, 6}; Line(10) = {3, 7}; Line(11) = {4, 8}; Line(12) = {5, 9};
Transfinite Curve {1, 2, 3, 4, 5, 6, 7, 8} = nq;
Transfinite Curve {9, 10, 11, 12} = nr;
Curve Loop(1) = {9, 5, -10, -1}; Plane Surface(1) = {1};
Curve Loop(2) = {10, 6, -11, -2}; Plane Surface(2) = {2};
Curve Loop(3) = {11, 7, -12, -3}; Plane Surface(3) = {3};
Curve Loop(4) = {12, 8, -9, -4}; Plane Surface(4) = {4};
Transfinite Surface {1, 2, 3, 4};
Recombine Surface {1, 2, 3, 4};
Physical Curve("inner") = {1, 2, 3, 4};
Physical Curve("outer") = {5, 6, 7, 8};
Physical Surface("fluid") = {1, 2, 3, 4};
