// The surface-normal shape parameterization (eq. 26 of src/adjoint/README.md): one variable per
// wall vertex, a displacement along the unit wall normal smoothed by the Helmholtz filter
// (M + L^2 K) s = M a (P1 elements on the wall surface: segments in 2D, triangles of each face in
// 3D), and its reverse a_bar = M^T (M + L^2 K)^-T (n . d_bar).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/design/shape_parameterization.hpp"
#include "karman/design/wall_surface.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <memory>

namespace karman::design {

/// The surface-normal map of design entry `dc` (its key filter_length: L) on the wall surface
/// `surf` of mesh `m`: variables named NAME.v[serial vertex index], in the order of surf.gid.
PetscErrorCode create_surface_normal(const mesh::Mesh &m, const config::DesignConfig &dc,
                                     const WallSurface &surf,
                                     std::unique_ptr<ShapeParameterization> *out);

} // namespace karman::design
