// NASA TMR 2D zero-pressure-gradient flat plate (turbmodels.larc.nasa.gov/flatplate.html):
// a plate y = 0, x in [0, 2] (length 2, Re = 5e6 per unit length), a symmetry plane upstream
// from the inlet at x = -1/3, domain height 1.  Structured quadrilaterals in two blocks
// (upstream of the plate, over the plate), every line a geometric progression:
//   wall-normal  ny cells, first height h_wall at level 0, the same on every vertical line;
//   plate        nx cells clustered at the leading edge (first h_le at level 0);
//   upstream     nu cells growing from h_le at the leading edge to the inlet.
// `level` (gmsh -2 flat-plate.geo -setnumber level N) doubles every cell count and takes the
// 2^level-th root of every ratio, which splits each cell into 2 x 2: nested meshes (up to gmsh's
// Progression, geometric to ~1e-4), every spacing halved (the first height by a little more
// than 2, see README.md).
// Physical names: inlet, outlet, top, symmetry, wall, fluid.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
x_in = -1.0 / 3.0;   // inlet (TMR: x = -0.33333)
L = 2.0;             // plate length
H = 1.0;             // domain height
nx0 = 48;            // level-0 cells along the plate
nu0 = 12;            // level-0 cells upstream
ny0 = 48;            // level-0 cells across
h_le = 0.01;         // level-0 streamwise spacing at the leading edge
// level-0 first cell height (a file that sets h_wall before it includes this one keeps its
// value: flat-plate-thin-wall.geo)
DefineConstant[ h_wall = {2e-5, Name "h_wall"} ];

// level-0 ratio r of n cells of total length K * h (first cell h): r^n = 1 + K (r - 1),
// solved by fixed-point iteration (converges to the root r > 1 from r = 2)
r_x = 2; r_u = 2; r_y = 2;
For k In {1 : 200}
  r_x = (1 + L / h_le * (r_x - 1))^(1 / nx0);
  r_u = (1 + (-x_in) / h_le * (r_u - 1))^(1 / nu0);
  r_y = (1 + H / h_wall * (r_y - 1))^(1 / ny0);
EndFor
nx = nx0 * f; nu = nu0 * f; ny = ny0 * f;
r_x = r_x^(1 / f); r_u = r_u^(1 / f); r_y = r_y^(1 / f);

Point(1) = {x_in, 0, 0};
Point(2) = {0, 0, 0};
Point(3) = {L, 0, 0};
Point(4) = {L, H, 0};
Point(5) = {0, H, 0};
Point(6) = {x_in, H, 0};
Line(1) = {2, 1}; // symmetry, from the leading edge upstream
Line(2) = {2, 3}; // the plate
Line(3) = {3, 4}; // outlet, from the wall up
Line(4) = {5, 4}; // top over the plate
Line(5) = {5, 6}; // top upstream, from x = 0 upstream
Line(6) = {2, 5}; // x = 0, from the wall up
Line(7) = {1, 6}; // inlet, from the wall up
Transfinite Curve {1, 5} = nu + 1 Using Progression r_u;
Transfinite Curve {2, 4} = nx + 1 Using Progression r_x;
Transfinite Curve {3, 6, 7} = ny + 1 Using Progression r_y;

Curve Loop(1) = {-1, 6, 5, -7};
Plane Surface(1) = {1};
Transfinite Surface {1} = {1, 2, 5, 6};
Curve Loop(2) = {2, 3, -4, -6};
Plane Surface(2) = {2};
Transfinite Surface {2} = {2, 3, 4, 5};
Recombine Surface {1, 2};

Physical Curve("inlet") = {7};
Physical Curve("outlet") = {3};
Physical Curve("top") = {4, 5};
Physical Curve("symmetry") = {1};
Physical Curve("wall") = {2};
Physical Surface("fluid") = {1, 2};
