// The DFG 3D-1Z channel without its cylinder, transfinite hexahedra with n cells across
// (results/tet-diagnosis.md section 12).
SetFactory("OpenCASCADE");
DefineConstant[ n = {7, Name "n"} ];
L = 2.5; H = 0.41;
Box(1) = {0, 0, 0, L, H, H};
nx = Round(n * L / H);
Transfinite Curve{:} = n + 1;
eps = 1e-6;
xl[] = {};
For i In {0:1}
For j In {0:1}
  xl[] += Curve In BoundingBox{-eps, i*H - eps, j*H - eps, L + eps, i*H + eps, j*H + eps};
EndFor
EndFor
Transfinite Curve{xl[]} = nx + 1;
Transfinite Surface{:};
Recombine Surface{:};
Transfinite Volume{:};
Physical Surface("inlet") = Surface In BoundingBox{-eps, -eps, -eps, eps, H + eps, H + eps};
Physical Surface("outlet") = Surface In BoundingBox{L - eps, -eps, -eps, L + eps, H + eps, H + eps};
bottom[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, H + eps, eps};
top[] = Surface In BoundingBox{-eps, -eps, H - eps, L + eps, H + eps, H + eps};
south[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, eps, H + eps};
north[] = Surface In BoundingBox{-eps, H - eps, -eps, L + eps, H + eps, H + eps};
Physical Surface("walls") = {bottom[], top[], south[], north[]};
Physical Volume("fluid") = Volume{:};
