// Constrained optimization with NLopt and a replayable journal (see
// include/karman/optimization/optimizer.hpp).
#include "karman/optimization/optimizer.hpp"
#include "karman/optimization/kkt_check.hpp"

#include "karman/core/parallel.hpp"

#include <nlohmann/json.hpp>
#include <nlopt.hpp>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace karman::optimization {

using nlohmann::json;

namespace {

const char *kJournalFormat = "karman-optimization-journal";

nlopt::algorithm algorithm_of(const std::string &name) {
  if (name == "ccsaq") return nlopt::LD_CCSAQ;
  if (name == "mma") return nlopt::LD_MMA;
  if (name == "lbfgs") return nlopt::LD_LBFGS;
  return nlopt::LD_SLSQP;
}

const char *sense_name(ConstraintSense s) {
  return s == ConstraintSense::LessEqual ? "<=" : s == ConstraintSense::GreaterEqual ? ">=" : "=";
}

json header(const OptimizationProblem &p, const OptimizerOptions &o) {
  json c = json::array();
  for (const auto &k : p.constraints)
    c.push_back({{"name", k.name}, {"sense", sense_name(k.sense)}, {"value", k.value}});
  return {{"format", kJournalFormat}, {"version", 1},     {"algorithm", o.algorithm},
          {"names", p.names},         {"lower", p.lower}, {"upper", p.upper},
          {"start", p.start},         {"constraints", c}};
}

json to_json(long index, const std::vector<double> &x, const Evaluation &e) {
  json r = {{"index", index}, {"x", x}, {"ok", e.ok}, {"details", e.details}};
  if (e.reset) r["reset"] = true;
  if (!e.ok) {
    r["failure"] = e.failure;
    return r;
  }
  r["f"] = e.f;
  r["df"] = e.df;
  r["c"] = e.c;
  r["dc"] = e.dc;
  return r;
}

Evaluation from_json(const json &r) {
  Evaluation e;
  e.ok = r.at("ok").get<bool>();
  e.details = r.value("details", std::string());
  e.reset = r.value("reset", false);
  if (!e.ok) {
    e.failure = r.value("failure", std::string());
    return e;
  }
  e.f = r.at("f").get<double>();
  e.df = r.at("df").get<std::vector<double>>();
  e.c = r.at("c").get<std::vector<double>>();
  e.dc = r.at("dc").get<std::vector<std::vector<double>>>();
  return e;
}

/// How often (per function: objective and constraints) the optimizer may ask again for a failed
/// design before the campaign stops: it cannot back off from it.
constexpr long kMaxRepeats = 10;

struct Context {
  MPI_Comm comm = MPI_COMM_NULL;
  const OptimizationProblem *problem = nullptr;
  const Evaluator *evaluator = nullptr;
  const EvaluationObserver *observer = nullptr;
  std::string journal_path;
  std::vector<json> journal; ///< records to replay
  long next = 0;             ///< index of the next evaluation
  std::FILE *out = nullptr;  ///< the journal, rank 0
  nlopt::opt *opt = nullptr;
  PetscErrorCode error = 0;
  std::string message;      ///< of an error found here (not in the evaluator)
  long max_evaluations = 0; ///< distinct designs evaluated (NLopt's own count includes repeats)
  bool max_reached = false;
  bool restart = false; ///< an evaluation asked to start the optimizer again (Evaluation::reset)
  std::vector<double> restart_x;
  bool have_last = false;
  std::vector<double> x_last;
  Evaluation last;
  long repeats = 0;   ///< calls at x_last since it was evaluated
  bool stuck = false; ///< the optimizer kept asking for the same failed design
  OptimizationResult *result = nullptr;
  std::vector<std::pair<std::vector<double>, Evaluation>> good; ///< every successful evaluation
  double kkt_tolerance = 0;                                     ///< OptimizerOptions::kkt_tolerance
  long kkt_evaluation = -1; ///< the evaluation that met it (kkt_point), -1: none yet
  double kkt_residual = 0;
  std::pair<std::vector<double>, Evaluation> kkt_design; ///< its design and values
  bool kkt_met() const { return kkt_evaluation >= 0; }
};

// Whether evaluation e at x is a KKT point to ctx.kkt_tolerance within kkt_tolerance
// (1 + |value|) of every constraint (header; OptimizerOptions::kkt_tolerance)
bool kkt_point(const Context &ctx, const std::vector<double> &x, const Evaluation &e,
               double *residual) {
  const OptimizationProblem &p = *ctx.problem;
  const KktReport r = check_kkt(p, x, e);
  for (std::size_t i = 0; i < p.constraints.size(); ++i) {
    const ConstraintSpec &c = p.constraints[i];
    if (r.violations[i] > std::max(c.tolerance, ctx.kkt_tolerance * (1 + std::fabs(c.value))))
      return false;
  }
  *residual = r.residual;
  return *residual <= ctx.kkt_tolerance;
}

// The status of a run that kkt_point stopped
std::string kkt_status(const Context &ctx) {
  char text[160];
  std::snprintf(text, sizeof text,
                "kkt_tolerance reached (evaluation %ld: KKT residual %.2e <= %.2e)",
                ctx.kkt_evaluation, ctx.kkt_residual, ctx.kkt_tolerance);
  return text;
}

// One evaluation at x: the cached one, a replayed one or a new one (journaled).  Collective.
PetscErrorCode evaluate(Context &ctx, const std::vector<double> &x, const Evaluation **e) {
  PetscFunctionBeginUser;
  if (ctx.have_last && x == ctx.x_last) {
    ++ctx.repeats;
    *e = &ctx.last;
    PetscFunctionReturn(0);
  }
  ctx.repeats = 0;
  const long k = ctx.next;
  Evaluation ev;
  bool replayed = false;
  if (k < static_cast<long>(ctx.journal.size())) {
    const json &r = ctx.journal[k];
    const std::vector<double> xr = r.at("x").get<std::vector<double>>();
    if (xr != x) {
      ctx.message = "--restart: the optimization asked for another design at evaluation " +
                    std::to_string(k) + " than the one in the journal " + ctx.journal_path +
                    " (the case, the mesh or karman changed since it was written?); start a new "
                    "campaign in another output folder";
      SETERRQ(ctx.comm, PETSC_ERR_USER_INPUT, "%s", ctx.message.c_str());
    }
    ev = from_json(r);
    replayed = true;
    ++ctx.result->replayed;
  } else {
    PetscCall((*ctx.evaluator)(x, &ev));
    // the values of rank 0 on every rank: all ranks' optimizers then take the same path
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(ctx.comm, &rank));
    std::string text = rank == 0 ? to_json(k, x, ev).dump() : std::string();
    PetscCall(broadcast_string(ctx.comm, &text));
    ev = from_json(json::parse(text));
    if (rank == 0 && ctx.out) {
      std::fprintf(ctx.out, "%s\n", text.c_str());
      std::fflush(ctx.out);
      fsync(fileno(ctx.out));
    }
  }
  const std::size_t n = ctx.problem->names.size(), m = ctx.problem->constraints.size();
  PetscCheck(!ev.ok || (ev.df.size() == n && ev.c.size() == m && ev.dc.size() == m), ctx.comm,
             PETSC_ERR_PLIB,
             "optimizer: evaluation %ld returned %zu gradient entries, %zu constraints and %zu "
             "constraint gradients; expected %zu, %zu, %zu",
             k, ev.df.size(), ev.c.size(), ev.dc.size(), n, m, m);
  ++ctx.next;
  ++ctx.result->evaluations;
  if (ctx.result->evaluations >= ctx.max_evaluations) ctx.max_reached = true;
  ctx.result->failed += ev.ok ? 0 : 1;
  ctx.x_last = x;
  ctx.last = ev;
  ctx.have_last = true;
  if (ev.ok && ev.reset) { // the earlier evaluations belong to another problem
    ctx.good.clear();
    ctx.restart = true;
    ctx.restart_x = x;
  }
  if (ev.ok) ctx.good.emplace_back(x, ev);
  if (ev.ok && ctx.kkt_tolerance > 0 && !ctx.kkt_met() &&
      kkt_point(ctx, x, ev, &ctx.kkt_residual)) {
    ctx.kkt_evaluation = k;
    ctx.kkt_design = {x, ev};
  }
  if (*ctx.observer) PetscCall((*ctx.observer)(k, x, ctx.last, replayed));
  *e = &ctx.last;
  PetscFunctionReturn(0);
}

double objective_callback(const std::vector<double> &x, std::vector<double> &grad, void *data) {
  auto &ctx = *static_cast<Context *>(data);
  const Evaluation *e = nullptr;
  // a new design over budget or after the KKT point: not evaluated (L-BFGS goes on calling)
  if ((ctx.max_reached || ctx.kkt_met()) && !(ctx.have_last && x == ctx.x_last)) {
    ctx.opt->force_stop();
    return HUGE_VAL;
  }
  ctx.error = evaluate(ctx, x, &e);
  if (ctx.error || ctx.restart || ctx.kkt_met()) {
    ctx.opt->force_stop();
    return HUGE_VAL;
  }
  if (!e->ok) { // a failed design: the optimizer backs off
    // ... unless it cannot: NLopt's SLSQP was seen asking for the same failed design without
    // end (shape-min-drag with remeshing: a hang after evaluation 107)
    if (ctx.repeats >= kMaxRepeats * static_cast<long>(1 + ctx.problem->constraints.size())) {
      ctx.stuck = true;
      ctx.opt->force_stop();
    }
    std::fill(grad.begin(), grad.end(), 0.0);
    return HUGE_VAL;
  }
  if (!grad.empty()) grad = e->df;
  return e->f;
}

struct ConstraintData {
  Context *ctx;
  std::size_t index;
};

// NLopt's form g(x) <= 0 (or = 0): c - v for <= and =, v - c for >=
double constraint_callback(const std::vector<double> &x, std::vector<double> &grad, void *data) {
  auto &cd = *static_cast<ConstraintData *>(data);
  Context &ctx = *cd.ctx;
  const ConstraintSpec &spec = ctx.problem->constraints[cd.index];
  const Evaluation *e = nullptr;
  if (ctx.kkt_met() && !(ctx.have_last && x == ctx.x_last)) { // (objective_callback)
    ctx.opt->force_stop();
    return HUGE_VAL;
  }
  ctx.error = evaluate(ctx, x, &e);
  if (ctx.error || ctx.restart || ctx.kkt_met()) {
    ctx.opt->force_stop();
    return HUGE_VAL;
  }
  if (!e->ok) {
    std::fill(grad.begin(), grad.end(), 0.0);
    return std::nan("");
  }
  const double sign = spec.sense == ConstraintSense::GreaterEqual ? -1.0 : 1.0;
  if (!grad.empty())
    for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = sign * e->dc[cd.index][i];
  return sign * (e->c[cd.index] - spec.value);
}

// The journal's records (rank 0 reads, all ranks get them); checks the header.
PetscErrorCode read_journal(MPI_Comm comm, const std::string &path, const json &expected,
                            std::vector<json> *records) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string text, error;
  if (rank == 0) {
    std::ifstream in(path);
    if (!in.good()) error = "--restart: no optimization journal " + path + " to continue from";
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_OPEN, "%s", error.c_str());
  PetscCall(broadcast_string(comm, &text));
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  const json head = json::parse(line, nullptr, false);
  PetscCheck(!head.is_discarded() && head.value("format", "") == kJournalFormat, comm,
             PETSC_ERR_FILE_UNEXPECTED, "%s: not a karman optimization journal (first line: %s)",
             path.c_str(), line.substr(0, 80).c_str());
  for (const char *key : {"algorithm", "names", "lower", "upper", "start", "constraints"})
    PetscCheck(head.at(key) == expected.at(key), comm, PETSC_ERR_USER_INPUT,
               "--restart: %s was written for another optimization problem: its '%s' is %s, now "
               "%s; restore the case or start a new campaign in another output folder",
               path.c_str(), key, head.at(key).dump().substr(0, 200).c_str(),
               expected.at(key).dump().substr(0, 200).c_str());
  records->clear();
  while (std::getline(lines, line)) {
    const json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.contains("index") || !r.contains("ok")) break; // cut by a kill
    PetscCheck(r.at("index").get<long>() == static_cast<long>(records->size()), comm,
               PETSC_ERR_FILE_UNEXPECTED, "%s: record %zu has index %ld", path.c_str(),
               records->size(), r.at("index").get<long>());
    records->push_back(r);
  }
  PetscFunctionReturn(0);
}

// Rewrites the journal with its header and the kept records (drops a cut last line), and
// leaves it open for appending (rank 0).
PetscErrorCode open_journal(MPI_Comm comm, const std::string &path, const json &head,
                            const std::vector<json> &records, std::FILE **out) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error;
  if (rank == 0) {
    const std::string tmp = path + ".tmp";
    std::FILE *f = std::fopen(tmp.c_str(), "w");
    if (!f) {
      error = "cannot write the optimization journal " + tmp;
    } else {
      std::fprintf(f, "%s\n", head.dump().c_str());
      for (const auto &r : records) std::fprintf(f, "%s\n", r.dump().c_str());
      std::fflush(f);
      fsync(fileno(f));
      std::fclose(f);
      if (std::rename(tmp.c_str(), path.c_str()) != 0)
        error = "cannot rename " + tmp + " to " + path;
      else
        *out = std::fopen(path.c_str(), "a");
    }
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

// The largest violation of the constraints at an evaluation, each relative to its tolerance
// (<= 1: feasible in NLopt's sense) or, with `near`, to max(1e4 tolerance, 1e-3 (1 + |value|))
// (<= 1: nearly feasible).
double violation_ratio(const OptimizationProblem &p, const Evaluation &e, bool near = false) {
  double r = 0;
  for (std::size_t i = 0; i < p.constraints.size(); ++i) {
    const ConstraintSpec &c = p.constraints[i];
    const double g = (c.sense == ConstraintSense::GreaterEqual ? -1.0 : 1.0) * (e.c[i] - c.value);
    const double v = c.sense == ConstraintSense::Equal ? std::fabs(g) : std::max(0.0, g);
    r = std::max(
        r, v / (near ? std::max(1e4 * c.tolerance, 1e-3 * (1 + std::fabs(c.value))) : c.tolerance));
  }
  return r;
}

// Solves the small dense system A y = b (Gaussian elimination with partial pivoting); false if
// singular.
bool solve_dense(std::vector<std::vector<double>> a, std::vector<double> b,
                 std::vector<double> *y) {
  const std::size_t m = b.size();
  for (std::size_t k = 0; k < m; ++k) {
    std::size_t piv = k;
    for (std::size_t i = k + 1; i < m; ++i)
      if (std::fabs(a[i][k]) > std::fabs(a[piv][k])) piv = i;
    if (!(std::fabs(a[piv][k]) > 0)) return false;
    std::swap(a[k], a[piv]);
    std::swap(b[k], b[piv]);
    for (std::size_t i = k + 1; i < m; ++i) {
      const double l = a[i][k] / a[k][k];
      for (std::size_t j = k; j < m; ++j) a[i][j] -= l * a[k][j];
      b[i] -= l * b[k];
    }
  }
  y->assign(m, 0.0);
  for (std::size_t k = m; k-- > 0;) {
    double s = b[k];
    for (std::size_t j = k + 1; j < m; ++j) s -= a[k][j] * (*y)[j];
    (*y)[k] = s / a[k][k];
  }
  return true;
}

// Gauss-Newton steps from `start` onto the constraint tolerances (project_feasible); the
// projected design becomes the answer if it is feasible and (unless have_feasible is false)
// better than result's; the status says so, naming the start as `what`.
PetscErrorCode project_from(Context &ctx, const std::pair<std::vector<double>, Evaluation> &start,
                            bool have_feasible, long steps, const char *what,
                            OptimizationResult *result) {
  PetscFunctionBeginUser;
  const OptimizationProblem &p = *ctx.problem;
  const std::size_t n = p.names.size(), m = p.constraints.size();
  std::vector<double> x = start.first;
  Evaluation e = start.second;
  for (long k = 0; k < steps; ++k) {
    std::vector<std::vector<double>> a;
    std::vector<double> g;
    for (std::size_t i = 0; i < m; ++i) {
      const ConstraintSpec &c = p.constraints[i];
      const double sign = c.sense == ConstraintSense::GreaterEqual ? -1.0 : 1.0;
      const double gi = sign * (e.c[i] - c.value);
      if (c.sense != ConstraintSense::Equal && gi <= 0) continue;
      std::vector<double> row(n);
      for (std::size_t j = 0; j < n; ++j) row[j] = sign * e.dc[i][j];
      a.push_back(row);
      g.push_back(gi);
    }
    // the step on the free variables; a variable the step would take past its bound goes to the
    // bound and out of the step, and the others close the rest (g + A_held d_held):
    // clamping afterwards lost the held variables' share at every step (header)
    std::vector<double> d(n, 0.0);
    std::vector<char> held(n, 0);
    bool solved = true;
    for (std::size_t pass = 0; pass <= n; ++pass) {
      std::vector<double> rhs = g;
      for (std::size_t i = 0; i < a.size(); ++i)
        for (std::size_t l = 0; l < n; ++l)
          if (held[l]) rhs[i] += a[i][l] * d[l];
      std::vector<std::vector<double>> aat(a.size(), std::vector<double>(a.size(), 0.0));
      for (std::size_t i = 0; i < a.size(); ++i)
        for (std::size_t j = 0; j < a.size(); ++j)
          for (std::size_t l = 0; l < n; ++l)
            if (!held[l]) aat[i][j] += a[i][l] * a[j][l];
      std::vector<double> y;
      if (!(solved = solve_dense(aat, rhs, &y))) break;
      bool more = false;
      for (std::size_t l = 0; l < n; ++l) {
        if (held[l]) continue;
        d[l] = 0;
        for (std::size_t i = 0; i < a.size(); ++i) d[l] -= a[i][l] * y[i];
        const double to = std::min(p.upper[l], std::max(p.lower[l], x[l] + d[l]));
        if (to != x[l] + d[l]) d[l] = to - x[l], held[l] = 1, more = true;
      }
      if (!more) break;
    }
    if (!solved) break;
    for (std::size_t l = 0; l < n; ++l)
      x[l] = std::min(p.upper[l], std::max(p.lower[l], x[l] + d[l]));
    const Evaluation *ev = nullptr;
    PetscCall(evaluate(ctx, x, &ev));
    if (!ev->ok) break;
    e = *ev;
    if (violation_ratio(p, e) <= 1) {
      if (!have_feasible || e.f < result->f) {
        result->x = x;
        result->f = e.f;
        result->status += std::string("; ") + what + " projected onto the constraints in " +
                          std::to_string(k + 1) + " step" + (k ? "s" : "");
      }
      break;
    }
  }
  PetscFunctionReturn(0);
}

// With projection steps (OptimizerOptions::projection_steps > 0; else NLopt's answer stands):
// the answer of a run is the best evaluated design within the constraint tolerances (what NLopt
// means by its answer, which it does not always return when stopped by the evaluation budget).
// When a nearly feasible evaluation (every violation below 1e4 tolerances or 1e-3 (1 + |bound|))
// has a lower objective -- the iterates approach the optimum with constraint violations just
// above the tolerances, e.g. when failed designs keep SLSQP's steps short -- it is projected onto
// the constraints by Gauss-Newton steps on the violated ones,
//   x <- x + d,   d_F = -A_F^T (A_F A_F^T)^-1 (g + A_H d_H),   A = dg/dx,
// where H holds the variables that the step would take past a bound (d_H to the bound) and F
// the others: clamped afterwards (x <- clamp(x - A^T (A A^T)^-1 g)) each step lost the held
// variables' share, and the 3D shape-min-drag case (42 of 135 variables on their bounds) ended
// with its volume 3.9e-6 off after 5 steps; one evaluation per step (journaled like any other),
// until every violation is within its tolerance; the projected design is the answer if it is
// feasible and better.
PetscErrorCode project_feasible(Context &ctx, long steps, OptimizationResult *result) {
  PetscFunctionBeginUser;
  const OptimizationProblem &p = *ctx.problem;
  if (steps <= 0 || p.constraints.empty()) PetscFunctionReturn(0); // NLopt's answer as it is
  const std::pair<std::vector<double>, Evaluation> *feasible = nullptr, *best = nullptr;
  for (const auto &g : ctx.good)
    if (violation_ratio(p, g.second) <= 1 && (!feasible || g.second.f < feasible->second.f))
      feasible = &g;
  if (feasible) {
    result->x = feasible->first;
    result->f = feasible->second.f;
  }
  for (const auto &g : ctx.good)
    if (violation_ratio(p, g.second, true) <= 1 && (!feasible || g.second.f < feasible->second.f) &&
        (!best || g.second.f < best->second.f))
      best = &g;
  if (!best || violation_ratio(p, best->second) <= 1) PetscFunctionReturn(0);
  PetscCall(
      project_from(ctx, *best, feasible != nullptr, steps, "best nearly feasible design", result));
  PetscFunctionReturn(0);
}

} // namespace

bool known_algorithm(const std::string &name) {
  return name == "slsqp" || name == "ccsaq" || name == "mma" || name == "lbfgs" || name == "auto";
}

std::string resolve_algorithm(const std::string &name, const OptimizationProblem &problem) {
  if (name != "auto") return name;
  if (problem.names.size() <= kAutoSmallProblem) return "slsqp";
  bool equality = false;
  for (const auto &c : problem.constraints)
    equality = equality || c.sense == ConstraintSense::Equal;
  if (problem.constraints.empty()) return "lbfgs";
  return equality ? "slsqp" : "ccsaq";
}

namespace {

// The problem and options are consistent: sizes, a known algorithm that handles the constraints,
// a start inside the bounds.
PetscErrorCode check_problem(MPI_Comm comm, const OptimizationProblem &problem,
                             const OptimizerOptions &options) {
  PetscFunctionBeginUser;
  const std::size_t n = problem.names.size();
  PetscCheck(n > 0, comm, PETSC_ERR_USER_INPUT, "optimize: no design variables");
  PetscCheck(problem.lower.size() == n && problem.upper.size() == n && problem.start.size() == n,
             comm, PETSC_ERR_ARG_SIZ, "optimize: bounds and start must have %zu entries", n);
  PetscCheck(known_algorithm(options.algorithm), comm, PETSC_ERR_USER_INPUT,
             "optimize: unknown algorithm '%s' (slsqp, ccsaq, mma, lbfgs or auto)",
             options.algorithm.c_str());
  PetscCheck(options.algorithm != "lbfgs" || problem.constraints.empty(), comm,
             PETSC_ERR_USER_INPUT,
             "optimize: lbfgs handles bounds only, the problem has %zu constraints (use slsqp, "
             "ccsaq, mma or auto)",
             problem.constraints.size());
  for (std::size_t i = 0; i < n; ++i)
    PetscCheck(problem.lower[i] <= problem.start[i] && problem.start[i] <= problem.upper[i], comm,
               PETSC_ERR_USER_INPUT,
               "design variable %s: the start %g is outside its bounds [%g, %g] (infeasible "
               "bounds or start)",
               problem.names[i].c_str(), problem.start[i], problem.lower[i], problem.upper[i]);
  for (const auto &c : problem.constraints)
    PetscCheck(c.sense != ConstraintSense::Equal || options.algorithm == "slsqp", comm,
               PETSC_ERR_USER_INPUT,
               "constraint %s is an equality; only the slsqp algorithm handles equalities (%s "
               "does not)",
               c.name.c_str(), options.algorithm.c_str());
  PetscFunctionReturn(0);
}

// The status text of NLopt's result code.
std::string status_of(nlopt::result r) {
  switch (r) {
  case nlopt::SUCCESS:
    return "success";
  case nlopt::STOPVAL_REACHED:
    return "stopval reached";
  case nlopt::FTOL_REACHED:
    return "ftol_rel reached";
  case nlopt::XTOL_REACHED:
    return "xtol_rel reached";
  case nlopt::MAXEVAL_REACHED:
    return "max_evaluations reached";
  case nlopt::MAXTIME_REACHED:
    return "max time reached";
  default:
    return "stopped";
  }
}

// Without constraints the answer is the best evaluated design (what NLopt returns, also when an
// algorithm stopped with a failure and left another x).
void best_evaluated(const Context &ctx, const OptimizationProblem &problem,
                    OptimizationResult *result) {
  if (!problem.constraints.empty() || ctx.good.empty()) return;
  const auto best =
      std::min_element(ctx.good.begin(), ctx.good.end(),
                       [](const auto &a, const auto &b) { return a.second.f < b.second.f; });
  const bool evaluated = std::any_of(ctx.good.begin(), ctx.good.end(),
                                     [&](const auto &g) { return g.first == result->x; });
  if (!evaluated || best->second.f < result->f) {
    result->x = best->first;
    result->f = best->second.f;
  }
}

} // namespace

PetscErrorCode optimize(MPI_Comm comm, const OptimizationProblem &problem,
                        const Evaluator &evaluator, const OptimizerOptions &given_options,
                        const EvaluationObserver &observer, OptimizationResult *result) {
  PetscFunctionBeginUser;
  OptimizerOptions options = given_options;
  options.algorithm = resolve_algorithm(given_options.algorithm, problem);
  const std::size_t n = problem.names.size();
  PetscCall(check_problem(comm, problem, options));
  *result = OptimizationResult();
  Context ctx;
  ctx.comm = comm;
  ctx.problem = &problem;
  ctx.evaluator = &evaluator;
  ctx.observer = &observer;
  ctx.result = result;
  ctx.journal_path = options.journal;
  const json head = header(problem, options);
  if (!options.journal.empty()) {
    if (options.restart) PetscCall(read_journal(comm, options.journal, head, &ctx.journal));
    PetscCall(open_journal(comm, options.journal, head, ctx.journal, &ctx.out));
  }

  nlopt::opt opt(algorithm_of(options.algorithm), static_cast<unsigned>(n));
  ctx.opt = &opt;
  opt.set_lower_bounds(problem.lower);
  opt.set_upper_bounds(problem.upper);
  opt.set_min_objective(objective_callback, &ctx);
  std::vector<ConstraintData> cdata(problem.constraints.size());
  for (std::size_t i = 0; i < problem.constraints.size(); ++i) {
    cdata[i] = {&ctx, i};
    if (problem.constraints[i].sense == ConstraintSense::Equal)
      opt.add_equality_constraint(constraint_callback, &cdata[i], problem.constraints[i].tolerance);
    else
      opt.add_inequality_constraint(constraint_callback, &cdata[i],
                                    problem.constraints[i].tolerance);
  }
  ctx.max_evaluations = options.max_evaluations; // counted here: NLopt counts repeated designs
  ctx.kkt_tolerance = options.kkt_tolerance;
  opt.set_xtol_rel(options.xtol_rel);
  opt.set_ftol_rel(options.ftol_rel);
  std::vector<double> x = problem.start;
  double f = HUGE_VAL;
  try {
    for (;;) { // once, and again from every design that asks for it (Evaluation::reset)
      try {
        result->status = status_of(opt.optimize(x, f));
        break;
      } catch (const nlopt::forced_stop &) {
        if (ctx.error || !ctx.restart) throw;
        ctx.restart = false;
        x = ctx.restart_x;
        ++result->resets;
      }
    }
  } catch (const nlopt::roundoff_limited &) {
    result->status = "roundoff-limited (no further progress possible at this precision)";
  } catch (const nlopt::forced_stop &) {
    result->status = ctx.kkt_met()     ? kkt_status(ctx)
                     : ctx.max_reached ? "max_evaluations reached"
                     : ctx.stuck
                         ? "stopped: the optimizer asked again and again for the "
                           "failed design of evaluation " +
                               std::to_string(ctx.next - 1) + " (it could not back off from it)"
                         : "stopped";
  } catch (const std::exception &e) {
    // L-BFGS reports a forced stop (the evaluation budget, a KKT point) or a design that could
    // not be evaluated (f = +inf: it cannot back off) as a generic failure
    if (!ctx.error && ctx.kkt_met()) {
      result->status = kkt_status(ctx);
    } else if (!ctx.error && ctx.max_reached) {
      result->status = "max_evaluations reached";
    } else if (!ctx.error && problem.constraints.empty() && !ctx.good.empty()) {
      result->status = std::string("stopped: NLopt ") + options.algorithm + ": " + e.what() +
                       (result->failed ? " (after a design that could not be evaluated)" : "");
    } else if (!ctx.error) {
      if (ctx.out) std::fclose(ctx.out);
      SETERRQ(comm, PETSC_ERR_LIB, "optimize: NLopt %s failed: %s", options.algorithm.c_str(),
              e.what());
    }
  }
  if (ctx.error) {
    if (ctx.out) std::fclose(ctx.out);
    PetscCall(ctx.error); // an error inside an evaluation (already reported)
  }
  result->x = x;
  result->f = f;
  if (result->resets > 0)
    result->status += " (after " + std::to_string(result->resets) + " restart" +
                      (result->resets > 1 ? "s" : "") + " of the optimizer)";
  best_evaluated(ctx, problem, result);
  PetscErrorCode ierr = 0;
  if (ctx.kkt_met()) { // the KKT point is the answer (onto the tolerances if outside them)
    result->x = ctx.kkt_design.first;
    result->f = ctx.kkt_design.second.f;
    if (violation_ratio(problem, ctx.kkt_design.second) > 1)
      ierr =
          project_from(ctx, ctx.kkt_design, false, options.projection_steps, "that design", result);
  } else {
    ierr = project_feasible(ctx, options.projection_steps, result);
  }
  if (ctx.out) std::fclose(ctx.out);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

} // namespace karman::optimization
