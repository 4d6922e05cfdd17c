// Typed read access to one validated section of a case file (see
// include/karman/config/case_section.hpp).
#include "karman/config/case_section.hpp"

#include "karman/core/numeric_table.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace karman::config {

YAML::Node Section::get(const std::string &key, KeyType type) const {
  const KeySpec *k = spec_ ? spec_->find(key) : nullptr;
  if (!k || k->type != type)
    throw std::logic_error("karman: internal error: key '" + label_ + "." + key +
                           "' is not in the schema with the requested type");
  return node_[key];
}

double Section::real(const std::string &key) const {
  return get(key, KeyType::Real).as<double>();
}

RealOrAuto Section::real_or_auto(const std::string &key) const {
  const YAML::Node v = get(key, KeyType::RealOrAuto);
  if (v.IsScalar() && v.Scalar() == "auto") return {true, 0.0};
  return {false, v.as<double>()};
}

long Section::integer(const std::string &key) const {
  return get(key, KeyType::Integer).as<long>();
}

bool Section::flag(const std::string &key) const {
  return get(key, KeyType::Bool).as<bool>();
}

std::string Section::text(const std::string &key) const {
  const KeySpec *k = spec_ ? spec_->find(key) : nullptr;
  if (!k || !(k->type == KeyType::String || k->type == KeyType::Choice || k->type == KeyType::Path))
    throw std::logic_error("karman: internal error: key '" + label_ + "." + key + "' is not text");
  return node_[key].Scalar();
}

std::array<double, 3> Section::vector(const std::string &key) const {
  const YAML::Node v = get(key, KeyType::RealVector);
  std::array<double, 3> out{0.0, 0.0, 0.0};
  for (std::size_t i = 0; i < v.size() && i < 3; ++i) out[i] = v[i].as<double>();
  return out;
}

std::vector<double> Section::reals(const std::string &key) const {
  return get(key, KeyType::RealList).as<std::vector<double>>();
}

std::vector<std::string> Section::names(const std::string &key) const {
  return get(key, KeyType::NameList).as<std::vector<std::string>>();
}

namespace {

PetscErrorCode read_columns(MPI_Comm comm, const std::string &path, const std::string &what,
                            std::size_t ncol, std::vector<double> *a, std::vector<double> *b) {
  PetscFunctionBeginUser;
  std::ifstream in(path);
  PetscCheck(in.good(), comm, PETSC_ERR_FILE_OPEN, "%s: file '%s' not found or not readable",
             what.c_str(), path.c_str());
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::vector<double>> rows;
  const std::string problem = parse_numeric_rows(text.str(), ncol, &rows);
  PetscCheck(problem.empty(), comm, PETSC_ERR_USER_INPUT, "%s: %s: %s", what.c_str(), path.c_str(),
             problem.c_str());
  PetscCheck(!rows.empty(), comm, PETSC_ERR_USER_INPUT, "%s: %s holds no values", what.c_str(),
             path.c_str());
  for (const auto &row : rows) {
    a->push_back(row[0]);
    if (ncol > 1) b->push_back(row[1]);
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode Section::time_function(MPI_Comm comm, const std::string &key,
                                      const std::string &directory,
                                      physics::TimeFunction *f) const {
  PetscFunctionBeginUser;
  const YAML::Node v = get(key, KeyType::TimeFunction);
  const std::string what = label_ + "." + key;
  if (!v.IsMap()) {
    *f = physics::TimeFunction::constant(v.as<double>());
    PetscFunctionReturn(0);
  }
  const std::string type = v["type"].Scalar();
  auto number = [&](const char *k, double def) { return v[k] ? v[k].as<double>() : def; };
  if (type == "sine") {
    *f = physics::TimeFunction::sine(number("amplitude", 0), number("frequency", 0),
                                     number("phase", 0), number("offset", 0));
  } else {
    std::vector<double> a, b;
    if (v["file"]) {
      std::filesystem::path p(v["file"].Scalar());
      if (p.is_relative()) p = std::filesystem::path(directory) / p;
      PetscCall(read_columns(comm, p.string(), what, type == "table" ? 2 : 1, &a, &b));
    } else {
      for (const auto &pt : v["points"])
        a.push_back(pt[0].as<double>()), b.push_back(pt[1].as<double>());
    }
    if (type == "table") {
      for (std::size_t i = 1; i < a.size(); ++i)
        PetscCheck(a[i] > a[i - 1], comm, PETSC_ERR_USER_INPUT,
                   "%s: table times must increase (%g after %g)", what.c_str(), a[i], a[i - 1]);
      *f = physics::TimeFunction::table(a, b);
    } else {
      *f = physics::TimeFunction::steps(a);
    }
  }
  PetscFunctionReturn(0);
}

std::vector<std::vector<double>> Section::table(const std::string &key) const {
  std::vector<std::vector<double>> out;
  for (const auto &row : get(key, KeyType::RealTable)) out.push_back(row.as<std::vector<double>>());
  return out;
}

std::vector<Section> Section::terms(const std::string &key) const {
  std::vector<Section> out;
  const YAML::Node list = get(key, KeyType::TermList);
  for (std::size_t i = 0; i < list.size(); ++i)
    out.emplace_back(list[i], spec_, label_ + "." + key + "[" + std::to_string(i) + "]");
  return out;
}

std::vector<std::array<double, 3>> Section::points(const std::string &key) const {
  const YAML::Node list = get(key, KeyType::PointList);
  std::vector<std::array<double, 3>> out;
  for (const auto &p : list) {
    std::array<double, 3> x{0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < p.size() && i < 3; ++i) x[i] = p[i].as<double>();
    out.push_back(x);
  }
  return out;
}

} // namespace karman::config
