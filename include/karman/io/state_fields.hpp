// A state vector (nv values per cell, laid out by physics::EquationSet) as output fields and back:
// one field per field of the equation set, over the owned cells -- scalars with 1 component,
// vectors with 3 (zero z in 2D) -- named prefix + field name + suffix ("pressure", "velocity";
// "adjoint_pressure", ...).  The layout of the VTK and HDF5 writers and of every file that stores
// a state (flow.h5, optimization states, adjoint fields).
#pragma once

#include "karman/io/vtk_writer.hpp"
#include "karman/mesh/mesh.hpp"
#include "karman/physics/equation_set.hpp"

#include <petscvec.h>

#include <string>
#include <utility>
#include <vector>

namespace karman::io {

/// The fields of the owned cells of a state w.
std::vector<Field> state_fields(const mesh::Mesh &mesh, const physics::EquationSet &eq,
                                const double *w, const std::string &prefix = "",
                                const std::string &suffix = "");

/// The owned-cell state w from `fields`, one per field of eq in its order (vector fields: their
/// first dim components).
void join_state(const mesh::Mesh &mesh, const physics::EquationSet &eq,
                const std::vector<Field> &fields, double *w);

/// Writes the state w (its owned cells) as the fields of eq to the karman fields file `path`,
/// with the mesh at coordinates X and the real and text attributes given (a state that a case
/// reads as its initial.file carries the case's case_hash and case_keys).  Collective.
PetscErrorCode
write_state_h5(const mesh::Mesh &mesh, const physics::EquationSet &eq,
               const std::vector<Vec3<double>> &X, const std::string &path, Vec w,
               const std::vector<std::pair<std::string, double>> &attributes = {},
               const std::vector<std::pair<std::string, std::string>> &text_attributes = {});

/// Reads the state fields of eq from the cell fields of the karman fields file `path` (the same
/// mesh) into w.  A field the file lacks is an error naming the file and the field, or, with
/// `missing`, listed there and left as it is in w.  Collective.
PetscErrorCode read_state_h5(const mesh::Mesh &mesh, const physics::EquationSet &eq,
                             const std::string &path, Vec w,
                             std::vector<std::string> *missing = nullptr);

} // namespace karman::io
