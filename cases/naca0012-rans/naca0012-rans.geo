// NASA TMR 2D NACA 0012 validation case (turbmodels.larc.nasa.gov/naca0012_val.html), Re = 6e6
// per chord: the TMR sharp-trailing-edge NACA 0012 (chord 1 along x, leading edge at the origin)
//   y = +-0.594689181 (0.298222773 sqrt(x) - 0.127125232 x - 0.357907906 x^2
//                      + 0.291984971 x^3 - 0.105174606 x^4),
// in a C-mesh of structured quadrilaterals: a far-field half circle of radius R = 500 about the
// trailing edge, closed by straight lines to the outlet at x = 1 + R (as TMR's grids: ~500
// chords).  Eight blocks: on each side of the airfoil an inner layer and an outer block, and on
// each side of the wake cut an inner and an outer wake block.
//   Airfoil: a polyline whose vertices lie on the curve at x = t^2,
//     t = (1 + tanh(beta (s - 1/2)) / tanh(beta/2)) / 2,  s = i / ns  (clustered at both ends).
//   Inner layer: every vertex P_i is joined to P_i + delta n_i along its normal n_i, with the
//     wall-normal progression of the far-field lines (first height h_wall at level 0): the cells
//     at the wall are orthogonal.  Near the trailing edge (x > 1 - Lb) the normal turns
//     smoothly to +-y, the direction of the trailing-edge line.  delta = the height of the
//     first nin of the nn wall-normal cells (about 0.1 chord).  Where the line is not normal to
//     the wall (the trailing-edge region) it is lengthened by 1 / cos(angle to the normal), so
//     that every row of cells keeps its height normal to the wall: thin cells whose height
//     varied along the wall would tilt the line between their centroids far from the face
//     normal.  At the trailing edge that factor, 1 / sin(normal angle), also sets the height of
//     the wake's layers.
//   Outer block: from the edge of the inner layer to far-field points at angles that follow the
//     normal's angle (mapped monotonically onto [90, 180] degrees, upper side).
//   Wake: the cut y = 0 from the trailing edge to the outlet, a geometric progression that
//     starts with the trailing-edge spacing; the far-field lines y = +-R likewise from the
//     far-field spacing at their corner (so the cells on both sides of the line x = 1 widen
//     alike).  Across, the wall-normal progression on every vertical line, split at delta
//     like the airfoil's layers: the thin cells along the cut keep their height (a height that
//     varied along the cut would tilt the line between the centroids of two stacked cells far
//     from the face normal), at the price of aspect ratios up to ~1e7 in the far wake (TMR's
//     C-grids have the same).  The lines across the wake run straight from the cut to the far
//     field, leaning by up to 15 degrees in the far wake.  wake_strips = 1
//     (naca0012-rans-wake-strips.geo): the outer wake blocks in horizontal strips (boundaries at
//     the rows js0[] of the outer layer) whose lines are vertical up to row js0[0] (y = 1.9) and
//     then move from the cut's x to the far field's by s = w l + (1 - w) l^pblend,
//     l = (y - y_js0[0]) / (R - y_js0[0]), w = exp(-(x_cut - 1) / Lx): near x = 1 the straight
//     lean (the cells on both sides of x = 1 alike), downstream vertical where the wake is.  In
//     the leaning lines' thin cells a stacked neighbour's centroid, offset along x, dominates the
//     least-squares gradient, and the NACA 0012 at 0 degrees (whose wake stays in them) does not
//     converge; on the strips it does (README, "What does not converge yet").
// `level` (gmsh -2 naca0012-rans.geo -setnumber level N) doubles every cell count, halves the
// surface parameter steps and takes the 2^level-th root of every ratio: nested meshes (up to
// gmsh's Progression, geometric to ~1e-4), every spacing halved.
// Physical names: wall, farfield (the half circle and the lines y = +-R), outlet (x = 1 + R),
// fluid.
DefineConstant[ level = {0, Name "level"} ];
f = 2^level;
R = 500;            // far-field radius about the trailing edge
ns0 = 48;           // level-0 cells per airfoil side
nw0 = 28;           // level-0 cells along the wake cut
nn0 = 40;           // level-0 cells from the wall to the far field
nin0 = 20;          // of them in the orthogonal inner layer
beta = 3.0;         // surface clustering (end spacing / mean spacing = beta / sinh(beta) = 0.30)
h_wall = 9.72e-6;   // level-0 first cell height (level 3: 1.0e-6)
Lb = 0.2;           // chord length over which the normals turn to +-y at the trailing edge
// wake_strips = 1: the outer wake blocks in strips whose lines stay vertical where the wake is
// (naca0012-rans-wake-strips.geo, for small angles of attack; header and README "Meshes")
DefineConstant[ wake_strips = {0, Name "wake_strips"} ];
js0[] = {7, 9, 11, 13, 15, 17}; // level-0 rows of the strips' boundaries (of nn0 - nin0)
pblend = 2;         // the strips' lean grows as l^pblend away from x = 1
Lx = 2;             // the lines near x = 1 keep the straight lean (over ~Lx chords)

// t(s) and the airfoil y(t) (x = t^2), dy/dt
A = 0.594689181;
Macro AirfoilPoint
  tt = 0.5 * (1 + Tanh(beta * (ss - 0.5)) / Tanh(0.5 * beta));
  xx = tt^2;
  yy = A * (0.298222773 * tt - 0.127125232 * tt^2 - 0.357907906 * tt^4 + 0.291984971 * tt^6 -
            0.105174606 * tt^8);
  dy = A * (0.298222773 - 2 * 0.127125232 * tt - 4 * 0.357907906 * tt^3 +
            6 * 0.291984971 * tt^5 - 8 * 0.105174606 * tt^7);
  dx = 2 * tt;
Return

// normal angle at the trailing edge (upper side), for the far-field angle map
ss = 1;
Call AirfoilPoint;
th_te = Atan2(dx, -dy);
// level 0: the trailing-edge spacing starts the wake cut, the far-field spacing next to the
// corner (1, R) starts the wake's upper (lower) boundary y = R (-R)
ss = 1 - 1 / ns0;
Call AirfoilPoint;
h_te = 1 - xx;
h_top = R * 0.5 * Pi * (Atan2(dx, -dy) - th_te) / (Pi - th_te);

// level-0 ratios (r^n = 1 + K (r - 1), fixed-point iteration from r = 2)
r_n = 2; r_w = 2; r_t = 2;
For k In {1 : 300}
  r_n = (1 + R / h_wall * (r_n - 1))^(1 / nn0);
  r_w = (1 + R / h_te * (r_w - 1))^(1 / nw0);
  r_t = (1 + R / h_top * (r_t - 1))^(1 / nw0);
EndFor
ns = ns0 * f; nw = nw0 * f; nn = nn0 * f; nin = nin0 * f;
r_n = r_n^(1 / f); r_w = r_w^(1 / f); r_t = r_t^(1 / f);
delta = R * (r_n^nin - 1) / (r_n^nn - 1); // height of the inner layer
delta_te = delta / Sin(th_te);             // its length along the line x = 1 (see below)

// corner points
p_te = newp; Point(p_te) = {1, 0, 0};
p_le = newp; Point(p_le) = {0, 0, 0};
For side In {0 : 1}
  sg = 1 - 2 * side; // +1 upper, -1 lower
  q_te[side] = newp; Point(q_te[side]) = {1, sg * delta_te, 0};
  f_te[side] = newp; Point(f_te[side]) = {1, sg * R, 0};
  o_top[side] = newp; Point(o_top[side]) = {1 + R, sg * R, 0};
  q_out[side] = newp; Point(q_out[side]) = {1 + R, sg * delta_te, 0};
EndFor
strips[] = {};
nst = #js0[];
If (wake_strips)
  Y0 = delta_te + (R - delta_te) * (r_n^(js0[0] * f) - 1) / (r_n^(nn - nin) - 1);
  For side In {0 : 1}
    sg = 1 - 2 * side;
    For k In {0 : nst - 1}
      yk = delta_te + (R - delta_te) * (r_n^(js0[k] * f) - 1) / (r_n^(nn - nin) - 1);
      lin = (yk - Y0) / (R - Y0);
      pts~{side}~{k}[] = {};
      For i In {0 : nw}
        xw = 1 + R * (r_w^i - 1) / (r_w^nw - 1);
        xt = 1 + R * (r_t^i - 1) / (r_t^nw - 1);
        wi = Exp(-(xw - 1) / Lx);
        sk = wi * lin + (1 - wi) * lin^pblend;
        p = newp; Point(p) = {xw + sk * (xt - xw), sg * yk, 0};
        pts~{side}~{k}[] += p;
      EndFor
      crv~{side}~{k}[] = {};
      For i In {0 : nw - 1}
        l = newl; Line(l) = {pts~{side}~{k}[i], pts~{side}~{k}[i + 1]};
        crv~{side}~{k}[] += l;
      EndFor
      Transfinite Curve {crv~{side}~{k}[]} = 2;
    EndFor
  EndFor
EndIf
q_le = newp; Point(q_le) = {-delta, 0, 0};
f_le = newp; Point(f_le) = {1 - R, 0, 0};
p_out = newp; Point(p_out) = {1 + R, 0, 0};

// per side: airfoil points P, inner-layer edge Q, far-field points F, i = 0 (trailing edge) ..
// ns (leading edge), and their polylines
For side In {0 : 1}
  sg = 1 - 2 * side;
  P[] = {p_te}; Q[] = {q_te[side]}; F[] = {f_te[side]};
  For i In {1 : ns - 1}
    ss = 1 - i / ns;
    Call AirfoilPoint;
    nx = -dy; ny = dx; nl = Sqrt(nx^2 + ny^2);
    nx = nx / nl; ny = ny / nl;
    th = Atan2(ny, nx);
    w = 0;
    If (xx > 1 - Lb)
      w = ((xx - (1 - Lb)) / Lb)^2;
    EndIf
    bx = (1 - w) * nx; by = (1 - w) * ny + w;
    bl = Sqrt(bx^2 + by^2);
    bx = bx / bl; by = by / bl;
    dl = delta / (bx * nx + by * ny); // the same height delta normal to the wall
    phi = 0.5 * Pi + 0.5 * Pi * (th - th_te) / (Pi - th_te);
    p = newp; Point(p) = {xx, sg * yy, 0}; P[] += p;
    p = newp; Point(p) = {xx + dl * bx, sg * (yy + dl * by), 0}; Q[] += p;
    p = newp; Point(p) = {1 + R * Cos(phi), sg * R * Sin(phi), 0}; F[] += p;
  EndFor
  P[] += p_le; Q[] += q_le; F[] += f_le;
  lp[] = {}; lq[] = {}; lf[] = {};
  For i In {0 : ns - 1}
    l = newl; Line(l) = {P[i], P[i + 1]}; lp[] += l;
    l = newl; Line(l) = {Q[i], Q[i + 1]}; lq[] += l;
    l = newl; Line(l) = {F[i], F[i + 1]}; lf[] += l;
  EndFor
  Transfinite Curve {lp[], lq[], lf[]} = 2;
  wall_lines[] += lp[];
  far_lines[] += lf[];
  // trailing-edge line (inner, outer), leading-edge line (inner, outer), wake top, outlet
  te_in[side] = newl; Line(te_in[side]) = {p_te, q_te[side]};
  If (!wake_strips)
    te_out[side] = newl; Line(te_out[side]) = {q_te[side], f_te[side]};
    tes~{side}[] = {te_out[side]};
  Else
    // x = 1 above the inner layer and the outlet, in segments between the strips' rows
    tes~{side}[] = {}; outs~{side}[] = {};
    For k In {0 : nst}
      If (k == 0)
        a = q_te[side]; b = pts~{side}~{0}[0]; ao = q_out[side]; bo = pts~{side}~{0}[nw];
        n_c = js0[0] * f;
      ElseIf (k == nst)
        a = pts~{side}~{nst - 1}[0]; b = f_te[side]; ao = pts~{side}~{nst - 1}[nw]; bo = o_top[side];
        n_c = (nn0 - nin0 - js0[nst - 1]) * f;
      Else
        a = pts~{side}~{k - 1}[0]; b = pts~{side}~{k}[0];
        ao = pts~{side}~{k - 1}[nw]; bo = pts~{side}~{k}[nw];
        n_c = (js0[k] - js0[k - 1]) * f;
      EndIf
      l = newl; Line(l) = {a, b}; tes~{side}[] += l;
      Transfinite Curve {l} = n_c + 1 Using Progression r_n;
      l = newl; Line(l) = {ao, bo}; outs~{side}[] += l;
      Transfinite Curve {l} = n_c + 1 Using Progression r_n;
    EndFor
  EndIf
  If (side == 0)
    le_in = newl; Line(le_in) = {p_le, q_le};
    le_out = newl; Line(le_out) = {q_le, f_le};
    cut = newl; Line(cut) = {p_te, p_out};
    Transfinite Curve {le_in} = nin + 1 Using Progression r_n;
    Transfinite Curve {le_out} = nn - nin + 1 Using Progression r_n;
    Transfinite Curve {cut} = nw + 1 Using Progression r_w;
  EndIf
  wtop[side] = newl; Line(wtop[side]) = {f_te[side], o_top[side]};
  wl[side] = newl; Line(wl[side]) = {q_te[side], q_out[side]};
  outl_in[side] = newl; Line(outl_in[side]) = {p_out, q_out[side]};
  If (!wake_strips)
    outl_out[side] = newl; Line(outl_out[side]) = {q_out[side], o_top[side]};
    outs~{side}[] = {outl_out[side]};
  EndIf
  Transfinite Curve {te_in[side]} = nin + 1 Using Progression r_n;
  If (!wake_strips)
    Transfinite Curve {te_out[side]} = nn - nin + 1 Using Progression r_n;
  EndIf
  Transfinite Curve {wtop[side]} = nw + 1 Using Progression r_t;
  Transfinite Curve {wl[side]} = nw + 1 Using Progression r_w;
  Transfinite Curve {outl_in[side]} = nin + 1 Using Progression r_n;
  If (!wake_strips) // (after outl_in's as before: the order of these settings numbers the nodes)
    Transfinite Curve {outl_out[side]} = nn - nin + 1 Using Progression r_n;
  EndIf

  // reversed polylines (leading edge -> trailing edge)
  rp[] = {}; rq[] = {}; rf[] = {};
  For i In {ns - 1 : 0 : -1}
    rp[] += -lp[i]; rq[] += -lq[i]; rf[] += -lf[i];
  EndFor
  // surfaces, counter-clockwise
  If (side == 0)
    cl = newll; Curve Loop(cl) = {rp[], te_in[0], lq[], -le_in};
    s_in = news; Plane Surface(s_in) = {cl};
    Transfinite Surface {s_in} = {p_le, p_te, q_te[0], q_le};
    cl = newll; Curve Loop(cl) = {rq[], tes~{0}[], lf[], -le_out};
    s_out = news; Plane Surface(s_out) = {cl};
    Transfinite Surface {s_out} = {q_le, q_te[0], f_te[0], f_le};
    cl = newll; Curve Loop(cl) = {cut, outl_in[0], -wl[0], -te_in[0]};
    s_w = news; Plane Surface(s_w) = {cl};
    Transfinite Surface {s_w} = {p_te, p_out, q_out[0], q_te[0]};
    If (!wake_strips)
      cl = newll; Curve Loop(cl) = {wl[0], outl_out[0], -wtop[0], -te_out[0]};
      s_wo = news; Plane Surface(s_wo) = {cl};
      Transfinite Surface {s_wo} = {q_te[0], q_out[0], o_top[0], f_te[0]};
    Else
      For k In {0 : nst}
        If (k == 0)
          bot[] = {wl[0]}; b0 = q_te[0]; b1 = q_out[0];
        Else
          bot[] = crv~{0}~{k - 1}[]; b0 = pts~{0}~{k - 1}[0]; b1 = pts~{0}~{k - 1}[nw];
        EndIf
        If (k == nst)
          top[] = {wtop[0]}; t0 = f_te[0]; t1 = o_top[0];
        Else
          top[] = crv~{0}~{k}[]; t0 = pts~{0}~{k}[0]; t1 = pts~{0}~{k}[nw];
        EndIf
        rtop[] = {};
        For i In {#top[] - 1 : 0 : -1}
          rtop[] += -top[i];
        EndFor
        cl = newll; Curve Loop(cl) = {bot[], outs~{0}[k], rtop[], -tes~{0}[k]};
        s_k = news; Plane Surface(s_k) = {cl};
        Transfinite Surface {s_k} = {b0, b1, t1, t0};
        strips[] += s_k;
      EndFor
    EndIf
  Else
    cl = newll; Curve Loop(cl) = {-lq[], -te_in[1], lp[], le_in};
    s_in = news; Plane Surface(s_in) = {cl};
    Transfinite Surface {s_in} = {q_le, q_te[1], p_te, p_le};
    rt[] = {};
    For k In {#tes~{1}[] - 1 : 0 : -1}
      rt[] += -tes~{1}[k];
    EndFor
    cl = newll; Curve Loop(cl) = {-lf[], rt[], lq[], le_out};
    s_out = news; Plane Surface(s_out) = {cl};
    Transfinite Surface {s_out} = {f_le, f_te[1], q_te[1], q_le};
    cl = newll; Curve Loop(cl) = {wl[1], -outl_in[1], -cut, te_in[1]};
    s_w = news; Plane Surface(s_w) = {cl};
    Transfinite Surface {s_w} = {q_te[1], q_out[1], p_out, p_te};
    If (!wake_strips)
      cl = newll; Curve Loop(cl) = {wtop[1], -outl_out[1], -wl[1], te_out[1]};
      s_wo = news; Plane Surface(s_wo) = {cl};
      Transfinite Surface {s_wo} = {f_te[1], o_top[1], q_out[1], q_te[1]};
    Else
      For k In {0 : nst}
        If (k == 0)
          bot[] = {wl[1]}; b0 = q_te[1]; b1 = q_out[1];
        Else
          bot[] = crv~{1}~{k - 1}[]; b0 = pts~{1}~{k - 1}[0]; b1 = pts~{1}~{k - 1}[nw];
        EndIf
        If (k == nst)
          top[] = {wtop[1]}; t0 = f_te[1]; t1 = o_top[1];
        Else
          top[] = crv~{1}~{k}[]; t0 = pts~{1}~{k}[0]; t1 = pts~{1}~{k}[nw];
        EndIf
        rbot[] = {};
        For i In {#bot[] - 1 : 0 : -1}
          rbot[] += -bot[i];
        EndFor
        cl = newll; Curve Loop(cl) = {top[], -outs~{1}[k], rbot[], tes~{1}[k]};
        s_k = news; Plane Surface(s_k) = {cl};
        Transfinite Surface {s_k} = {t0, t1, b1, b0};
        strips[] += s_k;
      EndFor
    EndIf
  EndIf
  If (!wake_strips)
    surfaces[] += {s_in, s_out, s_w, s_wo};
  Else
    surfaces[] += {s_in, s_out, s_w};
  EndIf
  far_lines[] += wtop[side];
  out_lines[] += {outl_in[side], outs~{side}[]};
EndFor
surfaces[] += strips[];
Recombine Surface {surfaces[]};

Physical Curve("wall") = {wall_lines[]};
Physical Curve("farfield") = {far_lines[]};
Physical Curve("outlet") = {out_lines[]};
Physical Surface("fluid") = {surfaces[]};
