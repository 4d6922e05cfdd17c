// The probe-match objective (objective_terms.hpp, adjoint/README.md eq. 2): the weighted sum of
// squared differences between the unknowns at the probes and observed values,
//   J = sum_i sum_k c_k (phi_k(x_i) - phi_k^obs)^2,
// phi_k(x_i) the linear reconstruction of unknown k in the cell holding probe x_i; the
// observations are one row per probe (`observed`) or, unsteady, rows t, then nv values per probe
// (`observations_file`, interpolated linearly in t).
#include "karman/adjoint/objective_terms.hpp"
#include "karman/config/section_options.hpp"
#include "karman/core/numeric_table.hpp"
#include "karman/core/parallel.hpp"
#include "karman/solver/forces.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace karman::adjoint {
namespace {

using discretization::FlowResidual;
using discretization::LocalState;

struct ProbeMatchOptions {
  std::vector<Vec3<double>> probes;
  std::vector<std::vector<double>> observed;
  std::string observations_file;
  std::vector<double> component_weights;
};

const config::SectionOptions<ProbeMatchOptions> &probe_match_options() {
  using namespace config::key;
  using config::KeyType;
  static const auto options =
      config::SectionOptions<ProbeMatchOptions>("objective", "")
          .key(typed("probes", KeyType::PointList, "[]", "probe-match: the probe points"),
               &ProbeMatchOptions::probes)
          .key(typed("observed", KeyType::RealTable, "[]",
                     "probe-match: per probe the observed unknowns (p, u, v[, w], ...)"),
               &ProbeMatchOptions::observed)
          .key(typed("observations_file", KeyType::String, "''",
                     "probe-match, unsteady: CSV of observations in time, rows t, then the "
                     "unknowns (p, u, v[, w], ...) of every probe (linear interpolation in t); "
                     "replaces `observed`"),
               &ProbeMatchOptions::observations_file)
          .key(typed("component_weights", KeyType::RealList, "[1, 1, 1, 1]",
                     "probe-match: weights of the squared differences of the unknowns"),
               &ProbeMatchOptions::component_weights);
  return options;
}

class ProbeMatch : public ObjectiveTerm {
public:
  PetscErrorCode value(const FlowResidual &res, const LocalState &state, double weight,
                       double *J) const override {
    PetscFunctionBeginUser;
    std::vector<double> v;
    PetscCall(probes_.evaluate(res, state, &v));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double diff = v[i] - observed_[i];
      *J += weight * component_weights_[i % res.nv()] * diff * diff;
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode reverse(const FlowResidual &res, const LocalState &state, Sensitivities &s,
                         double weight) const override {
    PetscFunctionBeginUser;
    std::vector<double> v;
    PetscCall(probes_.evaluate(res, state, &v));
    const int nv = res.nv();
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const PetscInt cell = probes_.cell(i);
      if (cell < 0) continue;
      for (int k = 0; k < nv; ++k) {
        const double bar =
            2 * weight * component_weights_[k] * (v[i * nv + k] - observed_[i * nv + k]);
        if (bar != 0) s.add_point_value(res, state, cell, k, points_[i], bar);
      }
    }
    PetscFunctionReturn(0);
  }

  // probes times unknowns with a nonzero weight
  long data_count(const FlowResidual &res) const override {
    long components = 0;
    for (int c = 0; c < res.nv() && c < static_cast<int>(component_weights_.size()); ++c)
      components += component_weights_[c] != 0;
    return components * static_cast<long>(points_.size());
  }

  void set_time(double time) override {
    if (obs_times_.empty()) return;
    const auto &ts = obs_times_;
    if (time <= ts.front())
      observed_ = obs_rows_.front();
    else if (time >= ts.back())
      observed_ = obs_rows_.back();
    else {
      const std::size_t j = std::upper_bound(ts.begin(), ts.end(), time) - ts.begin();
      const double s = (time - ts[j - 1]) / (ts[j] - ts[j - 1]);
      for (std::size_t k = 0; k < observed_.size(); ++k)
        observed_[k] = (1 - s) * obs_rows_[j - 1][k] + s * obs_rows_[j][k];
    }
  }

  PetscErrorCode setup(const FlowResidual &res, const config::CaseConfig &cfg,
                       const config::Section &sec) {
    PetscFunctionBeginUser;
    const mesh::Mesh &m = res.mesh();
    const char *file = cfg.file().c_str();
    const std::string where = sec.label();
    const ProbeMatchOptions o = probe_match_options().get(sec);
    points_ = o.probes;
    PetscCheck(!points_.empty(), m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.probes: probe-match needs probes", file, where.c_str());
    PetscCall(probes_.setup(res, points_, cfg.file() + ": " + where + ".probes"));
    const int nv = res.nv();
    if (!o.observations_file.empty()) {
      // rows: t, then nv values per probe
      const std::string path = cfg.resolve_path(o.observations_file);
      std::string text;
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
      if (rank == 0) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        text = in.good() || !ss.str().empty() ? ss.str() : std::string();
      }
      PetscCall(broadcast_string(m.comm, &text));
      PetscCheck(!text.empty(), m.comm, PETSC_ERR_FILE_OPEN,
                 "%s: %s.observations_file '%s' not found or empty", file, where.c_str(),
                 path.c_str());
      const std::size_t width = 1 + points_.size() * nv;
      std::vector<std::vector<double>> rows;
      const std::string problem = parse_numeric_rows(text, width, &rows);
      PetscCheck(problem.empty(), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.observations_file %s: %s (t and %d values per probe)", file, where.c_str(),
                 path.c_str(), problem.c_str(), nv);
      for (const auto &row : rows) {
        PetscCheck(obs_times_.empty() || row[0] > obs_times_.back(), m.comm, PETSC_ERR_USER_INPUT,
                   "%s: %s.observations_file %s: times must increase (%g after %g)", file,
                   where.c_str(), path.c_str(), row[0], obs_times_.back());
        obs_times_.push_back(row[0]);
        obs_rows_.emplace_back(row.begin() + 1, row.end());
      }
      PetscCheck(!obs_times_.empty(), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.observations_file %s holds no observations", file, where.c_str(),
                 path.c_str());
      observed_ = obs_rows_.front();
    }
    component_weights_ = o.component_weights;
    PetscCheck(static_cast<int>(component_weights_.size()) >= nv, m.comm, PETSC_ERR_USER_INPUT,
               "%s: %s.component_weights needs %d values", file, where.c_str(), nv);
    if (o.observations_file.empty()) {
      PetscCheck(o.observed.size() == points_.size(), m.comm, PETSC_ERR_USER_INPUT,
                 "%s: %s.observed: one row per probe expected (%zu probes, %zu rows)", file,
                 where.c_str(), points_.size(), o.observed.size());
      for (const auto &row : o.observed) {
        PetscCheck(static_cast<int>(row.size()) == nv, m.comm, PETSC_ERR_USER_INPUT,
                   "%s: %s.observed: each row needs %d values (the unknowns: p and the velocity "
                   "components, ...)",
                   file, where.c_str(), nv);
        observed_.insert(observed_.end(), row.begin(), row.end());
      }
    }
    PetscFunctionReturn(0);
  }

private:
  std::vector<Vec3<double>> points_;
  solver::PointProbes probes_;
  std::vector<double> observed_, component_weights_;
  std::vector<double> obs_times_;             ///< observations in time: times and
  std::vector<std::vector<double>> obs_rows_; ///< one row of observed values per time
};

} // namespace

std::vector<ObjectiveType> probe_objective_types() {
  return {{"probe-match",
           "sum of weighted squared differences between the probed unknowns (p, u, ...) at "
           "`probes` and `observed`",
           probe_match_options().spec().keys, true,
           [](const FlowResidual &res, const config::CaseConfig &cfg, const config::Section &sec,
              std::unique_ptr<ObjectiveTerm> *term) {
             PetscFunctionBeginUser;
             auto t = std::make_unique<ProbeMatch>();
             PetscCall(t->setup(res, cfg, sec));
             *term = std::move(t);
             PetscFunctionReturn(0);
           }}};
}

} // namespace karman::adjoint
