// Compiled only by ctest layers_enforced, as a file of the physics layer: its own layer's header
// is found, the solver layer's is not (the build refuses an upward include, ARCHITECTURE.md).
#include "karman/physics/flux_kernels.hpp"
#include "karman/solver/steady_solver.hpp"
