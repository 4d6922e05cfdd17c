// State <-> output fields (see include/karman/io/state_fields.hpp).
#include "karman/io/state_fields.hpp"

namespace karman::io {

void split_state(const mesh::Mesh &mesh, int nv, const double *w, const std::string &pressure_name,
                 const std::string &velocity_name, Field *pressure, Field *velocity) {
  *pressure = Field{pressure_name, 1, {}};
  *velocity = Field{velocity_name, 3, {}};
  pressure->values.reserve(mesh.n_owned_cells);
  velocity->values.reserve(3 * mesh.n_owned_cells);
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    pressure->values.push_back(w[c * nv]);
    for (int d = 0; d < 3; ++d) velocity->values.push_back(d < mesh.dim ? w[c * nv + 1 + d] : 0.0);
  }
}

void join_state(const mesh::Mesh &mesh, int nv, const Field &pressure, const Field &velocity,
                double *w) {
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    w[c * nv] = pressure.values[c];
    for (int d = 0; d < mesh.dim; ++d) w[c * nv + 1 + d] = velocity.values[3 * c + d];
  }
}

} // namespace karman::io
