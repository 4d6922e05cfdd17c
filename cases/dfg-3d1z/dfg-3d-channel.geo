// Schäfer & Turek (1996) DFG 3D-1Z geometry: channel [0,2.5] x [0,0.41] x [0,0.41] with a
// cylinder of diameter 0.1 across it (axis along z) centred at (x, y) = (0.5, 0.2).
// Mesh: the 2D section of cases/dfg-2d1 (an O-grid ring of quadrilaterals around the cylinder,
// graded towards the wall, triangles elsewhere, refined in the wake) extruded along z in layers
// graded towards the side walls z = 0 and z = 0.41: hexahedra in the ring, prisms elsewhere.
// `level` (set by karman with `-setnumber level N`) refines every direction by sqrt(2), so the
// cell count grows by about 2.8 per level.
// Physical names: inlet (x = 0), outlet (x = 2.5), walls (y = 0, y = 0.41, z = 0, z = 0.41),
// cylinder, fluid.
DefineConstant[ level = {0, Name "level"} ];
// `scale` (< 1: coarser) and `hexes` (0: tetrahedra only) for the tests
// (tests/data/dfg-3d-coarse*.geo set them before including this file)
DefineConstant[ scale = {1, Name "scale"} ];
DefineConstant[ hexes = {1, Name "hexes"} ];

L = 2.5; H = 0.41; xc = 0.5; yc = 0.2; r = 0.05; R = 0.1;
f = scale * Sqrt(2)^level;
nq = Round(8 * f) + 1;        // nodes per quarter of the ring (circumferential)
nr = Round(6 * f) + 1;        // nodes across the ring (radial)
grow = 1.3^(1 / f);           // radial growth ratio inside the ring
h_ring = 0.5 * Pi * R / (nq - 1);
h_wake = 0.03 / f;
h_far = 0.07 / f;
nz = 2 * Round(6 * f);        // layers across the channel (even: symmetric grading)
gz = 1.12^(1 / f);            // layer growth ratio from the side walls to the middle

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
If (hexes)
  Recombine Surface {1, 2, 3, 4};
EndIf

Curve Loop(5) = {1, 2, 3, 4};
Curve Loop(6) = {9, 10, 11, 12};
Plane Surface(5) = {5, 6};

// wake refinement behind the cylinder, blending to h_far towards the outlet
Field[1] = Box;
Field[1].VIn = h_wake;
Field[1].VOut = h_far;
Field[1].XMin = xc;
Field[1].XMax = 1.5;
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

// layers: symmetric geometric grading, thinnest at z = 0 and z = H
half = nz / 2;
total = 0;
For k In {0 : half - 1}
  total += gz^k;
EndFor
zs[] = {};
acc = 0;
For k In {0 : half - 1}
  acc += gz^k / total / 2;
  zs[] += acc;
EndFor
For k In {0 : half - 2}
  zs[] += 1 - zs[half - 2 - k];
EndFor
zs[] += 1;
ones[] = {};
For k In {0 : nz - 1}
  ones[] += 1;
EndFor
If (hexes)
  ext[] = Extrude {0, 0, H} { Surface{1, 2, 3, 4, 5}; Layers{ones[], zs[]}; Recombine; };
Else
  ext[] = Extrude {0, 0, H} { Surface{1, 2, 3, 4, 5}; Layers{ones[], zs[]}; };
EndIf

eps = 1e-6;
Physical Surface("inlet") = Surface In BoundingBox{-eps, -eps, -eps, eps, H + eps, H + eps};
Physical Surface("outlet") = Surface In BoundingBox{L - eps, -eps, -eps, L + eps, H + eps, H + eps};
bottom[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, H + eps, eps};
top[] = Surface In BoundingBox{-eps, -eps, H - eps, L + eps, H + eps, H + eps};
south[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, eps, H + eps};
north[] = Surface In BoundingBox{-eps, H - eps, -eps, L + eps, H + eps, H + eps};
Physical Surface("walls") = {bottom[], top[], south[], north[]};
Physical Surface("cylinder") = Surface In BoundingBox{xc - r - eps, yc - r - eps, -eps, xc + r + eps, yc + r + eps, H + eps};
Physical Volume("fluid") = Volume{:};
