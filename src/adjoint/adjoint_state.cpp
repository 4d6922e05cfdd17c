// The saved state of an interrupted unsteady adjoint sweep (see
// include/karman/adjoint/adjoint_state.hpp).
#include "karman/adjoint/adjoint_state.hpp"

#include "karman/io/hdf5_fields.hpp"
#include "karman/solver/solver_options.hpp"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>

namespace karman::adjoint {

namespace {

constexpr const char *kStateFormat = "karman-adjoint-state";
constexpr int kStateVersion = 1;

// What an adjoint state depends on besides the mesh, the problem (CaseConfig::problem_keys())
// and the time levels: the time scheme, the initial condition and the objective
// (resolved, as one line of YAML each).
std::vector<std::pair<std::string, std::string>> case_identity(const config::CaseConfig &cfg) {
  const YAML::Node resolved = YAML::Load(cfg.resolved_yaml());
  std::vector<std::pair<std::string, std::string>> id{
      {"time.scheme",
       solver::time_options().get(cfg).scheme == solver::TimeScheme::Bdf1 ? "bdf1" : "bdf2"}};
  for (const char *name : {"initial", "objective"}) {
    YAML::Emitter e;
    e << YAML::Flow << resolved[name];
    id.emplace_back(name, e.c_str());
  }
  return id;
}

} // namespace

// The adjoint state after level n: psi^n, psi^{n+1} (cell fields, /fields/psi1, psi2), dJ/dX
// summed so far (/vertex_fields/xbar, serial vertex order) and a JSON record /adjoint_state
// (level, steps, dt, J, the case's identity, parameter sums, per-step control series), all in
// one HDF5 file that is written under a temporary name and renamed when complete.  The level is
// stored twice (attribute "level" with the psi datasets, and in the record) and compared on load.
PetscErrorCode save_adjoint_state(const AdjointStateRun &run, const std::string &path, long n,
                                  const std::vector<Vec> &history, const UnsteadyAdjointResult &r,
                                  const FaultHook &fault) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = run.res.mesh();
  const int nv = run.res.nv();
  const std::string tmp = path + ".tmp";
  std::vector<io::Field> psi;
  for (std::size_t k = 0; k < history.size(); ++k) {
    psi.push_back({"psi" + std::to_string(k + 1), nv, {}});
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(history[k], &a));
    psi.back().values.assign(a, a + m.n_owned_cells * nv);
    PetscCall(VecRestoreArrayRead(history[k], &a));
  }
  io::Field fx{"xbar", 3, {}};
  PetscCall(io::create_fields_h5(m, run.res.coordinates(), tmp, psi,
                                 {{"level", static_cast<double>(n)}},
                                 {{"adjoint_format", kStateFormat}}));
  if (fault) fault({"adjoint-state-partial", n, 0.0}); // crash tests
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v]) fx.values.insert(fx.values.end(), {r.X[v][0], r.X[v][1], r.X[v][2]});
  nlohmann::json j;
  j["format"] = kStateFormat;
  j["version"] = kStateVersion;
  j["level"] = n;
  j["history"] = history.size();
  j["steps"] = run.steps;
  j["dt"] = run.dt;
  j["J"] = r.J;
  j["problem_hash"] = run.cfg.problem_hash();
  j["problem_keys"] = run.cfg.problem_keys();
  for (const auto &[key, value] : case_identity(run.cfg)) j["case"][key] = value;
  j["parameters"] = nlohmann::json::object();
  for (const auto &p : r.parameters) j["parameters"][p.name] = p.gradient;
  j["control"] = nlohmann::json::object();
  for (const auto &[name, series] : r.control) j["control"][name] = series;
  PetscCall(io::add_to_fields_h5(m, tmp, {fx}, {{"adjoint_state", j.dump()}}));
  if (fault) fault({"adjoint-state", n, 0.0});
  PetscCall(io::replace_file(m.comm, tmp, path));
  PetscFunctionReturn(0);
}

namespace {

// Reads the JSON record /adjoint_state of a saved adjoint state and checks its format and keys.
PetscErrorCode read_state_record(MPI_Comm comm, const std::string &path, nlohmann::json *record) {
  PetscFunctionBeginUser;
  const char *file = path.c_str();
  PetscCheck(std::filesystem::exists(path), comm, PETSC_ERR_FILE_OPEN,
             "--restart: no saved adjoint state %s (adjoint.save_every was 0?)", file);
  std::string text;
  PetscCall(io::read_text_h5(comm, path, "adjoint_state", &text));
  *record = nlohmann::json::parse(text, nullptr, false);
  const nlohmann::json &j = *record;
  const auto has = [&](const char *key) { return j.is_object() && j.contains(key); };
  PetscCheck(has("format") && j["format"] == kStateFormat && has("version") &&
                 j["version"] == kStateVersion,
             comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: not a karman adjoint state (version %d), or corrupt or truncated: no readable "
             "/adjoint_state record",
             file, kStateVersion);
  bool complete = true;
  for (const char *key : {"level", "steps", "dt", "problem_hash", "case", "parameters", "control"})
    complete = complete && has(key);
  PetscCheck(complete && j["level"].is_number_integer() && j["steps"].is_number_integer() &&
                 j["dt"].is_number() && j["problem_hash"].is_string() && j["case"].is_object() &&
                 j["parameters"].is_object() && j["control"].is_object(),
             comm, PETSC_ERR_FILE_UNEXPECTED, "%s: corrupt adjoint state record /adjoint_state",
             file);
  PetscFunctionReturn(0);
}

// This run, which a saved adjoint state must match: the mesh (its hash), the case and the time
// levels (steps of dt)
struct RunIdentity {
  MPI_Comm comm;
  std::string mesh_hash;
  const config::CaseConfig &cfg;
  long steps;
  double dt;
};

// The identity of the case in the state at `path` (record j): mesh, problem
// (CaseConfig::problem_keys), time levels, scheme, initial condition, objective
PetscErrorCode check_state_identity(const RunIdentity &run, const std::string &path,
                                    const nlohmann::json &j) {
  PetscFunctionBeginUser;
  const char *file = path.c_str();
  const config::CaseConfig &cfg = run.cfg;
  std::string file_mesh_hash;
  PetscCall(io::read_text_attribute_h5(run.comm, path, "mesh_hash", &file_mesh_hash));
  PetscCheck(file_mesh_hash == run.mesh_hash, run.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of another mesh (mesh hash %s, this run's mesh %s)", file,
             file_mesh_hash.c_str(), run.mesh_hash.c_str());
  const std::string problem_hash = j["problem_hash"].get<std::string>();
  PetscCheck(
      problem_hash == cfg.problem_hash(), run.comm, PETSC_ERR_FILE_UNEXPECTED,
      "%s: adjoint state of another problem (%s: %s)", file, cfg.file().c_str(),
      config::describe_problem_change(j.value("problem_keys", std::string()), cfg.problem_keys())
          .c_str());
  const long steps = j["steps"].get<long>();
  const double dt = j["dt"].get<double>();
  PetscCheck(steps == run.steps && std::abs(dt - run.dt) <= 1e-12 * run.dt, run.comm,
             PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of a run with %ld steps of dt %.17g, %s has %ld steps of dt %.17g "
             "(time.t_end, time.dt)",
             file, steps, dt, cfg.file().c_str(), run.steps, run.dt);
  for (const auto &[key, now] : case_identity(cfg)) {
    const std::string saved = j["case"].value(key, std::string());
    PetscCheck(saved == now, run.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: adjoint state of another case: its '%s' was %s, %s has %s", file, key.c_str(),
               saved.c_str(), cfg.file().c_str(), now.c_str());
  }
  PetscFunctionReturn(0);
}

// The level n of the state at `path` (record j): the record's (gradient sums) and the psi
// datasets' must agree, in [2, steps]
PetscErrorCode read_state_level(MPI_Comm comm, const std::string &path, const nlohmann::json &j,
                                long steps, long *n) {
  PetscFunctionBeginUser;
  const char *file = path.c_str();
  double psi_level;
  PetscCall(io::read_real_attribute_h5(comm, path, "level", &psi_level));
  *n = j["level"].get<long>();
  PetscCheck(psi_level == static_cast<double>(*n), comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: inconsistent adjoint state: psi of level %g, gradient sums of level %ld", file,
             psi_level, *n);
  PetscCheck(*n >= 2 && *n <= steps, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state of level %ld, expected a level in [2, %ld]", file, *n, steps);
  PetscFunctionReturn(0);
}

// psi^n, psi^{n+1} and the older history the file has (`saved` of them; a state saved with a
// shorter adjoint.initial_guess leaves the rest zero), nv unknowns per cell
PetscErrorCode read_state_history(const mesh::Mesh &m, const std::string &path, long saved, int nv,
                                  const std::vector<Vec> &history) {
  PetscFunctionBeginUser;
  for (std::size_t k = 0; k < history.size(); ++k) {
    PetscCall(VecSet(history[k], 0.0));
    if (static_cast<long>(k) >= saved) continue;
    io::Field f;
    PetscCall(io::read_cell_field_h5(m, path, "psi" + std::to_string(k + 1), &f));
    PetscCheck(f.ncomp == nv, m.comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: adjoint state with %d unknowns per cell in psi%zu, expected %d", path.c_str(),
               f.ncomp, k + 1, nv);
    PetscScalar *a;
    PetscCall(VecGetArray(history[k], &a));
    std::copy(f.values.begin(), f.values.end(), a);
    PetscCall(VecRestoreArray(history[k], &a));
  }
  PetscFunctionReturn(0);
}

// The parameter gradient sums and the per-step control series (steps values each) of record j
PetscErrorCode read_state_sums(MPI_Comm comm, const std::string &path, const nlohmann::json &j,
                               long steps, UnsteadyAdjointResult *r) {
  PetscFunctionBeginUser;
  bool numbers = true;
  for (const auto &[name, value] : j["parameters"].items()) {
    numbers = numbers && value.is_number();
    if (value.is_number()) r->parameters.push_back({name, 0.0, value.get<double>()});
  }
  for (const auto &[name, series] : j["control"].items()) {
    numbers = numbers && series.is_array() && series.size() == static_cast<std::size_t>(steps);
    if (numbers)
      for (const auto &x : series) numbers = numbers && x.is_number();
    if (numbers) r->control[name] = series.get<std::vector<double>>();
  }
  PetscCheck(numbers, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: corrupt adjoint state record: parameter gradients must be numbers and control "
             "series have %ld values",
             path.c_str(), steps);
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode load_adjoint_state(const AdjointStateRun &run, const std::string &path, long *n,
                                  const std::vector<Vec> &history, UnsteadyAdjointResult *r) {
  PetscFunctionBeginUser;
  const mesh::Mesh &m = run.res.mesh();
  nlohmann::json j;
  PetscCall(read_state_record(m.comm, path, &j));
  RunIdentity id{m.comm, "", run.cfg, run.steps, run.dt};
  PetscCall(io::mesh_hash(m, run.res.coordinates(), &id.mesh_hash));
  PetscCall(check_state_identity(id, path, j));
  PetscCall(read_state_level(m.comm, path, j, run.steps, n));
  io::Field fx;
  PetscCall(io::read_vertex_field_h5(m, path, "xbar", &fx));
  PetscCheck(fx.ncomp == 3, m.comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s: adjoint state with %d unknowns per vertex, expected 3", path.c_str(), fx.ncomp);
  PetscCall(read_state_history(m, path, j.value("history", 2L), run.res.nv(), history));
  PetscCall(read_state_sums(m.comm, path, j, run.steps, r));
  // owned vertices from the file, then every copy gets its owner's value
  std::size_t i = 0;
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    r->X[v] = Vec3<double>();
    if (m.vertex_owned[v])
      r->X[v] = Vec3<double>(fx.values[i], fx.values[i + 1], fx.values[i + 2]), i += 3;
  }
  PetscCall(mesh::sum_vertex_copies(m, r->X));
  PetscFunctionReturn(0);
}

} // namespace karman::adjoint
