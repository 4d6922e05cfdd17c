// Typed read access to one validated section of a case file (CaseConfig::section()), one
// boundary's parameters or one entry of a list: each accessor checks that the key is in the
// section's spec with the type asked for (a mismatch is an internal error, std::logic_error).
#pragma once

#include "karman/config/case_schema.hpp"
#include "karman/physics/time_function.hpp"

#include <petscsys.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace karman::config {

/// The value of a RealOrAuto key: a number, or `auto` (value 0).
struct RealOrAuto {
  bool automatic = false;
  double value = 0;
};

/// Typed read access to one validated section (or one boundary's parameters).
class Section {
public:
  Section() = default;
  Section(YAML::Node node, const SectionSpec *spec, std::string label)
      : node_(std::move(node)), spec_(spec), label_(std::move(label)) {}

  double real(const std::string &key) const;
  RealOrAuto real_or_auto(const std::string &key) const;
  long integer(const std::string &key) const;
  bool flag(const std::string &key) const;
  std::string text(const std::string &key) const;
  /// RealVector keys, padded with zeros to 3 components.
  std::array<double, 3> vector(const std::string &key) const;
  std::vector<double> reals(const std::string &key) const;
  std::vector<std::string> names(const std::string &key) const;
  /// TimeFunction keys (files are read relative to `directory`).  Collective on comm.
  PetscErrorCode time_function(MPI_Comm comm, const std::string &key, const std::string &directory,
                               physics::TimeFunction *f) const;
  /// RealTable keys.
  std::vector<std::vector<double>> table(const std::string &key) const;
  /// TermList keys: one Section (with this section's keys) per term.
  std::vector<Section> terms(const std::string &key) const;
  /// PointList keys, each point padded to 3 components.
  std::vector<std::array<double, 3>> points(const std::string &key) const;
  const std::string &label() const { return label_; }

private:
  YAML::Node get(const std::string &key, KeyType type) const;
  YAML::Node node_;
  const SectionSpec *spec_ = nullptr;
  std::string label_;
};

} // namespace karman::config
