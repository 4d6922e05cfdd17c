// A coarse channel with a cylinder for the flow-control and identification tests (seconds per
// forward + adjoint run): channel [0, 1] x [0, 0.41], cylinder of diameter 0.1 centred at
// (0.2, 0.2) (the DFG benchmark's cylinder in a shorter channel), unstructured triangles.
// `level` halves all sizes.  Physical names: inlet (x = 0), outlet (x = 1), walls (y = 0,
// y = 0.41), cylinder, fluid.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
L = 1.0; H = 0.41; xc = 0.2; yc = 0.2; r = 0.05;
h_far = 0.06 / f;
h_cyl = 0.025 / f;
Point(1) = {0, 0, 0, h_far};
Point(2) = {L, 0, 0, h_far};
Point(3) = {L, H, 0, h_far};
Point(4) = {0, H, 0, h_far};
Point(5) = {xc, yc, 0};
Point(6) = {xc + r, yc, 0, h_cyl};
Point(7) = {xc, yc + r, 0, h_cyl};
Point(8) = {xc - r, yc, 0, h_cyl};
Point(9) = {xc, yc - r, 0, h_cyl};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Circle(5) = {6, 5, 7};
Circle(6) = {7, 5, 8};
Circle(7) = {8, 5, 9};
Circle(8) = {9, 5, 6};
Curve Loop(1) = {1, 2, 3, 4};
Curve Loop(2) = {5, 6, 7, 8};
Plane Surface(1) = {1, 2};
Physical Curve("inlet") = {4};
Physical Curve("outlet") = {2};
Physical Curve("walls") = {1, 3};
Physical Curve("cylinder") = {5, 6, 7, 8};
Physical Surface("fluid") = {1};
