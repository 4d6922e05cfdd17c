// The ParaView and HDF5 output of a flow state: a time series of the volume (velocity,
// pressure, vorticity) and of the output.surfaces walls (pressure coefficient
// c_p = (p - p_ref) / q, skin friction c_f = tau . t / q, wall shear stress), and the cell
// fields in serial order in DIR/NAME.h5 (what initial.file, `karman adjoint` and the
// comparison scripts read).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/io/vtk_writer.hpp"
#include "karman/solver/flow_monitors.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace karman::driver {

class FlowWriter {
public:
  /// `name`: the series name ("flow", "last_good").  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res, const solver::FlowMonitors &mon,
                       const config::CaseConfig &cfg, const std::string &directory,
                       const std::string &name);
  /// Continues existing series up to time t (restart).
  PetscErrorCode resume(double t);
  /// Writes the local state `state` as the snapshot at `time`, with the cell fields `extra` beside
  /// the state's.  Collective.
  PetscErrorCode write_vtk(const discretization::FlowResidual &res,
                           const discretization::LocalState &state, double time,
                           const std::vector<io::Field> &extra = {});
  /// Writes velocity and pressure of `state` to DIR/NAME.h5 (attributes time, case_hash and
  /// case_keys: CaseConfig::problem_hash() and problem_keys()).  Collective.
  PetscErrorCode write_hdf5(const discretization::FlowResidual &res,
                            const discretization::LocalState &state, double time);
  const std::string &pvd_path() const { return volume_->pvd_path(); }

private:
  const solver::FlowMonitors *mon_ = nullptr;
  std::string directory_, name_;
  std::vector<std::pair<std::string, std::string>> problem_attributes_; ///< case_hash, case_keys
  bool vtk_ = true, hdf5_ = true;
  std::unique_ptr<io::VtkSeries> volume_;
  std::vector<int> surface_patches_;
  std::vector<std::unique_ptr<io::VtkSeries>> surfaces_;
};

/// Writes the flow state w of time level `level` as DIR/NAME.pvd (+ wall series) and DIR/NAME.h5
/// at time level.t (the last good state of a failed solve), with the cell fields `extra` in the
/// ParaView series.  Collective.
PetscErrorCode write_flow_state(const discretization::FlowResidual &res,
                                const solver::FlowMonitors &mon, const config::CaseConfig &cfg,
                                const std::string &directory, const std::string &name, Vec w,
                                const discretization::TimeLevel &level,
                                const std::vector<io::Field> &extra = {});

/// Where the residual R(w) of a state is largest: the cell and field whose rows have the largest
/// 2-norm (a failed steady solve names it).
struct ResidualLocation {
  double norm = 0;      ///< |R(w)|_2
  double cell_norm = 0; ///< that cell's |R| over the field's rows
  std::string field;    ///< the field (EquationSet name: "pressure" for continuity, ...)
  Vec3<double> x;       ///< the cell's centroid
};

/// R(w) at time level `level` without time term (a steady state) per field and cell: ParaView
/// fields "residual_<field>", the 2-norm of the field's rows of each cell, and where the largest
/// is.  Collective.
PetscErrorCode residual_fields(const discretization::FlowResidual &res, Vec w,
                               const discretization::TimeLevel &level,
                               std::vector<io::Field> *fields, ResidualLocation *where);

} // namespace karman::driver
