// State <-> output fields (see include/karman/io/state_fields.hpp).
#include "karman/io/state_fields.hpp"

#include "karman/io/hdf5_fields.hpp"

namespace karman::io {

std::vector<Field> state_fields(const mesh::Mesh &mesh, const physics::EquationSet &eq,
                                const double *w, const std::string &prefix,
                                const std::string &suffix) {
  const int nv = eq.nv();
  std::vector<Field> out;
  for (std::size_t i = 0; i < eq.n_fields(); ++i) {
    const physics::FieldSpec &fs = eq.field(i);
    const int ncomp = fs.components == 1 ? 1 : 3, k0 = eq.offset(i);
    Field f{prefix + fs.name + suffix, ncomp, {}};
    f.values.reserve(ncomp * mesh.n_owned_cells);
    for (PetscInt c = 0; c < mesh.n_owned_cells; ++c)
      for (int d = 0; d < ncomp; ++d)
        f.values.push_back(d < fs.components ? w[c * nv + k0 + d] : 0.0);
    out.push_back(std::move(f));
  }
  return out;
}

void join_state(const mesh::Mesh &mesh, const physics::EquationSet &eq,
                const std::vector<Field> &fields, double *w) {
  const int nv = eq.nv();
  for (std::size_t i = 0; i < eq.n_fields(); ++i) {
    const Field &f = fields[i];
    const int k0 = eq.offset(i);
    for (PetscInt c = 0; c < mesh.n_owned_cells; ++c)
      for (int d = 0; d < eq.field(i).components; ++d)
        w[c * nv + k0 + d] = f.values[f.ncomp * c + d];
  }
}

PetscErrorCode
write_state_h5(const mesh::Mesh &mesh, const physics::EquationSet &eq,
               const std::vector<Vec3<double>> &X, const std::string &path, Vec w,
               const std::vector<std::pair<std::string, double>> &attributes,
               const std::vector<std::pair<std::string, std::string>> &text_attributes) {
  PetscFunctionBeginUser;
  const PetscScalar *a;
  PetscCall(VecGetArrayRead(w, &a));
  const std::vector<Field> fields = state_fields(mesh, eq, a);
  PetscCall(VecRestoreArrayRead(w, &a));
  PetscCall(write_fields_h5(mesh, X, path, fields, attributes, text_attributes));
  PetscFunctionReturn(0);
}

PetscErrorCode read_state_h5(const mesh::Mesh &mesh, const physics::EquationSet &eq,
                             const std::string &path, Vec w, std::vector<std::string> *missing) {
  PetscFunctionBeginUser;
  const int nv = eq.nv();
  if (missing) missing->clear();
  PetscScalar *a;
  for (std::size_t i = 0; i < eq.n_fields(); ++i) {
    const physics::FieldSpec &fs = eq.field(i);
    bool present = true;
    if (missing) PetscCall(has_cell_field_h5(mesh.comm, path, fs.name, &present));
    if (!present) {
      missing->push_back(fs.name);
      continue;
    }
    Field f;
    PetscCall(read_cell_field_h5(mesh, path, fs.name, &f));
    PetscCheck(f.ncomp >= fs.components, mesh.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: field '%s' has %d components, expected %d", path.c_str(), fs.name.c_str(),
               f.ncomp, fs.components);
    PetscCall(VecGetArray(w, &a));
    for (PetscInt c = 0; c < mesh.n_owned_cells; ++c)
      for (int d = 0; d < fs.components; ++d)
        a[c * nv + eq.offset(i) + d] = f.values[f.ncomp * c + d];
    PetscCall(VecRestoreArray(w, &a));
  }
  PetscFunctionReturn(0);
}

} // namespace karman::io
