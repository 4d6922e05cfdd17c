// A very coarse DFG 3D-1Z channel for the 3D adjoint tests: cases/dfg-3d1z/dfg-3d-channel.geo
// with every size scaled by 1/0.35.
scale = 0.35;
Include "../../cases/dfg-3d1z/dfg-3d-channel.geo";
