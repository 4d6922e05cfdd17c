// The coupled state (nv = 1 + dim values per cell: p, u_1..u_dim) as separate output fields
// and back: a pressure field (1 component) and a velocity field (3 components, zero z in
// 2D) over the owned cells, the layout of the VTK and HDF5 writers.
#pragma once

#include "karman/io/vtk_writer.hpp"
#include "karman/mesh/mesh.hpp"

#include <string>

namespace karman::io {

/// Pressure and velocity fields of the owned cells of a state w (nv values per cell).
void split_state(const mesh::Mesh &mesh, int nv, const double *w, const std::string &pressure_name,
                 const std::string &velocity_name, Field *pressure, Field *velocity);

/// The owned-cell state w (nv values per cell) from a pressure and a velocity field.
void join_state(const mesh::Mesh &mesh, int nv, const Field &pressure, const Field &velocity,
                double *w);

} // namespace karman::io
