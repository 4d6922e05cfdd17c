// The DFG 3D-1Z channel without its cylinder, Gmsh's tetrahedra of uniform size h
// (results/tet-diagnosis.md section 12: the walls' viscous force on tetrahedra against hexahedra).
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.06, Name "h"} ];
L = 2.5; H = 0.41;
Box(1) = {0, 0, 0, L, H, H};
Mesh.MeshSizeMin = h; Mesh.MeshSizeMax = h;
eps = 1e-6;
Physical Surface("inlet") = Surface In BoundingBox{-eps, -eps, -eps, eps, H + eps, H + eps};
Physical Surface("outlet") = Surface In BoundingBox{L - eps, -eps, -eps, L + eps, H + eps, H + eps};
bottom[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, H + eps, eps};
top[] = Surface In BoundingBox{-eps, -eps, H - eps, L + eps, H + eps, H + eps};
south[] = Surface In BoundingBox{-eps, -eps, -eps, L + eps, eps, H + eps};
north[] = Surface In BoundingBox{-eps, H - eps, -eps, L + eps, H + eps, H + eps};
Physical Surface("walls") = {bottom[], top[], south[], north[]};
Physical Volume("fluid") = Volume{:};
