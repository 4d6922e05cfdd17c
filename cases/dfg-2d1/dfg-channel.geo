// Schäfer & Turek (1996) DFG benchmark geometry: channel [0,2.2]x[0,0.41] with a
// cylinder of diameter 0.1 centred at (0.2,0.2).
// Mesh: an O-grid ring of quadrilaterals around the cylinder (graded towards the
// wall to resolve the boundary layer), unstructured triangles elsewhere, refined in
// the wake.  `level` (set by karman with `-setnumber level N`) halves all sizes.
// Physical names: inlet (x=0), outlet (x=2.2), walls (y=0, y=0.41), cylinder, fluid.
DefineConstant[ level = {1, Name "level"} ];

L = 2.2; H = 0.41; xc = 0.2; yc = 0.2; r = 0.05; R = 0.1;
f = 2^level;
// The ring is resolved four times finer than the rest of the channel: the wall
// pressure (and so delta p) converges with the resolution of the cylinder surface.
nq = 24 * f + 1;          // nodes per quarter of the ring (circumferential)
nr = 16 * f + 1;          // nodes across the ring (radial)
grow = 1.25^(0.25 / f);   // radial growth ratio inside the ring
h_ring = 0.5 * Pi * R / (nq - 1);
h_wake = 0.016 / f;
h_far = 0.05 / f;

Point(1) = {0, 0, 0, h_far};
Point(2) = {L, 0, 0, h_far};
Point(3) = {L, H, 0, h_far};
Point(4) = {0, H, 0, h_far};
Point(5) = {xc, yc, 0};
s = Sqrt(0.5);
Point(6) = {xc + r * s, yc + r * s, 0};
Point(7) = {xc - r * s, yc + r * s, 0};
Point(8) = {xc - r * s, yc - r * s, 0};
Point(9) = {xc + r * s, yc - r * s, 0};
Point(10) = {xc + R * s, yc + R * s, 0, h_ring};
Point(11) = {xc - R * s, yc + R * s, 0, h_ring};
Point(12) = {xc - R * s, yc - R * s, 0, h_ring};
Point(13) = {xc + R * s, yc - R * s, 0, h_ring};

Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Circle(5) = {6, 5, 7};
Circle(6) = {7, 5, 8};
Circle(7) = {8, 5, 9};
Circle(8) = {9, 5, 6};
Circle(9) = {10, 5, 11};
Circle(10) = {11, 5, 12};
Circle(11) = {12, 5, 13};
Circle(12) = {13, 5, 10};
Line(13) = {6, 10};
Line(14) = {7, 11};
Line(15) = {8, 12};
Line(16) = {9, 13};

Transfinite Curve {5, 6, 7, 8, 9, 10, 11, 12} = nq;
Transfinite Curve {13, 14, 15, 16} = nr Using Progression grow;

Curve Loop(1) = {13, 9, -14, -5};
Plane Surface(1) = {1};
Curve Loop(2) = {14, 10, -15, -6};
Plane Surface(2) = {2};
Curve Loop(3) = {15, 11, -16, -7};
Plane Surface(3) = {3};
Curve Loop(4) = {16, 12, -13, -8};
Plane Surface(4) = {4};
Transfinite Surface {1, 2, 3, 4};
Recombine Surface {1, 2, 3, 4};

Curve Loop(5) = {1, 2, 3, 4};
Curve Loop(6) = {9, 10, 11, 12};
Plane Surface(5) = {5, 6};

// wake refinement behind the cylinder, blending to h_far towards the outlet
Field[1] = Box;
Field[1].VIn = h_wake;
Field[1].VOut = h_far;
Field[1].XMin = xc;
Field[1].XMax = 1.0;
Field[1].YMin = yc - 0.12;
Field[1].YMax = yc + 0.12;
Field[1].Thickness = 0.3;
Field[2] = Distance;
Field[2].CurvesList = {9, 10, 11, 12};
Field[3] = MathEval;
Field[3].F = Sprintf("%g + 0.2 * F2", h_ring);
Field[4] = Min;
Field[4].FieldsList = {1, 3};
Background Field = 4;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;

Physical Curve("inlet") = {4};
Physical Curve("outlet") = {2};
Physical Curve("walls") = {1, 3};
Physical Curve("cylinder") = {5, 6, 7, 8};
Physical Surface("fluid") = {1, 2, 3, 4, 5};
