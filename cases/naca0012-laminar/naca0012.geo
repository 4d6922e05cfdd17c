// NACA 0012 airfoil (chord 1 along x, leading edge at the origin, zero incidence: the angle of
// attack is set by the free-stream direction) in a circular far field of radius R around
// mid-chord, for laminar flow at Re = 1000.
// Thickness y_t = 5 t (0.2969 sqrt(x) - 0.1260 x - 0.3516 x^2 + 0.2843 x^3 - 0.1036 x^4),
// t = 0.12 (-0.1036 instead of the original -0.1015 closes the trailing edge: a sharp edge).
// The wall is a polyline whose vertices lie on the analytic curve at the chord stations
// x_i = (1 - cos(pi s))/4 + (1 - cos(pi s/2))/2, s = i/N (clustered at the leading edge, where the
// surface turns, and half as much at the trailing edge), one mesh edge per segment.
// Mesh: a boundary layer of quadrilaterals (first height h0, growth ratio q, thickness T; a fan
// of triangles at the sharp trailing edge), triangles outside sized by the distance to the
// airfoil and refined in the wake (x in [1, 4], |y| < 0.5).
// `level` (gmsh -setnumber level N) doubles the surface points and halves every size;
// R (gmsh -setnumber R 60) moves the far field.
// Physical names: airfoil, farfield, fluid.
DefineConstant[ level = {0, Name "level"}, R = {30, Name "R"} ];
f = 2^level;
N = 48 * f;                     // segments per surface
h0 = 0.004 / f;                 // first boundary-layer cell height
q = 1.2^(1.0 / f);              // boundary-layer growth ratio
T = 0.06;                       // boundary-layer thickness
h_near = 0.03 / f;              // triangle size at the edge of the boundary layer
h_wake = 0.04 / f;              // triangle size in the wake box
h_far = R / 10 / f;             // triangle size on the far field
xm = 0.5;

// points 1 (leading edge) .. N + 1 (trailing edge) along the upper surface, N + 1 + i on the lower
Point(1) = {0, 0, 0};
For i In {1 : N - 1}
  x = 0.25 * (1 - Cos(Pi * i / N)) + 0.5 * (1 - Cos(0.5 * Pi * i / N));
  y = 0.6 * (0.2969 * Sqrt(x) - 0.1260 * x - 0.3516 * x^2 + 0.2843 * x^3 - 0.1036 * x^4);
  Point(1 + i) = {x, y, 0};
  Point(N + 1 + i) = {x, -y, 0};
EndFor
Point(N + 1) = {1, 0, 0};

// upper surface from the leading to the trailing edge, lower surface back to the leading edge
For i In {1 : N}
  Line(i) = {i, i + 1};
EndFor
Line(N + 1) = {N + 1, 2 * N};
For i In {2 : N - 1}
  Line(N + i) = {2 * N + 2 - i, 2 * N + 1 - i};
EndFor
Line(2 * N) = {N + 2, 1};
Transfinite Curve {1 : 2 * N} = 2;

c = newp;
Point(c) = {xm, 0, 0};
Point(c + 1) = {xm + R, 0, 0};
Point(c + 2) = {xm, R, 0};
Point(c + 3) = {xm - R, 0, 0};
Point(c + 4) = {xm, -R, 0};
k = newc;
Circle(k) = {c + 1, c, c + 2};
Circle(k + 1) = {c + 2, c, c + 3};
Circle(k + 2) = {c + 3, c, c + 4};
Circle(k + 3) = {c + 4, c, c + 1};

Curve Loop(1) = {k : k + 3};
Curve Loop(2) = {1 : 2 * N};
Plane Surface(1) = {1, 2};

Field[1] = BoundaryLayer;
Field[1].CurvesList = {1 : 2 * N};
Field[1].Size = h0;
Field[1].Ratio = q;
Field[1].Thickness = T;
Field[1].Quads = 1;
Field[1].FanPointsList = {N + 1};
BoundaryLayer Field = 1;

Field[2] = Distance;
Field[2].CurvesList = {1 : 2 * N};
Field[2].NumPointsPerCurve = 20;
Field[3] = MathEval;
Field[3].F = Sprintf("Min(%g + 0.15 * F2, %g)", h_near, h_far);
Field[4] = Box;
Field[4].VIn = h_wake;
Field[4].VOut = h_far;
Field[4].XMin = 1.0; Field[4].XMax = 4.0;
Field[4].YMin = -0.5; Field[4].YMax = 0.5;
Field[4].Thickness = 1.0;
Field[5] = Min;
Field[5].FieldsList = {3, 4};
Background Field = 5;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;

Physical Curve("airfoil") = {1 : 2 * N};
Physical Curve("farfield") = {k : k + 3};
Physical Surface("fluid") = {1};
