// What the campaigns of `karman optimize` (cmd_optimize.cpp: shapes, cmd_optimize_control.cpp:
// control and identification) write alike: the history files, the log lines of the problem and
// of an evaluation, summary.json's common entries, the optimizer options of the case.
#pragma once

#include "karman/cli/cli_args.hpp"
#include "karman/config/case_config.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/kkt_check.hpp"
#include "karman/optimization/optimization_options.hpp"
#include "karman/optimization/optimizer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace karman::cli {

/// The history files of a campaign (rank 0; rewritten from the journal on a restart, replayed
/// rows keeping their details): optimization.csv (evaluation, replayed, ok, objective, the
/// columns `before` the constraints, the constraints, the columns `after` them, failure) and
/// designs.csv (evaluation and the design vector).  Every row is flushed.
class HistoryFiles {
public:
  void open(const std::string &dir, const optimization::OptimizationProblem &p, const char *before,
            const char *after) {
    constraints_ = p.constraints.size();
    csv_.open(std::filesystem::path(dir) / "optimization.csv");
    csv_ << "evaluation,replayed,ok,objective" << before;
    // a constraint name may hold commas ("thickness(airfoil, x=0.1)"): quoted (RFC 4180)
    for (const auto &c : p.constraints) {
      if (c.name.find_first_of(",\"") == std::string::npos) {
        csv_ << "," << c.name;
        continue;
      }
      std::string quoted;
      for (char ch : c.name) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      csv_ << ",\"" << quoted << "\"";
    }
    csv_ << after << ",failure\n";
    designs_.open(std::filesystem::path(dir) / "designs.csv");
    designs_ << "evaluation";
    for (const auto &n : p.names) designs_ << "," << n;
    designs_ << "\n";
  }
  /// The row of evaluation k: objective and constraints with `digits` significant digits (NaN
  /// for a failed one), `before` and `after` already formatted (each starting with a comma).
  void write(long k, bool replayed, const optimization::Evaluation &e, int digits,
             const std::string &before, const std::string &after, const std::vector<double> &x) {
    char v[64];
    std::snprintf(v, sizeof(v), "%ld,%d,%d,%.*e", k, replayed ? 1 : 0, e.ok ? 1 : 0, digits,
                  e.ok ? e.f : NAN);
    csv_ << v << before;
    for (std::size_t i = 0; i < constraints_; ++i) {
      std::snprintf(v, sizeof(v), ",%.*e", digits, e.ok ? e.c[i] : NAN);
      csv_ << v;
    }
    std::string failure = e.failure;
    for (char &ch : failure)
      if (ch == ',' || ch == '\n') ch = ';';
    csv_ << after << "," << failure << "\n" << std::flush;
    designs_ << k;
    for (double value : x) {
      std::snprintf(v, sizeof(v), ",%.17g", value);
      designs_ << v;
    }
    designs_ << "\n" << std::flush;
  }
  void close() { csv_.close(), designs_.close(); }

private:
  std::ofstream csv_, designs_;
  std::size_t constraints_ = 0;
};

/// printf into a std::string.
template <typename... A> std::string printf_string(const char *fmt, A... args) {
  char line[512];
  std::snprintf(line, sizeof(line), fmt, args...);
  return line;
}

/// The log line of a shape campaign's KKT report.  Collective.
PetscErrorCode log_kkt(MPI_Comm comm, const optimization::KktReport &kkt);
/// The KKT report as JSON (summary.json).
nlohmann::json kkt_json(const optimization::OptimizationProblem &p,
                        const optimization::KktReport &kkt);
/// The campaign's first log lines: its size and algorithm (`what`), then each constraint.
PetscErrorCode log_campaign(MPI_Comm comm, const std::string &what,
                            const optimization::OptimizationProblem &p);
/// "  name value" of every constraint of an evaluation (its progress line).
std::string constraint_text(const optimization::OptimizationProblem &p,
                            const optimization::Evaluation &e);
/// The good evaluations of a campaign (computed or replayed), kept for the best design in case it
/// cannot be evaluated again at the end (best_design_evaluation).
class GoodEvaluations {
public:
  struct Record {
    long index; ///< the evaluation's number
    std::vector<double> x;
    optimization::Evaluation e;
  };
  void add(long index, const std::vector<double> &x, const optimization::Evaluation &e) {
    if (e.ok) records_.push_back({index, x, e});
  }
  /// The last good evaluation of exactly the design x (the optimizer's answer is one of the
  /// designs it evaluated), or null.
  const Record *find(const std::vector<double> &x) const {
    for (auto it = records_.rbegin(); it != records_.rend(); ++it)
      if (it->x == x) return &*it;
    return nullptr;
  }
  /// The last n good evaluations, oldest first (a restart: the warm start's history).
  std::vector<const Record *> last(std::size_t n) const {
    std::vector<const Record *> r;
    for (std::size_t i = records_.size() - std::min(n, records_.size()); i < records_.size(); ++i)
      r.push_back(&records_[i]);
    return r;
  }

private:
  std::vector<Record> records_;
};

/// The best design's evaluation at the end of a campaign: `again` (its evaluation again, which
/// writes its mesh and flow) or, if that failed, the campaign's own earlier evaluation of it from
/// `good` (`reevaluated` false; its figures are those of that evaluation, the optimizer's
/// answer).  Without either, the error of the failed evaluation again.  Collective.
PetscErrorCode best_design_evaluation(MPI_Comm comm, const std::vector<double> &x,
                                      const optimization::Evaluation &again,
                                      const GoodEvaluations &good, optimization::Evaluation *best,
                                      bool *reevaluated, nlohmann::json *summary);
/// After summary.json of a best design that could not be evaluated again (`summary` from
/// best_design_evaluation): the error that says so, naming what was and was not written.
PetscErrorCode fail_unevaluated_best(MPI_Comm comm, const nlohmann::json &summary,
                                     const std::string &dir);
/// The summary.json entries every campaign has.
nlohmann::json campaign_summary(const config::CaseConfig &cfg, const std::string &algorithm,
                                const optimization::OptimizationResult &result, double objective);
/// Writes j (2-space indented) to `path` on rank 0, whole or not at all (io/atomic_file.hpp);
/// a failure is a collective error.  Collective.
PetscErrorCode write_json(MPI_Comm comm, const std::string &path, const nlohmann::json &j);
/// OUTDIR/summary.json (rank 0).  Collective.
PetscErrorCode write_summary(MPI_Comm comm, const std::string &dir, const nlohmann::json &j);
/// The optimizer options of the case's optimization: section and the command line (journal in
/// OUTDIR, --restart).
optimization::OptimizerOptions optimizer_options(const config::CaseConfig &cfg,
                                                 const CliArgs &args);
/// The good evaluations' flow states a campaign keeps: those that predict the next warm start
/// (optimization::kWarmStartHistory), and at least two (the journal may end before the newest).
constexpr std::size_t kKeptCampaignStates =
    std::max<std::size_t>(2, optimization::kWarmStartHistory);
/// The flow state w of evaluation `index` to DIR/STEM.h5, the older ones kept as DIR/STEM.prev.h5,
/// STEM.prev2.h5, ... (kKeptCampaignStates in all; a restarted campaign's warm start and its
/// prediction: the journal may end before the newest file's evaluation, never before the
/// previous one's).  Collective on fc's communicator.
PetscErrorCode save_campaign_state(const driver::FlowCase &fc, const std::string &dir,
                                   const std::string &stem, long index, Vec w);
/// Loads into w the state of evaluation `index` if one of the kept files holds it (`found`).
/// Collective on fc's communicator.
PetscErrorCode load_campaign_state(const driver::FlowCase &fc, const std::string &dir,
                                   const std::string &stem, long index, Vec w, bool *found);
/// The number `key` of an evaluation's details (JSON), 0 if absent.
double detail(const nlohmann::json &d, const char *key);
/// An evaluation's details as JSON (empty object if none).
nlohmann::json details_of(const optimization::Evaluation &e);

/// `karman optimize` of a case with a points: list (cmd_optimize_multipoint.cpp).
PetscErrorCode run_multipoint_optimize(MPI_Comm comm, const CliArgs &args,
                                       const config::CaseConfig &cfg);
/// `karman optimize` of a design: list of control entries (cmd_optimize_control.cpp).
PetscErrorCode run_control_optimize(MPI_Comm comm, const CliArgs &args,
                                    const config::CaseConfig &cfg);

} // namespace karman::cli
