// NASA TMR 2D bump-in-channel (turbmodels.larc.nasa.gov/bump.html), Re = 3e6 per unit length:
// a viscous wall from x = 0 to 1.5 with the bump
//   y = 0.05 sin^4(pi x / 0.9 - pi / 3)  for 0.3 <= x <= 1.2,  y = 0 elsewhere on the wall,
// symmetry planes upstream to the inlet at x = -25 and downstream to the outlet at x = 26.5, and
// a symmetry plane on top at y = 5.  Structured quadrilaterals in four blocks:
//   over the wall: the wall is a polyline whose vertices lie on the bump curve at
//     x = 1.5 (s - a sin(2 pi s) / (2 pi)), s = i / nw  (clustered at both ends of the wall by
//     (1 - a) : (1 + a)); grid lines run vertically through them.  An inner layer holds the
//     first nin of the ny rows, between the wall and the wall lifted by its height delta, so
//     that every column of it has the same length: each of its thin cells is a parallelogram
//     (a cell height that varied along the wall would tilt the line between the centroids of
//     two stacked cells far from the face normal); an outer block reaches the top;
//   upstream / downstream blocks: geometric progressions growing from the wall's end spacing;
//   wall-normal: ny cells, first height h_wall at level 0, the same on every vertical line.
// `level` (gmsh -2 bump.geo -setnumber level N) doubles every cell count and takes the
// 2^level-th root of every ratio: nested meshes (up to gmsh's Progression, geometric to
// ~1e-4), every spacing halved.
// Physical names: inlet, outlet, top, symmetry (the lower symmetry planes), wall, fluid.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
x_in = -25.0; x_out = 26.5; L = 1.5; H = 5.0;
nw0 = 40;           // level-0 cells along the wall
nu0 = 18;           // level-0 cells upstream (and downstream)
ny0 = 40;           // level-0 cells across
nin0 = 20;          // of them in the inner layer over the wall
a = 0.6;            // wall clustering: end spacing (1 - a) L / nw, middle (1 + a) L / nw
h_wall = 2e-5;      // level-0 first cell height
h_end = (1 - a) * L / nw0; // level-0 streamwise spacing at both ends of the wall

// level-0 ratios (r^n = 1 + K (r - 1), fixed-point iteration from r = 2)
r_u = 2; r_d = 2; r_y = 2;
For k In {1 : 200}
  r_u = (1 + (-x_in) / h_end * (r_u - 1))^(1 / nu0);
  r_d = (1 + (x_out - L) / h_end * (r_d - 1))^(1 / nu0);
  r_y = (1 + H / h_wall * (r_y - 1))^(1 / ny0);
EndFor
nw = nw0 * f; nu = nu0 * f; ny = ny0 * f; nin = nin0 * f;
r_u = r_u^(1 / f); r_d = r_d^(1 / f); r_y = r_y^(1 / f);
delta = H * (r_y^nin - 1) / (r_y^ny - 1); // height of the inner layer

// wall, inner-layer edge and top polylines, points wall[i], mid[i], top[i], i = 0 .. nw
wall[] = {}; mid[] = {}; top[] = {};
For i In {0 : nw}
  s = i / nw;
  x = L * (s - a * Sin(2 * Pi * s) / (2 * Pi));
  If (i == 0)
    x = 0;
  EndIf
  If (i == nw)
    x = L;
  EndIf
  y = 0;
  If (x >= 0.3 && x <= 1.2)
    y = 0.05 * Sin(Pi * x / 0.9 - Pi / 3)^4;
  EndIf
  p = newp; Point(p) = {x, y, 0}; wall[] += p;
  p = newp; Point(p) = {x, y + delta, 0}; mid[] += p;
  p = newp; Point(p) = {x, H, 0}; top[] += p;
EndFor
lw[] = {}; lm[] = {}; lt[] = {};
For i In {0 : nw - 1}
  l = newl; Line(l) = {wall[i], wall[i + 1]}; lw[] += l;
  l = newl; Line(l) = {mid[i], mid[i + 1]}; lm[] += l;
  l = newl; Line(l) = {top[i], top[i + 1]}; lt[] += l;
EndFor
Transfinite Curve {lw[], lm[], lt[]} = 2;

p_in0 = newp; Point(p_in0) = {x_in, 0, 0};
p_in1 = newp; Point(p_in1) = {x_in, H, 0};
p_out0 = newp; Point(p_out0) = {x_out, 0, 0};
p_out1 = newp; Point(p_out1) = {x_out, H, 0};
p_inm = newp; Point(p_inm) = {x_in, delta, 0};   // the inner layer's height on the inlet
p_outm = newp; Point(p_outm) = {x_out, delta, 0}; // and the outlet
l_sym_u = newl; Line(l_sym_u) = {wall[0], p_in0};     // from the wall's start upstream
l_top_u = newl; Line(l_top_u) = {top[0], p_in1};
l_sym_d = newl; Line(l_sym_d) = {wall[nw], p_out0};   // from the wall's end downstream
l_top_d = newl; Line(l_top_d) = {top[nw], p_out1};
// vertical lines from y = 0 up, each split at y = delta into nin and ny - nin cells, so that
// all of them carry the same points (gmsh's Progression is geometric only to ~1e-4, the split
// lines would otherwise not match unsplit ones)
l_in = newl; Line(l_in) = {p_in0, p_inm};
l_ino = newl; Line(l_ino) = {p_inm, p_in1};
l_0 = newl; Line(l_0) = {wall[0], mid[0]};      // x = 0 and x = 1.5: inner part, outer part
l_0o = newl; Line(l_0o) = {mid[0], top[0]};
l_1 = newl; Line(l_1) = {wall[nw], mid[nw]};
l_1o = newl; Line(l_1o) = {mid[nw], top[nw]};
l_out = newl; Line(l_out) = {p_out0, p_outm};
l_outo = newl; Line(l_outo) = {p_outm, p_out1};
Transfinite Curve {l_sym_u, l_top_u} = nu + 1 Using Progression r_u;
Transfinite Curve {l_sym_d, l_top_d} = nu + 1 Using Progression r_d;
Transfinite Curve {l_in, l_0, l_1, l_out} = nin + 1 Using Progression r_y;
Transfinite Curve {l_ino, l_0o, l_1o, l_outo} = ny - nin + 1 Using Progression r_y;

// upstream block (counter-clockwise)
Curve Loop(1) = {-l_sym_u, l_0, l_0o, l_top_u, -l_ino, -l_in};
Plane Surface(1) = {1};
Transfinite Surface {1} = {p_in0, wall[0], top[0], p_in1};
// inner layer and outer block over the wall
rm[] = {}; rt[] = {};
For i In {nw - 1 : 0 : -1}
  rm[] += -lm[i];
  rt[] += -lt[i];
EndFor
Curve Loop(2) = {lw[], l_1, rm[], -l_0};
Plane Surface(2) = {2};
Transfinite Surface {2} = {wall[0], wall[nw], mid[nw], mid[0]};
Curve Loop(3) = {lm[], l_1o, rt[], -l_0o};
Plane Surface(3) = {3};
Transfinite Surface {3} = {mid[0], mid[nw], top[nw], top[0]};
// downstream block
Curve Loop(4) = {l_sym_d, l_out, l_outo, -l_top_d, -l_1o, -l_1};
Plane Surface(4) = {4};
Transfinite Surface {4} = {wall[nw], p_out0, p_out1, top[nw]};
Recombine Surface {1, 2, 3, 4};

Physical Curve("inlet") = {l_in, l_ino};
Physical Curve("outlet") = {l_out, l_outo};
Physical Curve("top") = {l_top_u, lt[], l_top_d};
Physical Curve("symmetry") = {l_sym_u, l_sym_d};
Physical Curve("wall") = {lw[]};
Physical Surface("fluid") = {1, 2, 3, 4};
