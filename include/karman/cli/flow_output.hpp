// What `karman run` measures and writes for a flow state: force coefficients on the
// objective walls, the pressure difference between two points, probes, and the
// ParaView/HDF5 output (volume: velocity, pressure, vorticity; wall surfaces: pressure
// coefficient, skin friction, wall shear stress).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/io/vtk_writer.hpp"
#include "karman/solver/forces.hpp"

#include <memory>
#include <string>
#include <vector>

namespace karman::cli {

/// The case's initial state into w (owned cells): initial.file (fields of another run on the
/// same mesh, any rank count, or interpolated from another mesh) or the uniform
/// initial.velocity / initial.pressure.  A file written by a run of another problem (other
/// CaseConfig::problem_keys(), e.g. a spin-up without rotation) is used with a warning that
/// names the keys that differ.  Collective.
PetscErrorCode initial_state(const discretization::FlowResidual &res, const config::CaseConfig &cfg,
                             Vec w);

/// Force coefficients, delta p and probes of the FlowResidual's current local state.
class FlowMonitors {
public:
  struct Values {
    double cd = 0, cl = 0, cd_pressure = 0, cd_viscous = 0, cm = 0, dp = 0;
    bool has_dp = false;
    solver::ForceReport force;
    std::vector<double> probes; ///< nv values per output probe
  };

  /// Reads objective.walls/directions/points, reference values and output.probes.  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res, const config::CaseConfig &cfg);
  PetscErrorCode evaluate(const discretization::FlowResidual &res, Values *v) const;

  /// CSV column names of evaluate()'s values (after the solver's own columns).
  std::string csv_header(int nv) const;
  std::string csv_values(const Values &v) const;
  std::size_t n_probes() const { return output_probes_.size(); }
  double dynamic_pressure() const { return scaling_.q; }
  double reference_pressure() const { return p_ref_; }
  const std::vector<int> &walls() const { return walls_; }

private:
  std::vector<int> walls_;
  Vec3<double> drag_dir_, lift_dir_;
  solver::ForceScaling scaling_;
  double p_ref_ = 0;
  solver::PointProbes dp_points_, output_probes_;
};

/// ParaView time series of the flow (volume and the output.surfaces walls) and HDF5 fields.
class FlowWriter {
public:
  /// `name`: the series name ("flow", "last_good").  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res, const FlowMonitors &mon,
                       const config::CaseConfig &cfg, const std::string &directory,
                       const std::string &name);
  /// Continues existing series up to time t (restart).
  PetscErrorCode resume(double t);
  /// Writes the FlowResidual's current local state as the snapshot at `time`.
  PetscErrorCode write_vtk(const discretization::FlowResidual &res, double time);
  /// Writes velocity and pressure of the current local state to DIR/NAME.h5 (attributes
  /// time, case_hash and case_keys: CaseConfig::problem_hash() and problem_keys()).
  PetscErrorCode write_hdf5(const discretization::FlowResidual &res, double time);
  const std::string &pvd_path() const { return volume_->pvd_path(); }

private:
  const FlowMonitors *mon_ = nullptr;
  std::string directory_, name_, problem_hash_, problem_keys_;
  bool vtk_ = true, hdf5_ = true;
  std::unique_ptr<io::VtkSeries> volume_;
  std::vector<int> surface_patches_;
  std::vector<std::unique_ptr<io::VtkSeries>> surfaces_;
};

} // namespace karman::cli
