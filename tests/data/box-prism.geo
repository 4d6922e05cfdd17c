// Unit cube meshed with triangular prisms (unstructured triangles extruded in z).
// Boundaries: sides (x = 0, x = 1, y = 0, y = 1), zmin, zmax.
DefineConstant[ level = {0, Name "level"} ];
h = 0.34 / 2^level;
Point(1) = {0, 0, 0, h}; Point(2) = {1, 0, 0, h}; Point(3) = {1, 1, 0, h}; Point(4) = {0, 1, 0, h};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
out[] = Extrude {0, 0, 1} { Surface{1}; Layers{3 * 2^level}; Recombine; };
Physical Surface("zmin") = {1};
Physical Surface("zmax") = {out[0]};
Physical Surface("sides") = {out[2], out[3], out[4], out[5]};
Physical Volume("fluid") = {out[1]};
