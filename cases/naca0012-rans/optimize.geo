// The RANS NACA 0012 mesh of naca0012-rans.geo with one far-field boundary: the outlet x = 1 + R
// joins `farfield`, so that the angle of attack -- which the far-field boundaries of a case share,
// and which a shape campaign's point may make a design variable -- is one parameter
// (optimize.yaml).  Same points, cells and levels (`-setnumber level N`) as naca0012-rans.geo.
Include "naca0012-rans.geo";
Delete Physicals;
Physical Curve("wall") = {wall_lines[]};
Physical Curve("farfield") = {far_lines[], out_lines[]};
Physical Surface("fluid") = {surfaces[]};
