// NACA 0012 airfoil (chord 1 along x, leading edge at the origin) in a circular far field of
// radius 5 around mid-chord: a small triangle mesh for unit tests of airfoil
// parameterizations.  Thickness y_t = 5 t (0.2969 sqrt(x) - 0.1260 x - 0.3516 x^2
// + 0.2843 x^3 - 0.1036 x^4), t = 0.12 (-0.1036 instead of the original -0.1015 closes the
// trailing edge).  The wall vertices are exactly the points at the chord stations xs[]
// (each wall segment is one mesh edge), so chord fractions such as 0.3 are vertex positions.
// `level` refines the far field only.
// Physical names: airfoil, farfield, fluid.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
R = 5; xm = 0.5; h_far = 1.0 / f;
xs[] = {0, 0.0025, 0.005, 0.0125, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4,
        0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1};
n = #xs[];

// points 1 (leading edge) .. n (trailing edge) along the upper surface, n + i on the lower
Point(1) = {0, 0, 0, xs[1]};
For i In {1 : n - 2}
  x = xs[i];
  y = 0.6 * (0.2969 * Sqrt(x) - 0.1260 * x - 0.3516 * x^2 + 0.2843 * x^3 - 0.1036 * x^4);
  h = 0.5 * (xs[i + 1] - xs[i - 1]);
  Point(1 + i) = {x, y, 0, h};
  Point(n + i) = {x, -y, 0, h};
EndFor
Point(n) = {1, 0, 0, xs[n - 1] - xs[n - 2]};

// upper surface from the leading to the trailing edge, lower surface back
For i In {0 : n - 2}
  Line(100 + i) = {1 + i, 2 + i};
EndFor
Line(200) = {n + 1, 1};
For i In {1 : n - 3}
  Line(200 + i) = {n + i + 1, n + i};
EndFor
Line(200 + n - 2) = {n, 2 * n - 2};
Transfinite Curve {100 : 100 + n - 2, 200 : 200 + n - 2} = 2;

Point(1000) = {xm, 0, 0};
Point(1001) = {xm + R, 0, 0, h_far};
Point(1002) = {xm, R, 0, h_far};
Point(1003) = {xm - R, 0, 0, h_far};
Point(1004) = {xm, -R, 0, h_far};
Circle(1001) = {1001, 1000, 1002};
Circle(1002) = {1002, 1000, 1003};
Circle(1003) = {1003, 1000, 1004};
Circle(1004) = {1004, 1000, 1001};

Curve Loop(1) = {1001, 1002, 1003, 1004};
Curve Loop(2) = {100 : 100 + n - 2, 200 + n - 2 : 200 : -1};
Plane Surface(1) = {1, 2};

Physical Curve("airfoil") = {100 : 100 + n - 2, 200 : 200 + n - 2};
Physical Curve("farfield") = {1001, 1002, 1003, 1004};
Physical Surface("fluid") = {1};
