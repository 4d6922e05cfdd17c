// The case-file schema (see include/karman/config/case_schema.hpp).  Adding a key
// means adding one line here; parsing, validation, help and the resolved output follow.
#include "karman/config/case_schema.hpp"

#include <cmath>
#include <sstream>

namespace karman::config {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

KeySpec positive(std::string name, std::string def, std::string help) {
  return KeySpec{
      std::move(name), KeyType::Real, std::move(def), std::move(help), {}, 0.0, true, inf};
}

KeySpec nonnegative(std::string name, std::string def, std::string help) {
  return KeySpec{
      std::move(name), KeyType::Real, std::move(def), std::move(help), {}, 0.0, false, inf};
}

KeySpec real(std::string name, std::string def, std::string help) {
  return KeySpec{std::move(name), KeyType::Real, std::move(def), std::move(help)};
}

KeySpec integer(std::string name, std::string def, std::string help, double min, double max = inf) {
  return KeySpec{
      std::move(name), KeyType::Integer, std::move(def), std::move(help), {}, min, false, max};
}

KeySpec choice(std::string name, std::string def, std::string help,
               std::vector<std::string> choices) {
  return KeySpec{std::move(name), KeyType::Choice, std::move(def), std::move(help),
                 std::move(choices)};
}

KeySpec typed(std::string name, KeyType type, std::string def, std::string help) {
  return KeySpec{std::move(name), type, std::move(def), std::move(help)};
}

// Keys shared by the BC types that impose a velocity profile across the patch.
std::vector<KeySpec> profile_keys() {
  return {
      choice("profile", "uniform",
             "shape across the patch: uniform, or parabolic (product of 4 s (1 - s) over the "
             "profile axes, s in [0,1] across profile_range; peak value at the centre)",
             {"uniform", "parabolic"}),
      choice("profile_axis", "y", "coordinate across which a parabolic profile varies",
             {"x", "y", "z"}),
      typed("profile_range", KeyType::RealList, "[0, 1]",
            "[lo, hi] of profile_axis where the parabolic profile vanishes"),
      choice("profile_axis2", "none", "second profile coordinate (3D ducts); none in 2D",
             {"none", "x", "y", "z"}),
      typed("profile_range2", KeyType::RealList, "[0, 1]", "[lo, hi] of profile_axis2"),
  };
}

std::vector<SectionSpec> make_sections() {
  std::vector<SectionSpec> s;
  s.push_back(
      {"mesh",
       "the computational mesh",
       {
           typed("file", KeyType::Path, "",
                 "Gmsh geometry (.geo, meshed by gmsh) or mesh (.msh), relative to the "
                 "case file"),
           integer("level", "0", "refinement level, passed to gmsh as `-setnumber level N`", 0, 12),
           integer("dimension", "2", "space dimension of the mesh (2 or 3)", 2, 3),
           typed("cache_dir", KeyType::String, "''",
                 "folder for generated .msh files; empty: .karman-cache beside the .geo"),
       }});
  s.push_back({"fluid",
               "fluid properties (incompressible, Newtonian)",
               {
                   positive("density", "1.0", "density rho [kg/m^3]"),
                   positive("viscosity", "1.0e-3", "kinematic viscosity nu [m^2/s]"),
               }});
  s.push_back({"reference",
               "reference values for force coefficients c = 2 F / (rho U^2 S)",
               {
                   positive("velocity", "1.0", "reference velocity U [m/s]"),
                   positive("length", "1.0", "reference length (2D: S = length per unit depth)"),
                   nonnegative("area", "0.0", "reference area S in 3D; 0 means length^2"),
                   typed("moment_center", KeyType::RealVector, "[0, 0, 0]",
                         "point about which moments are taken"),
                   real("pressure", "0.0", "reference pressure of the pressure coefficient"),
               }});
  s.push_back(
      {"initial",
       "initial state (steady: the first Newton iterate)",
       {
           typed("velocity", KeyType::RealVector, "[0, 0, 0]", "uniform initial velocity"),
           real("pressure", "0.0", "uniform initial pressure"),
           typed("file", KeyType::String, "''",
                 "HDF5 fields of another run (its OUTDIR/flow.h5) used as the initial state "
                 "instead of the "
                 "uniform values; relative to the case file.  A file of another mesh (a coarser "
                 "level) is "
                 "interpolated: linear least-squares fit through the nearest source cell centres"),
       }});
  s.push_back(
      {"time",
       "time integration",
       {
           choice("mode", "steady",
                  "steady (Newton with pseudo-transient continuation) "
                  "or unsteady (implicit BDF)",
                  {"steady", "unsteady"}),
           choice("scheme", "bdf2", "unsteady scheme: bdf1, or bdf2 (started with one bdf1 step)",
                  {"bdf1", "bdf2"}),
           positive("dt", "0.01", "time step [s] (unsteady)"),
           nonnegative("t_end", "1.0", "final time [s] (unsteady)"),
           nonnegative("statistics_start", "0.0",
                       "unsteady: start of the window for the force statistics and the Strouhal "
                       "number [s]"),
       }});
  s.push_back(
      {"solver",
       "nonlinear solver (linear solvers are chosen with PETSc options)",
       {
           integer("max_iterations", "50", "maximum Newton iterations (steady) or per step", 1),
           positive("rtol", "1e-10",
                    "stop when the residual norm has fallen by this factor (unsteady: in each "
                    "time step, from the extrapolated initial guess).  Forward-only unsteady runs "
                    "may use 1e-2 with linear_rtol 1e-2: 1.06 Newton iterations per step, DFG 2D-2 "
                    "statistics within 3e-4 of the default's (scripts/bench-dfg2d2.sh); the "
                    "unsteady adjoint needs 1e-8 or below"),
           positive("atol", "1e-12", "stop when the residual norm is below this value"),
           positive("cfl_initial", "10.0",
                    "initial pseudo-time CFL number (steady); the continuation changes it when "
                    "the ramp stalls or a line search fails (solver/steady_solver.hpp)"),
           positive("cfl_max", "1e12", "largest pseudo-time CFL number (steady)"),
           positive(
               "stabilization", "1.0",
               "scale of the pressure-stabilising (Rhie-Chow-type) term of the face mass flux"),
           KeySpec{
               "upwind",
               KeyType::Real,
               "1.0",
               "upwind fraction of the convected face velocity: 1 second-order upwind (most "
               "robust), "
               "0 the centred mean of the two linear reconstructions (no numerical dissipation), "
               "between: a blend",
               {},
               0.0,
               false,
               1.0},
           choice("linear", "auto",
                  "linear solver of the Newton steps and the adjoint: direct (MUMPS LU of the "
                  "exact Jacobian: robust, exact, memory grows faster than the mesh: ~20 KiB per "
                  "cell in 2D, ~90 in 3D), iterative (GMRES on the exact Jacobian preconditioned "
                  "by coupled algebraic multigrid on the compact face-neighbour matrix; steady "
                  "solves Jacobian-free; memory about linear in the cells, ~4 KiB per cell in 2D) "
                  "or auto (direct up to 150000 unknowns, cells x (1 + dimension), in 3D up to "
                  "40000, iterative above); -ksp_type, -pc_type, -pc_gamg_*, -mg_levels_* override "
                  "either",
                  {"auto", "direct", "iterative"}),
           choice("preconditioner_matrix", "compact",
                  "unsteady, direct: matrix the LU factors are built from: exact (the full "
                  "Jacobian: GMRES converges in one iteration, large factors) or compact (only "
                  "face-neighbour couplings: several times smaller factors, a few GMRES "
                  "iterations with the exact Jacobian); iterative always uses the compact matrix",
                  {"exact", "compact"}),
           integer("refactor_iterations", "20",
                   "unsteady forward and adjoint: reuse the preconditioner (LU factors or "
                   "multigrid hierarchy) across Newton steps and time levels until a linear solve "
                   "needs more than this many iterations, or 1.1 times as many as right after its "
                   "set-up, then set it up again",
                   1),
           positive(
               "linear_rtol", "1e-4",
               "unsteady: relative tolerance of each Newton step's linear solve (inexact Newton; "
               "-ksp_rtol overrides it)"),
           positive("linear_atol", "1e-20",
                    "unsteady: absolute tolerance of each Newton step's linear solve (-ksp_atol "
                    "overrides it)"),
           integer("linear_max_iterations", "200",
                   "unsteady: maximum iterations of each Newton step's linear solve (-ksp_max_it "
                   "overrides it)",
                   1),
       }});
  s.push_back(
      {"output",
       "what is written to the output folder",
       {
           typed("vtk", KeyType::Bool, "true", "write ParaView (.pvd/.pvtu/.vtu) files"),
           integer("vtk_every", "10", "unsteady: write ParaView files every N steps", 1),
           integer("checkpoint_every", "10",
                   "unsteady: write a restart checkpoint every N steps (0: none) to "
                   "OUTDIR/checkpoints/",
                   0),
           typed("surfaces", KeyType::NameList, "[]",
                 "boundaries written as surface files; empty: every wall-type boundary"),
           typed("hdf5", KeyType::Bool, "true", "write mesh and fields to OUTDIR/flow.h5"),
           typed("probes", KeyType::PointList, "[]",
                 "points where pressure and velocity are reported (forces.csv, summary.json)"),
       }});
  s.push_back(
      {"adjoint",
       "the adjoint (karman adjoint, karman verify)",
       {
           typed("parameters", KeyType::NameList, "[]",
                 "parameters whose gradient is reported and verified, e.g. [fluid.viscosity, "
                 "boundaries.cylinder.omega]; empty: all the case has"),
           choice(
               "schedule", "store-all",
               "unsteady: store-all (every state on disk: scratch files in the output's trajectory "
               "folder, one per rank, removed at the end) or revolve (at most "
               "`snapshots` states in memory, binomial schedule, the rest recomputed)",
               {"store-all", "revolve"}),
           integer("snapshots", "20", "unsteady, revolve: the storage budget in states", 1),
           choice(
               "preconditioner_matrix", "exact",
               "unsteady, direct: the transposed GMRES solves (exact Jacobian, relative "
               "tolerance adjoint.rtol) are preconditioned by the LU factors of the full Jacobian "
               "(exact) or of its face-neighbour part (compact), reused across levels as "
               "solver.refactor_iterations says; iterative always uses multigrid on the compact "
               "matrix",
               {"exact", "compact"}),
           positive("rtol", "1e-10",
                    "relative tolerance of the transposed (adjoint) linear solves, as the "
                    "forward's solver.rtol: gradients to ~1e-9 relative (-adj_ksp_rtol overrides "
                    "it)"),
           positive("atol", "1e-30",
                    "absolute tolerance of the transposed (adjoint) linear solves (-adj_ksp_atol "
                    "overrides it)"),
           integer("max_iterations", "1000",
                   "steady: maximum iterations of the transposed solve (with a Krylov "
                   "-adj_ksp_type; the "
                   "default preonly LU takes one; -adj_ksp_max_it overrides it)",
                   1),
           integer("initial_guess", "6",
                   "unsteady, Krylov solves: each level's transposed solve starts from the "
                   "combination of the adjoints of the last N levels with the least residual (a "
                   "smooth adjoint is extrapolated to ~(dt/T)^N: fewer iterations to the same "
                   "tolerance); 0: from zero",
                   0),
           integer("recycle", "4",
                   "unsteady, iterative: the transposed GMRES solves carry this many vectors from "
                   "level to level (GCRO-DR Krylov recycling: the slowest modes of one level's "
                   "solve are deflated from the next ones' from their first iteration); each "
                   "cycle adds the KSP's restart (20) Arnoldi steps; 0: plain GMRES "
                   "(KSPSolveTranspose; also with any other -adj_ksp_type)",
                   0),
           integer("level_max_iterations", "500",
                   "unsteady: maximum iterations of each level's transposed GMRES solve "
                   "(-adj_ksp_max_it "
                   "overrides it)",
                   1),
           integer(
               "save_every", "0",
               "unsteady: save the adjoint state every N steps so that a killed adjoint resumes "
               "(karman adjoint --restart); 0: never",
               0),
       }});
  s.push_back(
      {"objective",
       "quantity of interest (forces are always reported; the objective drives the adjoint)",
       {
           choice(
               "type", "drag",
               "drag or lift: force coefficient along drag_direction / lift_direction on `walls`; "
               "force: along `direction`; moment: moment coefficient about "
               "reference.moment_center; "
               "pressure-difference: p(points[0]) - p(points[1]); pressure-drop: area-averaged "
               "pressure "
               "of patches[0] minus patches[1]; probe-match: sum of weighted squared differences "
               "between the "
               "probed (p, u, ...) at `probes` and `observed`; sum: weighted sum of `terms`",
               {"drag", "lift", "force", "moment", "pressure-difference", "pressure-drop",
                "probe-match", "sum"}),
           typed("walls", KeyType::NameList, "[]",
                 "boundaries whose force is measured; empty: every wall-type boundary"),
           typed("drag_direction", KeyType::RealVector, "[1, 0, 0]", "unit direction of drag"),
           typed("lift_direction", KeyType::RealVector, "[0, 1, 0]", "unit direction of lift"),
           typed("direction", KeyType::RealVector, "[1, 0, 0]", "direction of a `force` objective"),
           typed("points", KeyType::PointList, "[]",
                 "two points for the pressure difference (also reported in forces.csv)"),
           typed("patches", KeyType::NameList, "[]", "two boundaries for pressure-drop"),
           typed("probes", KeyType::PointList, "[]", "probe-match: the probe points"),
           typed("observed", KeyType::RealTable, "[]",
                 "probe-match: per probe the observed (p, u, v[, w])"),
           typed("observations_file", KeyType::String, "''",
                 "probe-match, unsteady: CSV of observations in time, rows t, then (p, u, v[, w]) "
                 "of every "
                 "probe (linear interpolation in t); replaces `observed`"),
           typed("component_weights", KeyType::RealList, "[1, 1, 1, 1]",
                 "probe-match: weights of the squared differences of p, u, v, w"),
           real("weight", "1.0", "weight of this objective (of this term in a sum)"),
           choice("time", "average",
                  "unsteady: the time average of the objective over `window`, its value at the "
                  "final time, its root mean square over `window` (rms: sqrt of the time "
                  "average of its square) or its standard deviation there (std: the r.m.s. of "
                  "its fluctuation about the window's mean, e.g. the r.m.s. lift)",
                  {"average", "final", "rms", "std"}),
           typed("window", KeyType::RealList, "[]",
                 "unsteady: [t0, t1] of the time average; empty: the whole run"),
           choice("weighting", "uniform",
                  "unsteady: the weights of the levels in the window (time average, rms, std): "
                  "uniform (trapezoidal rule) or hann (proportional to sin^2(pi (t - t0) / (t1 - "
                  "t0)), normalized; a periodic signal whose period does not divide the window "
                  "then averages with an error ~(period / window)^3 instead of ~(period / "
                  "window), so that a mean drag does not ripple as a forcing frequency changes)",
                  {"uniform", "hann"}),
           nonnegative(
               "control_cost", "0.0",
               "unsteady: adds control_cost * sum_n dt omega(t^n)^2 for the wall `control_wall`"),
           typed("control_wall", KeyType::String, "''",
                 "unsteady: the rotating wall of the control cost"),
           typed("terms", KeyType::TermList, "[]",
                 "sum: the terms, each a map with the keys of this section (type, weight, ...)"),
       }});
  s.push_back(
      {"optimization",
       "karman optimize: the optimizer over the `design` variables (minimizing the objective "
       "subject to the `constraints`) and the mesh deformation",
       {
           choice("algorithm", "slsqp",
                  "NLopt algorithm: slsqp (sequential quadratic programming; equality and "
                  "inequality constraints), ccsaq or mma (conservative approximations; "
                  "inequalities only), lbfgs (limited-memory quasi-Newton with bounds; no "
                  "constraints), auto (lbfgs for more than 100 variables without constraints, "
                  "ccsaq for more than 100 with inequalities only, slsqp otherwise)",
                  {"slsqp", "ccsaq", "mma", "lbfgs", "auto"}),
           integer("max_evaluations", "30",
                   "maximum number of evaluations (forward + adjoints) of the objective", 1),
           positive("xtol_rel", "1e-6",
                    "stop when the design changes by less than this (relative)"),
           positive("ftol_rel", "1e-8",
                    "stop when the objective changes by less than this (relative)"),
           integer("projection_steps", "0",
                   "at the end, project the best nearly feasible design (if better than the "
                   "best feasible one) onto the constraints with at most this many Gauss-Newton "
                   "steps, one evaluation each (0: none)",
                   0),
           integer("vtk_every", "1",
                   "ParaView snapshot of the flow every this many evaluations (0: none; the "
                   "shape is written at every evaluation)",
                   0),
           positive(
               "deformation_stiffness_exponent", "1.0",
               "mesh deformation: Young's modulus E = V^-exponent per cell (stiff small cells)"),
           real("deformation_poisson_ratio", "0.3", "mesh deformation: Poisson's ratio"),
           positive("deformation_rtol", "1e-14",
                    "mesh deformation: relative tolerance of the CG solves (also of its reverse)"),
       }});
  return s;
}

// The keys of one `constraints:` entry: the objective section's keys (a flow constraint is an
// objective: drag, lift, moment, pressure-drop, ...) with geometric types added, and the
// constraint's own keys.
SectionSpec make_constraint_spec(const std::vector<SectionSpec> &sections) {
  SectionSpec c{"constraints", "constraints of karman optimize, each C sense value", {}};
  c.keys.push_back(choice(
      "type", "",
      "area (2D) or volume (3D) of the body enclosed by `walls`, centroid (component `axis`) of "
      "that body, thickness of a 2D body at chord station `station`, or a flow quantity with "
      "the keys of the objective section (drag, lift, force, moment, pressure-difference, "
      "pressure-drop, probe-match, sum; unsteady: its time average over `window`), or "
      "control-power: the time average over `window` of omega(t)^2 of `control_wall` (unsteady)",
      {"area", "volume", "centroid", "thickness", "drag", "lift", "force", "moment",
       "pressure-difference", "pressure-drop", "probe-match", "sum", "control-power"}));
  c.keys.push_back(choice("sense", "", "C = value, C <= value or C >= value", {"=", "<=", ">="}));
  c.keys.push_back(real("value", "", "the bound"));
  c.keys.push_back(typed("relative", KeyType::Bool, "false",
                         "value is a factor of C on the initial shape (geometric constraints)"));
  c.keys.push_back(positive("tolerance", "1e-8", "feasibility tolerance of the optimizer"));
  c.keys.push_back(typed("name", KeyType::String, "''", "name in logs and history columns"));
  c.keys.push_back(choice("axis", "x", "centroid: the component", {"x", "y", "z"}));
  c.keys.push_back(real("station", "0.0", "thickness: the chord station x"));
  for (const auto &k : find_section(sections, "objective")->keys)
    if (k.name != "type") c.keys.push_back(k);
  return c;
}

std::vector<SectionSpec> make_boundary_types() {
  std::vector<SectionSpec> b;
  b.push_back(
      {"wall",
       "no-slip wall; may translate with `velocity` and rotate about `center` with `omega`",
       {
           typed("velocity", KeyType::RealVector, "[0, 0, 0]", "translation velocity [m/s]"),
           typed("omega", KeyType::TimeFunction, "0.0",
                 "rotation rate [rad/s], counter-clockwise about +z (2D); may depend on time"),
           typed("center", KeyType::RealVector, "[0, 0, 0]", "centre of rotation"),
       }});
  {
    std::vector<KeySpec> keys = {
        typed("velocity", KeyType::TimeFunction, "",
              "inflow speed U: the uniform value, or the peak of a parabolic profile; may depend "
              "on time"),
        typed("direction", KeyType::RealVector, "[0, 0, 0]",
              "flow direction; [0, 0, 0] means the inward normal of each face"),
    };
    for (auto &k : profile_keys()) keys.push_back(k);
    b.push_back({"velocity-inlet", "prescribed inflow velocity", keys});
  }
  b.push_back({"pressure-outlet",
               "outlet: prescribed pressure, zero normal velocity gradient (do-nothing)",
               {real("pressure", "0.0", "outlet pressure p [Pa]")}});
  b.push_back({"symmetry", "slip wall / symmetry plane: zero normal velocity, zero shear", {}});
  b.push_back({"far-field",
               "uniform stream: velocity imposed where it enters, pressure where it leaves",
               {
                   typed("velocity", KeyType::RealVector, "", "free-stream velocity [m/s]"),
                   real("pressure", "0.0", "free-stream pressure"),
               }});
  {
    std::vector<KeySpec> keys = {
        typed(
            "amplitude", KeyType::TimeFunction, "",
            "normal velocity into the fluid (blowing > 0, suction < 0) [m/s]; may depend on time"),
    };
    for (auto &k : profile_keys()) keys.push_back(k);
    b.push_back({"blowing-suction", "wall patch with a prescribed normal velocity (a jet)", keys});
  }
  return b;
}

// Keys shared by every design parameterization.
std::vector<KeySpec> design_common_keys() {
  return {
      typed("name", KeyType::String, "''",
            "name of the parameterization, the prefix of its variables' names; empty: the "
            "type's short name and its index among the parameterizations of that type (ffd0, "
            "hh0, rigid0, normal0)"),
      typed("walls", KeyType::NameList, "",
            "the wall boundaries that this parameterization moves (the other boundaries stay)"),
      typed("lower", KeyType::RealList, "[]",
            "lower bounds of the variables: one value for all, or one per variable in their "
            "order; empty: unbounded"),
      typed("upper", KeyType::RealList, "[]",
            "upper bounds of the variables: one value for all, or one per variable; empty: "
            "unbounded"),
      typed("initial", KeyType::RealList, "[]",
            "initial values of the variables: one value for all, or one per variable; empty: "
            "0 (the reference shape)"),
  };
}

std::vector<SectionSpec> make_design_types() {
  std::vector<SectionSpec> d;
  auto with_common = [](std::vector<KeySpec> keys) {
    std::vector<KeySpec> all = design_common_keys();
    for (auto &k : keys) all.push_back(std::move(k));
    return all;
  };
  d.push_back(
      {"ffd",
       "free-form deformation box (axis-aligned): Bernstein polynomials of degree n-1 per "
       "direction in the box's local coordinates; variables: displacements of the free control "
       "points along `axes`; the vertices of `walls` inside the box move",
       with_common({
           typed("origin", KeyType::RealVector, "", "the box's lowest corner"),
           typed("size", KeyType::RealVector, "", "the box's edge lengths (each > 0)"),
           typed("lattice", KeyType::RealList, "",
                 "control points per direction [nx, ny] (2D) or [nx, ny, nz] (3D), each >= 2"),
           typed("axes", KeyType::NameList, "[y]",
                 "directions in which the control points move (x, y, z): one variable per free "
                 "control point and axis"),
           integer("fixed_layers", "1",
                   "layers of control points held fixed on every side of the box: 1 makes the "
                   "displacement vanish on the box's boundary (continuous there), 2 also its "
                   "first derivative",
                   0),
       })});
  d.push_back(
      {"hicks-henne",
       "Hicks-Henne bumps on an airfoil-like 2D body: b_i(x) = sin^width(pi x^(ln 0.5 / ln h_i)) "
       "at chord fraction x, one variable per bump and surface; a positive value thickens the "
       "body (moves its surface outward along the thickness direction)",
       with_common({
           typed("positions", KeyType::RealList, "",
                 "chord fractions h_i of the bump peaks, increasing, each in (0, 1)"),
           positive("width", "3.0", "width exponent t of the bumps (larger: narrower)"),
           choice("surfaces", "both",
                  "surfaces that get bumps: both (upper then lower variables), upper or lower",
                  {"both", "upper", "lower"}),
           typed("chord_direction", KeyType::RealVector, "[1, 0]",
                 "direction from leading to trailing edge; the leading and trailing edges are "
                 "the wall vertices of least and greatest position along it; the thickness "
                 "direction (upper side) is it turned by +90 degrees about z"),
       })});
  d.push_back(
      {"rigid",
       "rigid motion of the walls: rotation by `angle` (radians, counter-clockwise about +z "
       "through `center`; 2D only) and translation by (dx, dy[, dz])",
       with_common({
           typed("center", KeyType::RealVector, "[0, 0, 0]", "centre of rotation"),
           typed("variables", KeyType::NameList, "[angle, dx, dy]",
                 "the motions that are variables, of angle, dx, dy, dz (the others stay 0)"),
       })});
  d.push_back(
      {"surface-normal",
       "one variable per wall vertex: displacement along the unit wall normal (out of the body, "
       "into the fluid), smoothed by the Helmholtz filter (M + L^2 K) s = M a on the wall "
       "surface so that the gradient is a smooth descent direction",
       with_common({
           nonnegative("filter_length", "",
                       "filter length L of the Helmholtz (Sobolev) smoothing; 0: no smoothing"),
       })});
  // flow-control and identification variables (driver/control_optimization.hpp): no walls
  const std::vector<KeySpec> control_common = {
      typed("name", KeyType::String, "''", "name of the entry in messages and verify.json"),
      typed("lower", KeyType::RealList, "[]",
            "lower bounds: one value for all variables of the entry, or one per variable; "
            "empty: unbounded"),
      typed("upper", KeyType::RealList, "[]",
            "upper bounds: one value for all, or one per variable; empty: unbounded"),
      typed("initial", KeyType::RealList, "[]",
            "initial values: one value for all, or one per variable; empty: the case's values"),
      typed("scale", KeyType::RealList, "[]",
            "the optimizer sees a / scale (one value for all, or one per variable; each > 0); "
            "empty: |initial value| (1 where it is 0) for parameter entries, 1 otherwise"),
  };
  auto with_control = [&](std::vector<KeySpec> keys) {
    std::vector<KeySpec> all = control_common;
    for (auto &k : keys) all.push_back(std::move(k));
    return all;
  };
  d.push_back({"parameter",
               "physical and boundary parameters by their registry name, constant in time: "
               "fluid.viscosity, boundaries.INLET.velocity, boundaries.WALL.omega (2D), "
               "boundaries.WALL.velocity.x, boundaries.JET.amplitude, ... (karman adjoint lists "
               "them); steady and unsteady cases",
               with_control({typed("parameters", KeyType::NameList, "",
                                   "the parameters, one variable each")})});
  d.push_back({"time-function",
               "parameters of a boundary parameter's time function (unsteady): a sine's amplitude, "
               "frequency, phase, offset; a table's knot values knot[j] (or `knots`: all of them)",
               with_control({typed("function", KeyType::String, "",
                                   "the boundary parameter given by the time function, e.g. "
                                   "boundaries.cylinder.omega"),
                             typed("parameters", KeyType::NameList, "",
                                   "the function's parameters: amplitude, frequency, phase, offset "
                                   "(sine); knot[j] or knots (table)")})});
  d.push_back(
      {"per-step",
       "one value per time level n = 1..N of a boundary parameter (unsteady), with the "
       "smoothness penalty smoothing * sum_n (a_(n+1) - a_n)^2 / dt added to the objective",
       with_control(
           {typed("function", KeyType::String, "",
                  "the boundary parameter (rotation rate, inlet speed, jet amplitude), e.g. "
                  "boundaries.cylinder.omega"),
            nonnegative("smoothing", "0.0",
                        "weight of the smoothness penalty (a discrete integral of (da/dt)^2)")})});
  return d;
}

} // namespace

bool is_control_design(const std::string &type) {
  return type == "parameter" || type == "time-function" || type == "per-step";
}

namespace {

std::string describe_type(KeyType type) {
  switch (type) {
  case KeyType::Real:
    return "a number";
  case KeyType::Integer:
    return "an integer";
  case KeyType::Bool:
    return "true or false";
  case KeyType::String:
    return "a string";
  case KeyType::Choice:
    return "one of";
  case KeyType::Path:
    return "a file name";
  case KeyType::RealVector:
    return "a vector [x, y] or [x, y, z]";
  case KeyType::RealList:
    return "a list of numbers";
  case KeyType::NameList:
    return "a list of names";
  case KeyType::PointList:
    return "a list of points [[x, y], ...]";
  case KeyType::RealTable:
    return "a list of lists of numbers";
  case KeyType::TermList:
    return "a list of objective maps";
  case KeyType::TimeFunction:
    return "a number or {type: sine, amplitude, frequency, phase, offset} | {type: table, points: "
           "[[t, v], ...] "
           "or file} | {type: steps, file}";
  }
  return "?";
}

} // namespace

const KeySpec *SectionSpec::find(const std::string &key) const {
  for (const auto &k : keys)
    if (k.name == key) return &k;
  return nullptr;
}

const std::vector<SectionSpec> &case_sections() {
  static const std::vector<SectionSpec> sections = make_sections();
  return sections;
}

const SectionSpec &constraint_spec() {
  static const SectionSpec spec = make_constraint_spec(case_sections());
  return spec;
}

const std::vector<SectionSpec> &boundary_types() {
  static const std::vector<SectionSpec> types = make_boundary_types();
  return types;
}

const std::vector<SectionSpec> &design_types() {
  static const std::vector<SectionSpec> types = make_design_types();
  return types;
}

const SectionSpec *find_section(const std::vector<SectionSpec> &sections, const std::string &name) {
  for (const auto &s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

std::string describe_expected(const KeySpec &spec) {
  std::ostringstream out;
  out << describe_type(spec.type);
  if (spec.type == KeyType::Choice) {
    out << " {";
    for (std::size_t i = 0; i < spec.choices.size(); ++i) out << (i ? ", " : "") << spec.choices[i];
    out << "}";
  }
  if (spec.type == KeyType::Real || spec.type == KeyType::Integer) {
    if (std::isfinite(spec.min)) out << (spec.min_exclusive ? " > " : " >= ") << spec.min;
    if (std::isfinite(spec.max))
      out << (std::isfinite(spec.min) ? " and" : "") << " <= " << spec.max;
  }
  return out.str();
}

std::string format_case_help() {
  std::ostringstream out;
  auto print_keys = [&](const SectionSpec &s, const char *indent) {
    for (const auto &k : s.keys) {
      out << indent << k.name << ": " << (k.required() ? "(required)" : k.default_yaml) << "\n"
          << indent << "    " << k.help << " [" << describe_expected(k) << "]\n";
    }
  };
  out << "Case file keys (YAML), with defaults:\n\n";
  for (const auto &s : case_sections()) {
    out << s.name << ":    # " << s.help << "\n";
    print_keys(s, "  ");
    out << "\n";
  }
  out << "boundaries:    # one entry per Gmsh physical name of the mesh boundary\n"
         "  NAME: {type: TYPE, ...}    TYPE and its keys:\n";
  for (const auto &t : boundary_types()) {
    out << "  type: " << t.name << "    # " << t.help << "\n";
    print_keys(t, "    ");
  }
  out << "\ndesign:    # optional: shape parameterizations, or control / identification variables\n"
         "          # (parameter, time-function, per-step); several entries of one family may be\n"
         "          # combined, the design vector is their variables in this order\n"
         "  - {type: TYPE, ...}    TYPE and its keys:\n";
  for (const auto &t : design_types()) {
    out << "  type: " << t.name << "    # " << t.help << "\n";
    print_keys(t, "    ");
  }
  out << "\npetsc:    # options for PETSc's database, e.g. {ksp_type: gmres, pc_type: asm}\n"
         "  OPTION: VALUE    (command-line PETSc options take precedence)\n";
  return out.str();
}

} // namespace karman::config
