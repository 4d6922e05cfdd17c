// An ellipse centred at (0.1, 0.05) with semi-axes 0.5 (x) and 0.1 (y), a thin symmetric
// airfoil-like body, in a rectangular far field [-1.5, 1.7] x [-1, 1.1]; triangles.  The
// ellipse has mesh vertices at its four axis points, (0.1, 0.15) and (0.1, -0.05) among them.
// Boundaries: body, farfield.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
xc = 0.1; yc = 0.05; a = 0.5; b = 0.1;
nq = 12 * f + 1;        // nodes per quarter of the ellipse
h_far = 0.4 / f;
Point(1) = {xc, yc, 0};
Point(2) = {xc + a, yc, 0}; Point(3) = {xc, yc + b, 0};
Point(4) = {xc - a, yc, 0}; Point(5) = {xc, yc - b, 0};
Ellipse(1) = {2, 1, 2, 3}; Ellipse(2) = {3, 1, 2, 4};
Ellipse(3) = {4, 1, 2, 5}; Ellipse(4) = {5, 1, 2, 2};
Transfinite Curve {1, 2, 3, 4} = nq;
Point(6) = {-1.5, -1, 0, h_far}; Point(7) = {1.7, -1, 0, h_far};
Point(8) = {1.7, 1.1, 0, h_far}; Point(9) = {-1.5, 1.1, 0, h_far};
Line(5) = {6, 7}; Line(6) = {7, 8}; Line(7) = {8, 9}; Line(8) = {9, 6};
Curve Loop(1) = {5, 6, 7, 8};
Curve Loop(2) = {1, 2, 3, 4};
Plane Surface(1) = {1, 2};
Physical Curve("body") = {1, 2, 3, 4};
Physical Curve("farfield") = {5, 6, 7, 8};
Physical Surface("fluid") = {1};
