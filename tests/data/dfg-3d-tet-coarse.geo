// The unstructured tetrahedral DFG 3D-1Z channel of cases/dfg-3d1z/dfg-3d-tet.geo (OpenCASCADE box
// minus cylinder, Distance + Threshold size field, Gmsh's default algorithm, no optimization) with
// sizes 2.5 times larger: 2704 tetrahedra, non-orthogonality up to 68 degrees
// (the Jacobian test on such cells).
scale = 0.4;
Include "../../cases/dfg-3d1z/dfg-3d-tet.geo";
