// The circle of diameter D = 1 (the start of the minimum-drag optimization) centred at the
// origin in a circular domain of radius Rf (far field; 30 D) -- cases/cylinder-unbounded/
// cylinder.geo adapted for large shape changes: its O-grid ring of graded quadrilaterals reaches
// r = 2.5 instead of 1 (8 f radial layers instead of 4 f, the same wall spacing), so that the
// mesh deformation can stretch the circle into a body of about 2.5 D length without tangling
// the ring's cells at the nose and the tail, and it has 12 f + 1 nodes per quarter (48 f wall
// faces) instead of 8 f + 1.  Unstructured triangles outside, refined in the wake
// (x in [2, 12], |y| < 2).  `level` (gmsh -setnumber level N) halves all sizes.
// Physical names: cylinder, farfield, fluid.
DefineConstant[ level = {0, Name "level"}, Rf = {30.0, Name "Rf"} ];
r = 0.5; R = 2.5;
f = 2^level;
nq = 12 * f + 1;          // nodes per quarter of the ring
nr = 8 * f + 1;           // nodes across the ring
grow = 1.3^(1.0 / f);     // radial growth ratio inside the ring
h_ring = 0.5 * Pi * R / (nq - 1);
h_wake = 0.25 / f;
h_far = 3.0 / f;

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
Field[1].VOut = h_far;
Field[1].XMin = 2.0; Field[1].XMax = 12.0;
Field[1].YMin = -2.0; Field[1].YMax = 2.0;
Field[1].Thickness = 4.0;
Field[2] = Distance;
Field[2].CurvesList = {5, 6, 7, 8};
Field[3] = MathEval;
Field[3].F = Sprintf("%g + 0.12 * F2", h_ring);
Field[4] = Min;
Field[4].FieldsList = {1, 3};
Background Field = 4;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;

Physical Curve("cylinder") = {1, 2, 3, 4};
Physical Curve("farfield") = {13, 14, 15, 16};
Physical Surface("fluid") = {1, 2, 3, 4, 5};
