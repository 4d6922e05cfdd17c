// What a flow state is measured by: force coefficients on the objective walls (drag, lift,
// their pressure and viscous parts, moment), the pressure difference between the two
// objective points, and the output probes.  Coefficients as in forces.hpp:
//   c_D = F . e_D / (q S_ref),  c_L = F . e_L / (q S_ref),  c_M = M_z / (q S_ref L_ref).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/discretization/flow_residual.hpp"
#include "karman/solver/forces.hpp"

#include <string>
#include <vector>

namespace karman::solver {

class FlowMonitors {
public:
  struct Values {
    double cd = 0, cl = 0, cd_pressure = 0, cd_viscous = 0, cm = 0, dp = 0;
    bool has_dp = false;
    ForceReport force;
    std::vector<double> probes; ///< nv values per output probe
  };

  /// Reads objective.walls/directions/points, reference values and output.probes.  Collective.
  PetscErrorCode setup(const discretization::FlowResidual &res, const config::CaseConfig &cfg);
  /// The values at the local state `state`.  Collective.
  PetscErrorCode evaluate(const discretization::FlowResidual &res,
                          const discretization::LocalState &state, Values *v) const;

  /// CSV column names of evaluate()'s values (after the solver's own columns).
  std::string csv_header(const physics::EquationSet &eq) const;
  std::string csv_values(const Values &v) const;
  std::size_t n_probes() const { return output_probes_.size(); }
  double dynamic_pressure() const { return scaling_.q; }
  double reference_pressure() const { return p_ref_; }
  const std::vector<int> &walls() const { return walls_; }

private:
  std::vector<int> walls_;
  Vec3<double> drag_dir_, lift_dir_;
  ForceScaling scaling_;
  double p_ref_ = 0;
  PointProbes dp_points_, output_probes_;
};

} // namespace karman::solver
