// Typed options of a case-file section: a layer declares each key of a section it owns once,
// bound to a member of its options struct,
//   static const SectionOptions<FluidOptions> fluid =
//       SectionOptions<FluidOptions>("fluid", "fluid properties")
//           .key(key::positive("density", "1.0", "density rho"), &FluidOptions::density);
// and gets from it both the schema's keys (declare(), spec()) and the parsed struct (read()).
// Code downstream reads the struct: a mistyped member does not compile, and the key's name is
// written in one place only.  The member's type picks the reader: double (Real), RealOrAuto
// (RealOrAuto), long (Integer), bool (Bool), std::string (String, Choice, Path), Vec3<double>
// (RealVector), std::vector<double> (RealList), std::vector<std::string> (NameList),
// std::vector<Vec3<double>> (PointList), physics::TimeFunction (TimeFunction, files read
// collectively), std::vector<std::vector<double>> (RealTable).
#pragma once

#include "karman/config/case_config.hpp"
#include "karman/core/vec3.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace karman::config {

namespace detail {

inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, double *v) {
  *v = s.real(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, RealOrAuto *v) {
  *v = s.real_or_auto(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, long *v) {
  *v = s.integer(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, bool *v) {
  *v = s.flag(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, std::string *v) {
  *v = s.text(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, Vec3<double> *v) {
  *v = Vec3<double>::from(s.vector(k));
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, std::vector<double> *v) {
  *v = s.reals(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, std::vector<std::string> *v) {
  *v = s.names(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, std::vector<Vec3<double>> *v) {
  v->clear();
  for (const auto &p : s.points(k)) v->push_back(Vec3<double>::from(p));
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm,
                               const std::string &, std::vector<std::vector<double>> *v) {
  *v = s.table(k);
  return 0;
}
inline PetscErrorCode read_key(const Section &s, const std::string &k, MPI_Comm comm,
                               const std::string &directory, physics::TimeFunction *v) {
  return s.time_function(comm, k, directory, v);
}

} // namespace detail

template <typename Options> class SectionOptions {
public:
  /// Keys of section `section` (a fixed section of the case file, or a variant type's name).
  /// `problem`: every key enters the residual (CaseConfig::problem_keys()); `optional`: the
  /// section is resolved only when the case file has it.
  SectionOptions(std::string section, std::string help, bool problem = false, bool optional = false)
      : spec_{std::move(section), std::move(help), {}, optional}, problem_(problem) {}

  /// Binds key `spec` to member m.
  template <typename M> SectionOptions key(KeySpec spec, M Options::*m) const {
    SectionOptions out = *this;
    const std::string name = spec.name;
    spec.problem = spec.problem || problem_;
    out.spec_.keys.push_back(std::move(spec));
    out.readers_.push_back(
        [name, m](const Section &s, MPI_Comm comm, const std::string &dir, Options *o) {
          return detail::read_key(s, name, comm, dir, &(o->*m));
        });
    return out;
  }
  /// Binds choice key `spec` to the enum member m: each choice's text and its value (the key's
  /// choices are these texts).
  template <typename E>
  SectionOptions choice(KeySpec spec, E Options::*m,
                        std::vector<std::pair<std::string, E>> values) const {
    SectionOptions out = *this;
    const std::string name = spec.name;
    spec.type = KeyType::Choice;
    spec.choices.clear();
    for (const auto &v : values) spec.choices.push_back(v.first);
    spec.problem = spec.problem || problem_;
    out.spec_.keys.push_back(std::move(spec));
    out.readers_.push_back(
        [name, m, values](const Section &s, MPI_Comm, const std::string &, Options *o) {
          const std::string text = s.text(name);
          for (const auto &v : values)
            if (v.first == text) o->*m = v.second;
          return PetscErrorCode(0);
        });
    return out;
  }
  /// A key that is declared here but read elsewhere (by a nested unit).
  SectionOptions declare_only(KeySpec spec) const {
    SectionOptions out = *this;
    spec.problem = spec.problem || problem_;
    out.spec_.keys.push_back(std::move(spec));
    return out;
  }

  const SectionSpec &spec() const { return spec_; }
  /// Adds the keys to the schema's section of this name.
  void declare(Schema &schema) const {
    schema.add_keys(spec_.name, spec_.help, spec_.keys, spec_.optional);
  }
  /// Reads the bound keys of `s` into *out (the other members keep their values).  Collective
  /// (time functions may read files, relative to `directory`).
  PetscErrorCode read(const Section &s, MPI_Comm comm, const std::string &directory,
                      Options *out) const {
    PetscFunctionBeginUser;
    for (const auto &r : readers_) PetscCall(r(s, comm, directory, out));
    PetscFunctionReturn(0);
  }
  /// The same from the case's section of this name.  Collective.
  PetscErrorCode read(const CaseConfig &cfg, MPI_Comm comm, Options *out) const {
    return read(cfg.section(spec_.name), comm, cfg.directory(), out);
  }
  /// The options of the case's section of this name, for a section without time functions
  /// (nothing to read from files: a validated case cannot fail here).
  Options get(const CaseConfig &cfg) const { return get(cfg.section(spec_.name)); }
  Options get(const Section &s) const {
    for (const auto &k : spec_.keys)
      if (k.type == KeyType::TimeFunction)
        throw std::logic_error("karman: internal error: section '" + spec_.name +
                               "' has time functions: read() it");
    Options o;
    for (const auto &r : readers_) (void)r(s, MPI_COMM_SELF, std::string(), &o);
    return o;
  }

private:
  SectionSpec spec_;
  bool problem_ = false;
  std::vector<
      std::function<PetscErrorCode(const Section &, MPI_Comm, const std::string &, Options *)>>
      readers_;
};

} // namespace karman::config
