// karman.Simulation: the monitors, the force history, the fields gathered in serial order, the
// vertices and the output files of the current state (see simulation.hpp).
#include "simulation.hpp"

#include "karman/core/parallel.hpp"
#include "karman/driver/flow_output.hpp"

#include <algorithm>
#include <numeric>

namespace karman::bindings {

py::dict Simulation::forces() const {
  need_solution("forces()");
  py::dict d = monitor_dict(values_, fc_->residual().nv());
  d["time"] = level_.t;
  return d;
}

py::dict Simulation::history() const {
  need_solution("history()");
  const int nv = fc_->residual().nv();
  py::dict d;
  d["step"] = array1(history_.step), d["time"] = array1(history_.time);
  d["cd"] = array1(history_.cd), d["cl"] = array1(history_.cl);
  d["delta_p"] = array1(history_.dp);
  const std::size_t n = history_.step.size(), np = fc_->monitors().n_probes();
  py::array_t<double> pr({n, np, static_cast<std::size_t>(nv)});
  std::copy(history_.probes.begin(), history_.probes.end(), pr.mutable_data());
  d["probes"] = pr;
  return d;
}

py::object Simulation::fields(bool gather) const {
  need_solution("fields()");
  const mesh::Mesh &m = fc_->mesh();
  const physics::EquationSet &eq = fc_->residual().equations();
  const int nv = eq.nv(), dim = m.dim;
  const auto &g = fc_->residual().geometry();
  std::vector<double> x;
  std::vector<std::vector<double>> f(eq.n_fields());
  std::vector<PetscInt> gid(m.cell_gid.begin(), m.cell_gid.begin() + m.n_owned_cells);
  const PetscScalar *a;
  check(VecGetArrayRead(w_, &a));
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    for (int d = 0; d < dim; ++d) x.push_back(g.cell_centroid[c][d]);
    for (std::size_t i = 0; i < eq.n_fields(); ++i)
      for (int k = 0; k < eq.field(i).components; ++k) f[i].push_back(a[c * nv + eq.offset(i) + k]);
  }
  check(VecRestoreArrayRead(w_, &a));
  if (gather) {
    std::vector<PetscInt> all_gid;
    check(gather_to_root(world(), gid, MPIU_INT, &all_gid));
    // serial order: item i of the gathered arrays is cell all_gid[i]
    auto to_serial = [&](const std::vector<double> &mine, int ncomp) {
      std::vector<double> all, out;
      check(gather_to_root(world(), mine, MPI_DOUBLE, &all));
      out.resize(all.size());
      for (std::size_t i = 0; i < all_gid.size(); ++i)
        for (int k = 0; k < ncomp; ++k) out[all_gid[i] * ncomp + k] = all[i * ncomp + k];
      return out;
    };
    x = to_serial(x, dim);
    for (std::size_t i = 0; i < eq.n_fields(); ++i) f[i] = to_serial(f[i], eq.field(i).components);
    if (rank() != 0) return py::none();
    gid.resize(all_gid.size());
    std::iota(gid.begin(), gid.end(), 0);
  }
  py::dict d;
  d["centers"] = array2(x, dim);
  for (std::size_t i = 0; i < eq.n_fields(); ++i) {
    const physics::FieldSpec &fs = eq.field(i);
    const std::string key = fs.name == "pressure" ? "p" : fs.name == "velocity" ? "u" : fs.name;
    if (fs.components == 1)
      d[key.c_str()] = array1(f[i]);
    else
      d[key.c_str()] = array2(f[i], fs.components);
  }
  d["cell_ids"] = py::array_t<long>(gid.size(), std::vector<long>(gid.begin(), gid.end()).data());
  return d;
}

py::dict Simulation::vertices() const {
  alive();
  const mesh::Mesh &m = fc_->mesh();
  std::vector<double> x;
  for (const auto &v : fc_->residual().coordinates())
    for (int d = 0; d < m.dim; ++d) x.push_back(v[d]);
  py::dict d;
  d["X"] = array2(x, m.dim);
  d["vertex_ids"] = py::array_t<long>(
      m.vertex_gid.size(), std::vector<long>(m.vertex_gid.begin(), m.vertex_gid.end()).data());
  std::vector<long> owned(m.vertex_owned.begin(), m.vertex_owned.end());
  d["owned"] = py::array_t<long>(owned.size(), owned.data()).attr("astype")("bool");
  return d;
}

void Simulation::write(const std::string &directory, const std::string &name) const {
  need_solution("write()");
  std::string error;
  if (rank() == 0) {
    std::error_code ec;
    fs::create_directories(directory, ec);
    if (ec) error = "cannot create output folder '" + directory + "': " + ec.message();
  }
  check(broadcast_string(world(), &error));
  if (!error.empty()) throw Failure(error);
  check(driver::write_flow_state(fc_->residual(), fc_->monitors(), *case_->cfg, directory, name, w_,
                                 level_));
}

} // namespace karman::bindings
