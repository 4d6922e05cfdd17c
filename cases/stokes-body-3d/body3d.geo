// The sphere of diameter 1 (radius 0.5, centre at the origin) and the far field around it as
// prisms: the sphere's surface meshed in triangles of size h (8 octant patches), extruded
// along its normals in n layers whose heights grow by q (Gmsh's normal extrusion), out to the
// outer sphere of radius R = r + T = 140.5 or just beyond on every level.  Stokes
// flow decays like 1/r, so the far field is far (README.md: the drag against R).  The prisms
// are orthogonal to the body and each other; Gmsh's unstructured tetrahedra of such a graded
// domain are where the default multigrid breaks down at Re 0.1 (README.md, issue 42).
// `level` (karman: -setnumber level N) halves h and doubles n with q -> sqrt(q) (about 8x the
// cells).  Physical names: body (the sphere), farfield (the outer sphere), fluid.
DefineConstant[ level = {0, Name "level"} ];
DefineConstant[ T = {140, Name "T"} ]; // R - r (README.md: the drag against R)
f = 2^level;
r = 0.5;
h = 0.1 / f;                       // the triangles on the sphere
q = 1.2^(1 / f);                   // the layers' growth ratio
h0 = 0.02 / f;                     // the first layer's height
n = Ceil(Log(1 + T * (q - 1) / h0) / Log(q)); // layers out to R = r + T or just beyond

Point(1) = {0, 0, 0, h};
Point(2) = {r, 0, 0, h}; Point(3) = {0, r, 0, h}; Point(4) = {-r, 0, 0, h};
Point(5) = {0, -r, 0, h}; Point(6) = {0, 0, r, h}; Point(7) = {0, 0, -r, h};
Circle(1) = {2, 1, 3}; Circle(2) = {3, 1, 4}; Circle(3) = {4, 1, 5}; Circle(4) = {5, 1, 2};
Circle(5) = {2, 1, 6}; Circle(6) = {6, 1, 4}; Circle(7) = {4, 1, 7}; Circle(8) = {7, 1, 2};
Circle(9) = {3, 1, 6}; Circle(10) = {6, 1, 5}; Circle(11) = {5, 1, 7}; Circle(12) = {7, 1, 3};
// the octants, each loop oriented with the outward normal (the extrusion's direction)
Curve Loop(1) = {1, 9, -5};     Surface(1) = {1} In Sphere {1};
Curve Loop(2) = {2, -6, -9};    Surface(2) = {2} In Sphere {1};
Curve Loop(3) = {3, -10, 6};    Surface(3) = {3} In Sphere {1};
Curve Loop(4) = {4, 5, 10};     Surface(4) = {4} In Sphere {1};
Curve Loop(5) = {-8, 12, -1};   Surface(5) = {5} In Sphere {1};
Curve Loop(6) = {-12, -7, -2};  Surface(6) = {6} In Sphere {1};
Curve Loop(7) = {7, -11, -3};   Surface(7) = {7} In Sphere {1};
Curve Loop(8) = {11, 8, -4};    Surface(8) = {8} In Sphere {1};

layers[] = {}; heights[] = {}; t = 0;
For i In {0:n-1}
  t += h0 * q^i; layers[i] = 1; heights[i] = t;
EndFor
// (a normal extrusion's heights are absolute; Recombine keeps the prisms whole)
out[] = Extrude { Surface{1:8}; Layers{layers[], heights[]}; Recombine; };
all[] = Volume{:};
bnd[] = CombinedBoundary{ Volume{all[]}; };
far[] = bnd[];
far[] -= {1:8};
Physical Surface("body") = {1:8};
Physical Surface("farfield") = {far[]};
Physical Volume("fluid") = {all[]};
