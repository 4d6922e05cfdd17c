// A simulation of the Python module (karman.Simulation): a driver::FlowCase with its state, the
// solves, monitors, fields and output (simulation.cpp, simulation_output.cpp), the parameters and
// the design variables (simulation_parameters.cpp), the objectives and their gradients
// (simulation_gradients.cpp); and the simulations that Python freed, destroyed collectively.
#pragma once

#include "case.hpp"

#include "karman/adjoint/unsteady_adjoint.hpp"
#include "karman/discretization/parameters.hpp"
#include "karman/driver/design_chain.hpp"
#include "karman/driver/flow_case.hpp"

#include <pybind11/pybind11.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace karman::bindings {

class Simulation;
extern std::set<Simulation *> g_live; ///< freed before PetscFinalize
extern long g_simulations;            ///< created so far (collectively: the same on every rank)

/// The PETSc objects of a simulation.  Destroying them is collective (MUMPS, hypre and PETSc
/// free communicators and distributed data), but Python frees objects when its garbage
/// collector decides, which is not at the same moment on every rank: a simulation freed by
/// Python is kept here until every rank has freed it (collect_garbage), as petsc4py does.
struct Remains {
  std::unique_ptr<driver::FlowCase> fc;
  std::unique_ptr<driver::DesignChain> design;
  Vec w = nullptr;
  std::string own_dir; ///< a temporary folder of rank 0 to remove

  /// Frees everything.  Collective (for the same simulation on every rank).
  void destroy() {
    PetscBool finalized = PETSC_TRUE;
    PetscFinalized(&finalized);
    if (finalized) { // PETSc is gone: nothing left to free
      (void)fc.release();
      (void)design.release();
    } else {
      if (w) VecDestroy(&w);
      design.reset();
      fc.reset();
    }
    w = nullptr;
    if (!own_dir.empty()) {
      std::error_code ec;
      fs::remove_all(own_dir, ec);
    }
    own_dir.clear();
  }
};
extern std::map<long, Remains>
    g_garbage; ///< by the simulation's number, freed by Python on this rank

/// Destroys the simulations that Python has freed on every rank, in the order of their
/// numbers.  Collective: called at the start of the collective calls.
void collect_garbage();

class Simulation {
public:
  Simulation(std::shared_ptr<Case> c, const std::string &work_dir);
  /// Freed by Python (not necessarily at the same moment on every rank): the PETSc objects wait
  /// in g_garbage for collect_garbage.
  ~Simulation();
  /// Frees the PETSc objects now (close(), or before PetscFinalize).  Collective.
  void release() { take().destroy(); }
  /// The simulation's number (the order of creation, the same on every rank).
  long id() const { return id_; }

  std::shared_ptr<Case> case_object() const { return case_; }

  // ------------------------------------------------------------------ solve

  py::dict solve(const py::object &progress, bool warm_start);

  // --------------------------------------------------------------- monitors, fields, output

  py::dict forces() const;

  py::dict history() const;

  /// Cell centres and the fields of the state (pressure as "p", velocity as "u", any other field
  /// under its own name): gathered on rank 0 in serial cell order (None on the other ranks), or
  /// this rank's owned cells.
  py::object fields(bool gather) const;

  /// This rank's vertex coordinates (owned and copies), the order of gradient()["X"].
  py::dict vertices() const;

  /// DIR/NAME.pvd (+ walls) and DIR/NAME.h5 of the current state.
  void write(const std::string &directory, const std::string &name) const;

  // ------------------------------------------------------------------ parameters

  py::dict parameters();

  /// The design variables of the case's design: list: names, bounds, the entries.
  py::dict design() const;

  void set_parameters(const py::dict &values);

  // ------------------------------------------------------------------ gradients

  /// For each objective (the case's for "", or YAML text of an objective section): J and
  /// dJ/d(every parameter), dJ/dX (local vertices).  Steady: at the solution of solve(), one
  /// transposed solve per objective with the Jacobian and LU factors of the first; unsteady: no
  /// solve() needed, one forward run from the initial state with the current parameters that
  /// stores the trajectory, and one backward sweep, for all of them
  /// (UnsteadyAdjoint::add_objective).  The unsteady adjoint runs its own forward with converged
  /// steps: solve() keeps no trajectory (UnsteadyAdjoint::run takes none) and stops its steps at
  /// the time discretization's accuracy (solver.tolerances auto), so a solve() before is a forward
  /// run more, and solver.tolerances: forward is refused here.
  /// `own_forward`: kept for karman.torch (it changes nothing now).
  py::list gradients(const std::vector<std::string> &objectives, bool own_forward);

  /// The values of the objectives (as gradients()): steady, at the solution of solve();
  /// unsteady, no solve() needed: one forward run of the unsteady adjoint without the backward
  /// sweep (and without a trajectory).  `own_forward`: kept for karman.torch (changes nothing).
  std::vector<double> objectives(const std::vector<std::string> &objectives, bool own_forward);

  bool solved() const { return solved_; }

private:
  struct History {
    std::vector<double> step, time, cd, cl, dp, probes;
  };
  void record(long step, double t, const solver::FlowMonitors::Values &v);
  /// The design variables: the design space of the case's design: list on the case's mesh (the
  /// reference), its mesh deformation, the initial design applied.
  void setup_design();
  const design::DesignBlock *design_block(const std::string &name) const;
  /// The values v of design entry b into x, checked: b.count numbers within the bounds.
  void set_design_entry(const design::DesignBlock &b, const py::handle &v,
                        std::vector<double> *x) const;
  /// Deforms the reference mesh to the design x (its wall displacement, the volume mesh by
  /// elasticity); a deformation that fails (inverted cells, no convergence) raises and leaves
  /// the mesh and the design as they were.
  void apply_design(const std::vector<double> &x);
  /// dJ/d(design entries) from dJ/dX (the deformation's and the parameterization's reverse).
  void add_design_gradient(const std::vector<Vec3<double>> &Xbar, py::dict *grads) const;

  /// The surface sensitivity of dJ/dX on every wall (adjoint/surface_sensitivity.hpp): per wall
  /// the owned wall vertices of this rank with their serial ids, coordinates, unit normals into
  /// the fluid, dual areas, s_v = dJ/dX . n and the density s_v / A_v.
  py::dict surface(const std::vector<Vec3<double>> &Xbar) const;

  /// The case with each objective section ("" the case's own).
  std::vector<std::shared_ptr<config::CaseConfig>>
  objective_cases(const std::vector<std::string> &objectives) const;
  /// UnsteadyAdjoint::run for the objectives of the cases `cfgs` (one forward run, one backward
  /// sweep) from the initial state: the trajectory under the work folder, the case's adjoint
  /// schedule.
  void run_unsteady_adjoint(const std::vector<std::shared_ptr<config::CaseConfig>> &cfgs,
                            bool forward_only, std::vector<adjoint::UnsteadyAdjointResult> *r);
  void alive() const;
  /// The PETSc objects and the temporary folder, handed over (the simulation is closed).
  Remains take();
  void need_solution(const char *what) const;

  std::shared_ptr<Case> case_;
  std::unique_ptr<driver::FlowCase> fc_;
  /// The case's design: list on its mesh and the deformation from it (null: no design: list)
  std::unique_ptr<driver::DesignChain> chain_;
  std::vector<double> design_x_; ///< the current design
  Vec w_ = nullptr;
  bool solved_ = false;             ///< w_ is the solution of the current parameters
  bool has_solution_ = false;       ///< w_ is a solution (perhaps of earlier parameters)
  discretization::TimeLevel level_; ///< the time level of w_
  solver::FlowMonitors::Values values_;
  History history_;
  std::string work_dir_;
  bool own_dir_ = false;
  int rank_ = rank();
  long id_ = 0;
};

/// Registers karman.Simulation in module m.
void bind_simulation(py::module_ &m);

} // namespace karman::bindings
