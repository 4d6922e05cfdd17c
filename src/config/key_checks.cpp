// Checks of case-file values against their key specs (see include/karman/config/key_checks.hpp):
// the type, range and choices of one value, time functions, and keys a mapping repeats.
#include "karman/config/key_checks.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace karman::config {
namespace {

bool is_number(const YAML::Node &node, double *value) {
  if (!node.IsScalar()) return false;
  try {
    double v = node.as<double>();
    if (!std::isfinite(v)) return false;
    if (value) *value = v;
    return true;
  } catch (const YAML::Exception &) {
    return false;
  }
}

bool is_number_list(const YAML::Node &node, std::size_t min_len, std::size_t max_len) {
  if (!node.IsSequence() || node.size() < min_len || node.size() > max_len) return false;
  for (const auto &item : node)
    if (!is_number(item, nullptr)) return false;
  return true;
}

// A time function: a number or {type: sine|table|steps, ...}.
std::string check_time_function(const YAML::Node &value, const std::string &expected) {
  if (is_number(value, nullptr)) return "";
  if (!value.IsMap() || !value["type"] || !value["type"].IsScalar()) return "expected " + expected;
  const std::string type = value["type"].Scalar();
  std::vector<std::string> allowed;
  if (type == "sine")
    allowed = {"type", "amplitude", "frequency", "phase", "offset"};
  else if (type == "table")
    allowed = {"type", "points", "file"};
  else if (type == "steps")
    allowed = {"type", "file"};
  else
    return "has unknown time-function type '" + type + "' (sine, table, steps)";
  for (const auto &item : value) {
    const std::string k = item.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      return "has unknown key '" + k + "' for a " + type + " time function";
    if (k == "type" || k == "file") {
      if (!item.second.IsScalar() || item.second.Scalar().empty())
        return "'" + k + "' must be a name";
    } else if (k != "points" && !is_number(item.second, nullptr)) {
      return "'" + k + "' must be a number";
    }
  }
  if (type == "sine" && (!value["amplitude"] || !value["frequency"]))
    return "needs amplitude and frequency for a sine";
  if (type == "steps" && !value["file"]) return "needs 'file' (one value per time level)";
  if (type == "table") {
    if (!value["points"] == !value["file"]) return "needs either 'points' or 'file' for a table";
    if (value["points"]) {
      const YAML::Node pts = value["points"];
      if (!pts.IsSequence() || pts.size() == 0) return "'points' must be a list of [t, v] pairs";
      double last = -1e300;
      for (const auto &p : pts) {
        if (!is_number_list(p, 2, 2)) return "'points' must be a list of [t, v] pairs";
        const double t = p[0].as<double>();
        if (!(t > last)) return "'points' must have increasing times";
        last = t;
      }
    }
  }
  return "";
}

} // namespace

// "" or the first key that a mapping (at any depth) repeats: yaml-cpp keeps both entries and
// looks up the first, so a repeated key would silently lose the later value.
std::string duplicate_key(const std::string &file, const YAML::Node &node) {
  if (node.IsSequence())
    for (const auto &item : node)
      if (std::string e = duplicate_key(file, item); !e.empty()) return e;
  if (!node.IsMap()) return "";
  std::map<std::string, int> seen;
  for (const auto &kv : node) {
    if (kv.first.IsScalar()) {
      const std::string key = kv.first.Scalar();
      const int line = kv.first.Mark().line + 1;
      if (auto it = seen.find(key); it != seen.end())
        return where(file, kv.first) + ": duplicate key '" + key + "' (first given on line " +
               std::to_string(it->second) + ")";
      seen[key] = line;
    }
    if (std::string e = duplicate_key(file, kv.second); !e.empty()) return e;
  }
  return "";
}

// Checks one value against its spec; returns an empty string or the reason.
std::string check_value(const KeySpec &spec, const YAML::Node &value) {
  const std::string expected = describe_expected(spec);
  double x = 0;
  switch (spec.type) {
  case KeyType::Real:
  case KeyType::RealOrAuto:
  case KeyType::Integer: {
    if (spec.type == KeyType::RealOrAuto && value.IsScalar() && value.Scalar() == "auto") return "";
    if (!is_number(value, &x)) return "expected " + expected;
    if (spec.type == KeyType::Integer) {
      try {
        (void)value.as<long>();
      } catch (const YAML::Exception &) {
        return "expected " + expected;
      }
    }
    const bool below = spec.min_exclusive ? !(x > spec.min) : !(x >= spec.min);
    if (below || x > spec.max) return "expected " + expected;
    return "";
  }
  case KeyType::Bool:
    try {
      (void)value.as<bool>();
      return "";
    } catch (const YAML::Exception &) {
      return "expected " + expected;
    }
  case KeyType::String:
  case KeyType::Path:
    if (!value.IsScalar()) return "expected " + expected;
    if (spec.type == KeyType::Path && value.Scalar().empty()) return "expected " + expected;
    return "";
  case KeyType::Choice:
    if (value.IsScalar())
      for (const auto &c : spec.choices)
        if (value.Scalar() == c) return "";
    return "expected " + expected;
  case KeyType::RealVector:
    return is_number_list(value, 2, 3) ? "" : "expected " + expected;
  case KeyType::RealList:
    return is_number_list(value, 0, 1u << 30) ? "" : "expected " + expected;
  case KeyType::NameList:
    if (!value.IsSequence()) return "expected " + expected;
    for (const auto &item : value)
      if (!item.IsScalar() || item.Scalar().empty()) return "expected " + expected;
    return "";
  case KeyType::PointList:
    if (!value.IsSequence()) return "expected " + expected;
    for (const auto &item : value)
      if (!is_number_list(item, 2, 3)) return "expected " + expected;
    return "";
  case KeyType::TimeFunction:
    return check_time_function(value, expected);
  case KeyType::RealTable:
    if (!value.IsSequence()) return "expected " + expected;
    for (const auto &item : value)
      if (!is_number_list(item, 1, 1u << 20)) return "expected " + expected;
    return "";
  case KeyType::TermList:
    return value.IsSequence() ? "" : "expected " + expected;
  }
  return "unknown key type";
}

} // namespace karman::config
