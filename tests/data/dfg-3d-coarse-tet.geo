// The very coarse DFG 3D-1Z channel of dfg-3d-coarse.geo with tetrahedra only (the steady
// continuation test: from rest with the default CFL it stalls without the CFL cuts).
scale = 0.35;
hexes = 0;
Include "../../cases/dfg-3d1z/dfg-3d-channel.geo";
