// The NACA 0012 RANS mesh of naca0012-rans.geo with its outer wake blocks in strips whose lines
// stay vertical where the wake is (README "Meshes"): the mesh on which 0 degrees converges.
// Same airfoil, layers, cells and levels (`-setnumber level N`).
wake_strips = 1;
Include "naca0012-rans.geo";
