// The case-file keys the solver layer owns: `time`, `solver` (besides the scheme keys of the
// discretization), the force monitors' keys of `objective` (walls, drag and lift directions, the
// pressure-difference points) and `output.probes`.  Parsed by the solvers and monitors at set-up.
#pragma once

#include "karman/config/section_options.hpp"

#include <string>
#include <vector>

namespace karman::solver {

enum class TimeMode { Steady, Unsteady };
enum class TimeScheme { Bdf1, Bdf2 };
enum class LinearSolverChoice { Auto, Direct, Iterative };
enum class PreconditionerMatrix { Exact, Compact };
/// solver.continuation: the steady solver's CFL law (solver/steady_solver.hpp).  Auto: Adaptive
/// when a turbulence model is solved, Ser otherwise.
enum class Continuation { Auto, Ser, Adaptive };
/// solver.tolerances: when a time step's Newton solve stops (see solver/unsteady_solver.hpp).
/// Auto: Forward for a forward-only run (karman run), Converged where a gradient follows
/// (karman adjoint, optimize, verify, Python).
enum class StepTolerances { Auto, Converged, Forward };

struct TimeOptions {
  TimeMode mode = TimeMode::Steady;
  TimeScheme scheme = TimeScheme::Bdf2;
  /// time.dt: a fixed step, or auto (error-controlled steps, solver/step_size.hpp)
  config::RealOrAuto dt{false, 0.01};
  double t_end = 1, statistics_start = 0;
  /// dt auto: the local error tolerance per step and the first steps' size (auto: 1e-3 t_end)
  double tolerance = 4e-4;
  config::RealOrAuto dt_initial{true, 0.0}, dt_min{true, 0.0};
  bool unsteady() const { return mode == TimeMode::Unsteady; }
  bool adaptive() const { return dt.automatic; }
  /// The size of the first step: time.dt, or with dt auto time.dt_initial.
  double first_dt() const {
    if (!dt.automatic) return dt.value;
    return dt_initial.automatic ? 1e-3 * t_end : dt_initial.value;
  }
  /// dt auto: the smallest step (auto: first_dt() / 10); a step of this size is accepted
  double smallest_dt() const { return dt_min.automatic ? 0.1 * first_dt() : dt_min.value; }
};

struct SolverOptions {
  long max_iterations = 50;
  double rtol = 1e-10, atol = 1e-12, cfl_max = 1e12;
  config::RealOrAuto cfl_initial{true, 0.0}; ///< auto: by the continuation (steady_solver.hpp)
  LinearSolverChoice linear = LinearSolverChoice::Auto;
  PreconditionerMatrix preconditioner_matrix = PreconditionerMatrix::Compact;
  long refactor_iterations = 20;
  double linear_rtol = 1e-4, linear_atol = 1e-20;
  long linear_max_iterations = 200;
  StepTolerances tolerances = StepTolerances::Auto;
  Continuation continuation = Continuation::Auto;
};

/// The objective section's keys of the force monitors (c_D, c_L, delta p of every run).
struct ForceOptions {
  std::vector<std::string> walls; ///< empty: every wall-type boundary
  Vec3<double> drag_direction, lift_direction;
  std::vector<Vec3<double>> points; ///< the pressure difference's two points (or none)
};

struct ProbeOptions {
  std::vector<Vec3<double>> probes; ///< points of output.probes
};

const config::SectionOptions<TimeOptions> &time_options();
const config::SectionOptions<SolverOptions> &solver_options();
const config::SectionOptions<ForceOptions> &force_options();
const config::SectionOptions<ProbeOptions> &probe_options();

} // namespace karman::solver
