// A cylinder (radius 0.05, 6 arcs of one segment each) in a square [-0.5, 0.5]^2, wrapped in one
// ring of quadrilaterals 0.001 thick whose outer edges are straight: Gmsh's RefineMesh projects
// the new wall vertices onto the circle, 0.0067 out from the arcs' chords, past the straight
// outer edges, so the refined wall cells are inverted (the error estimate's refinement fallback,
// tests/unit/test_error_estimate.cpp).  Physical names: cylinder (the wall), farfield, fluid.
r = 0.05; t = 0.001; n = 6; L = 0.5;
Point(1) = {0, 0, 0};
For i In {0 : n - 1}
  Point(10 + i) = {r * Cos(2 * Pi * i / n), r * Sin(2 * Pi * i / n), 0, 0.05};
  Point(20 + i) = {(r + t) * Cos(2 * Pi * i / n), (r + t) * Sin(2 * Pi * i / n), 0, 0.05};
EndFor
For i In {0 : n - 1}
  j = (i + 1) % n;
  Circle(100 + i) = {10 + i, 1, 10 + j};
  Line(200 + i) = {20 + i, 20 + j};
  Line(300 + i) = {10 + i, 20 + i};
EndFor
For i In {0 : n - 1}
  j = (i + 1) % n;
  Curve Loop(400 + i) = {100 + i, 300 + j, -(200 + i), -(300 + i)};
  Plane Surface(400 + i) = {400 + i};
  Transfinite Surface {400 + i};
  Recombine Surface {400 + i};
EndFor
Transfinite Curve {100 : 100 + n - 1, 200 : 200 + n - 1, 300 : 300 + n - 1} = 2;
Point(31) = {-L, -L, 0, 0.1}; Point(32) = {L, -L, 0, 0.1};
Point(33) = {L, L, 0, 0.1}; Point(34) = {-L, L, 0, 0.1};
Line(501) = {31, 32}; Line(502) = {32, 33}; Line(503) = {33, 34}; Line(504) = {34, 31};
Curve Loop(500) = {501, 502, 503, 504};
Curve Loop(600) = {200 : 200 + n - 1};
Plane Surface(600) = {500, 600};
Physical Curve("cylinder") = {100 : 100 + n - 1};
Physical Curve("farfield") = {501 : 504};
Physical Surface("fluid") = {400 : 400 + n - 1, 600};
