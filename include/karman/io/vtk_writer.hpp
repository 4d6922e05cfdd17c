// ParaView output through the VTK library: per-rank .vtu pieces and a .pvtu per
// snapshot (vtkXMLPUnstructuredGridWriter), and a .pvd collection over time that
// ParaView opens as a time series.  Volume output holds the owned cells of each rank;
// surface output holds the boundary faces of one named boundary.
#pragma once

#include "karman/core/vec3.hpp"
#include "karman/mesh/mesh.hpp"

#include <petscsys.h>

#include <string>
#include <utility>
#include <vector>

namespace karman::io {

/// A field on the cells (or boundary faces) of one rank: `ncomp` values per item.
struct Field {
  std::string name;
  int ncomp = 1;
  std::vector<double> values;
};

/// A .pvd time series of .pvtu snapshots in `directory` named `name`_NNNN.pvtu.
class VtkSeries {
public:
  VtkSeries(MPI_Comm comm, std::string directory, std::string name)
      : comm_(comm), directory_(std::move(directory)), name_(std::move(name)) {}

  /// Writes the owned cells with `fields` (n_owned_cells * ncomp values each) at `time`, and
  /// `point_fields` (ncomp values per local vertex, n_vertices * ncomp) on their vertices.
  PetscErrorCode write_volume(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                              double time, const std::vector<Field> &fields,
                              const std::vector<Field> &point_fields = {});

  /// Writes the faces of boundary `patch` whose cell is owned; `fields` have one value set per
  /// such face, in the order of mesh::Mesh::boundary_faces().
  PetscErrorCode write_surface(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                               int patch, double time, const std::vector<Field> &fields,
                               const std::vector<Field> &point_fields = {});

  /// Continues an existing series (restart): keeps the entries of OUTDIR/name.pvd with
  /// time <= t_max; later snapshots are written after them.  Collective.
  PetscErrorCode resume(double t_max);

  const std::string &pvd_path() const { return pvd_; }

private:
  PetscErrorCode write_grid(const std::vector<Vec3<double>> &X,
                            const std::vector<PetscInt> &vertices,
                            const std::vector<PetscInt> &offsets, const std::vector<int> &types,
                            double time, const std::vector<Field> &fields,
                            const std::vector<Field> &point_fields);
  MPI_Comm comm_;
  std::string directory_, name_, pvd_;
  std::vector<std::pair<double, std::string>> entries_;
};

} // namespace karman::io
