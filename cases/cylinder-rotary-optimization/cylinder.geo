// Circular cylinder of diameter 1 centred at the origin in a circular far-field domain of
// radius 100 D, for the rotary-oscillation optimization at Re 100 and 200.
// Near field as ../cylinder-unbounded/cylinder.geo (an O-grid ring of graded quadrilaterals
// from r = 0.5 to 1, triangles outside, refined in the wake box x in [0.5, 15], |y| < 2.5),
// with a finer ring; the far field coarsens with the distance from the ring (h = h_ring +
// 0.1 d, at most 8), so that the 100 D domain (blockage of the mean drag ~0.4 % instead of
// ~1.4 % at 30 D) costs few cells.  `level` (gmsh -setnumber level N) halves the near-field sizes.
// Physical names: cylinder, farfield, fluid.
DefineConstant[ level = {1, Name "level"} ];
r = 0.5; R = 1.0; Rf = 100.0;
f = 2^level;
nq = 12 * f + 1;          // nodes per quarter of the ring
nr = 6 * f + 1;           // nodes across the ring
grow = 1.25^(1.0 / f);    // radial growth ratio inside the ring
h_ring = 0.5 * Pi * R / (nq - 1);
h_wake = 0.2 / f;

Point(1) = {0, 0, 0};
s = Sqrt(0.5);
Point(2) = {r * s, r * s, 0};   Point(3) = {-r * s, r * s, 0};
Point(4) = {-r * s, -r * s, 0}; Point(5) = {r * s, -r * s, 0};
Point(6) = {R * s, R * s, 0};   Point(7) = {-R * s, R * s, 0};
Point(8) = {-R * s, -R * s, 0}; Point(9) = {R * s, -R * s, 0};
Point(10) = {Rf, 0, 0}; Point(11) = {0, Rf, 0}; Point(12) = {-Rf, 0, 0}; Point(13) = {0, -Rf, 0};
Circle(1) = {2, 1, 3}; Circle(2) = {3, 1, 4}; Circle(3) = {4, 1, 5}; Circle(4) = {5, 1, 2};
Circle(5) = {6, 1, 7}; Circle(6) = {7, 1, 8}; Circle(7) = {8, 1, 9}; Circle(8) = {9, 1, 6};
Line(9) = {2, 6}; Line(10) = {3, 7}; Line(11) = {4, 8}; Line(12) = {5, 9};
Circle(13) = {10, 1, 11}; Circle(14) = {11, 1, 12}; Circle(15) = {12, 1, 13}; Circle(16) = {13, 1, 10};

Transfinite Curve {1, 2, 3, 4, 5, 6, 7, 8} = nq;
Transfinite Curve {9, 10, 11, 12} = nr Using Progression grow;
Curve Loop(1) = {9, 5, -10, -1}; Plane Surface(1) = {1};
Curve Loop(2) = {10, 6, -11, -2}; Plane Surface(2) = {2};
Curve Loop(3) = {11, 7, -12, -3}; Plane Surface(3) = {3};
Curve Loop(4) = {12, 8, -9, -4}; Plane Surface(4) = {4};
Transfinite Surface {1, 2, 3, 4};
Recombine Surface {1, 2, 3, 4};
Curve Loop(5) = {13, 14, 15, 16};
Curve Loop(6) = {5, 6, 7, 8};
Plane Surface(5) = {5, 6};

Field[1] = Box;
Field[1].VIn = h_wake;
Field[1].VOut = 1e3;
Field[1].XMin = 0.5; Field[1].XMax = 15.0;
Field[1].YMin = -2.5; Field[1].YMax = 2.5;
Field[1].Thickness = 4.0;
Field[2] = Distance;
Field[2].CurvesList = {5, 6, 7, 8};
Field[3] = MathEval;
Field[3].F = Sprintf("Min(%g + 0.1 * F2, 8)", h_ring);
Field[4] = Min;
Field[4].FieldsList = {1, 3};
Background Field = 4;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;

Physical Curve("cylinder") = {1, 2, 3, 4};
Physical Curve("farfield") = {13, 14, 15, 16};
Physical Surface("fluid") = {1, 2, 3, 4, 5};
