// The shape design types (see include/karman/design/design_types.hpp).
#include "karman/design/design_types.hpp"

#include "karman/config/case_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace karman::design {
namespace {

using namespace config::key;
using config::KeySpec;
using config::KeyType;
using config::SectionSpec;

// Keys shared by every design parameterization.
std::vector<KeySpec> design_common_keys() {
  return {
      typed("name", KeyType::String, "''",
            "name of the parameterization, the prefix of its variables' names; empty: the "
            "type's short name and its index among the parameterizations of that type (ffd0, "
            "hh0, rigid0, normal0, radial0)"),
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
      typed("scale", KeyType::RealList, "[]",
            "the optimizer sees a / scale (one value for all, or one per variable; each > 0): "
            "variables of different units (an angle and a length) or sensitivities made "
            "comparable, so that SLSQP does not crawl along a flat direction; empty: 1"),
  };
}

// A failed check returns its message line (file:line: label...: what).
#define KARMAN_REQUIRE(cond, ...)                                                                  \
  do {                                                                                             \
    if (!(cond)) return format(__VA_ARGS__);                                                       \
  } while (0)

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

// Number of variables of a design entry when the case file fixes it (-1: it depends on the
// mesh, surface-normal).  Call after check_design's type-specific checks.
long design_variable_count(const std::string &type, const YAML::Node &params) {
  if (type == "ffd") {
    long n = static_cast<long>(params["axes"].size());
    const long fixed = params["fixed_layers"].as<long>();
    for (const auto &c : params["lattice"]) n *= std::lround(c.as<double>()) - 2 * fixed;
    return n;
  }
  if (type == "hicks-henne")
    return static_cast<long>(params["positions"].size()) *
           (params["surfaces"].Scalar() == "both" ? 2 : 1);
  if (type == "rigid") return static_cast<long>(params["variables"].size());
  if (type == "radial") return params["control_points"].as<long>();
  return -1;
}

// One design entry being checked: `given` as written (for line numbers), `params` resolved.
struct DesignEntry {
  const std::string &file;
  const YAML::Node &given;
  const YAML::Node &params;
  const std::string &label;
  /// file:line of a key (of the entry where the key is not written)
  std::string at(const char *key) const {
    return config::where(file, given[key] ? given[key] : given);
  }
};

// walls: existing wall-type boundaries, at least one, no repeats
std::string check_walls(const DesignEntry &e,
                        const std::vector<config::BoundaryConfig> &boundaries) {
  const std::string &label = e.label;
  const YAML::Node walls = e.params["walls"];
  KARMAN_REQUIRE(walls.size() > 0, "%s: '%s.walls' must name at least one wall boundary",
                 e.at("walls").c_str(), label.c_str());
  std::vector<std::string> bc_names;
  for (const auto &b : boundaries) bc_names.push_back(b.name);
  std::vector<std::string> seen;
  for (const auto &w : walls) {
    const std::string name = w.Scalar();
    const config::BoundaryConfig *bc = nullptr;
    for (const auto &b : boundaries)
      if (b.name == name) bc = &b;
    KARMAN_REQUIRE(bc, "%s: '%s.walls': '%s' is not a boundary: %s", e.at("walls").c_str(),
                   label.c_str(), name.c_str(), config::suggestion(name, bc_names).c_str());
    KARMAN_REQUIRE(
        bc->type == "wall" || bc->type == "blowing-suction",
        "%s: '%s.walls': '%s' is a %s boundary; only wall and blowing-suction boundaries "
        "can be moved",
        e.at("walls").c_str(), label.c_str(), name.c_str(), bc->type.c_str());
    KARMAN_REQUIRE(std::find(seen.begin(), seen.end(), name) == seen.end(),
                   "%s: '%s.walls' lists '%s' twice", e.at("walls").c_str(), label.c_str(),
                   name.c_str());
    seen.push_back(name);
  }
  return "";
}

// a list of distinct names out of `allowed`, at least one
std::string check_names(const DesignEntry &e, const char *key,
                        const std::vector<std::string> &allowed) {
  const std::string &label = e.label;
  const YAML::Node list = e.params[key];
  KARMAN_REQUIRE(list.size() > 0, "%s: '%s.%s' must not be empty", e.at(key).c_str(), label.c_str(),
                 key);
  std::vector<std::string> listed;
  for (const auto &item : list) {
    const std::string v = item.Scalar();
    KARMAN_REQUIRE(std::find(allowed.begin(), allowed.end(), v) != allowed.end(),
                   "%s: '%s.%s': unknown entry '%s': %s", e.at(key).c_str(), label.c_str(), key,
                   v.c_str(), config::suggestion(v, allowed).c_str());
    KARMAN_REQUIRE(std::find(listed.begin(), listed.end(), v) == listed.end(),
                   "%s: '%s.%s' lists '%s' twice", e.at(key).c_str(), label.c_str(), key,
                   v.c_str());
    listed.push_back(v);
  }
  return "";
}

// ffd: the lattice, its fixed layers, size, origin and axes
std::string check_ffd(const DesignEntry &e) {
  const std::string &label = e.label;
  const YAML::Node &params = e.params;
  const YAML::Node lattice = params["lattice"], size = params["size"];
  KARMAN_REQUIRE(lattice.size() == 2 || lattice.size() == 3,
                 "%s: '%s.lattice' must be [nx, ny] (2D) or [nx, ny, nz] (3D), got %zu numbers",
                 e.at("lattice").c_str(), label.c_str(), lattice.size());
  const long fixed = params["fixed_layers"].as<long>();
  for (std::size_t i = 0; i < lattice.size(); ++i) {
    const double n = lattice[i].as<double>();
    KARMAN_REQUIRE(n >= 2 && n == std::round(n),
                   "%s: '%s.lattice' entries must be integers >= 2 (control points per "
                   "direction), got %g",
                   e.at("lattice").c_str(), label.c_str(), n);
    KARMAN_REQUIRE(std::lround(n) - 2 * fixed >= 1,
                   "%s: '%s.fixed_layers' = %ld leaves no free control point in direction %zu "
                   "of the lattice (%g points; needs at least 2 * fixed_layers + 1)",
                   e.at("fixed_layers").c_str(), label.c_str(), fixed, i, n);
  }
  KARMAN_REQUIRE(size.size() == lattice.size(),
                 "%s: '%s.size' has %zu components, the lattice %zu directions",
                 e.at("size").c_str(), label.c_str(), size.size(), lattice.size());
  KARMAN_REQUIRE(params["origin"].size() == lattice.size(),
                 "%s: '%s.origin' has %zu components, the lattice %zu directions",
                 e.at("origin").c_str(), label.c_str(), params["origin"].size(), lattice.size());
  for (const auto &c : size)
    KARMAN_REQUIRE(c.as<double>() > 0, "%s: '%s.size' must be > 0 in every direction, got %s",
                   e.at("size").c_str(), label.c_str(), config::show(size).c_str());
  return check_names(e, "axes", {"x", "y", "z"});
}

// hicks-henne: increasing bump positions in (0, 1), a nonzero 2D chord direction
std::string check_hicks_henne(const DesignEntry &e) {
  const std::string &label = e.label;
  const YAML::Node positions = e.params["positions"];
  KARMAN_REQUIRE(positions.size() > 0, "%s: '%s.positions' must list at least one bump position",
                 e.at("positions").c_str(), label.c_str());
  double last = 0;
  for (const auto &p : positions) {
    const double h = p.as<double>();
    KARMAN_REQUIRE(h > 0 && h < 1,
                   "%s: '%s.positions': bump position %g is outside (0, 1) (chord fractions)",
                   e.at("positions").c_str(), label.c_str(), h);
    KARMAN_REQUIRE(h > last, "%s: '%s.positions' must increase (%g after %g)",
                   e.at("positions").c_str(), label.c_str(), h, last);
    last = h;
  }
  const YAML::Node c = e.params["chord_direction"];
  double c2 = 0;
  for (const auto &x : c) c2 += x.as<double>() * x.as<double>();
  KARMAN_REQUIRE(c.size() == 2 && c2 > 0,
                 "%s: '%s.chord_direction' must be a nonzero 2D vector [x, y], got %s",
                 e.at("chord_direction").c_str(), label.c_str(), config::show(c).c_str());
  return "";
}

// bounds and initial values: one value for all, or one per variable (when known)
std::string check_bounds(const DesignEntry &e, const std::string &type) {
  const std::string &label = e.label;
  const YAML::Node &params = e.params;
  const long n = design_variable_count(type, params);
  for (const char *key : {"lower", "upper", "initial", "scale"}) {
    const std::size_t len = params[key].size();
    KARMAN_REQUIRE(len <= 1 || (n >= 0 && len == static_cast<std::size_t>(n)),
                   "%s: '%s.%s' has %zu values; expected 1 (for all) or %s", e.at(key).c_str(),
                   label.c_str(), key, len,
                   n >= 0 ? (std::to_string(n) + " (one per variable)").c_str()
                          : "none (one per wall vertex is not supported)");
  }
  const std::size_t count = std::max<std::size_t>(
      {std::size_t(1), params["lower"].size(), params["upper"].size(), params["initial"].size()});
  auto value = [&](const char *key, std::size_t i, double def) {
    const YAML::Node list = params[key];
    if (list.size() == 0) return def;
    return list[list.size() == 1 ? 0 : i].as<double>();
  };
  for (std::size_t i = 0; i < params["scale"].size(); ++i)
    KARMAN_REQUIRE(params["scale"][i].as<double>() > 0,
                   "%s: '%s.scale' must be positive (the optimizer sees a / scale), got %g",
                   e.at("scale").c_str(), label.c_str(), params["scale"][i].as<double>());
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count; ++i) {
    const double lo = value("lower", i, -inf), up = value("upper", i, inf),
                 a0 = value("initial", i, 0.0);
    KARMAN_REQUIRE(lo <= up, "%s: '%s.lower' (%g) is greater than '%s.upper' (%g) for variable %zu",
                   e.at("lower").c_str(), label.c_str(), lo, label.c_str(), up, i);
    KARMAN_REQUIRE(lo <= a0 && a0 <= up,
                   "%s: '%s.initial' (%g) is outside ['%s.lower', '%s.upper'] = [%g, %g] for "
                   "variable %zu",
                   e.at("initial").c_str(), label.c_str(), a0, label.c_str(), label.c_str(), lo, up,
                   i);
  }
  return "";
}

// Type-specific checks of one design entry (`given` as written, for line numbers; `params`
// resolved): what the schema's key types cannot say.
std::string check_design(const std::string &file, const std::string &type, const YAML::Node &given,
                         const YAML::Node &params, const std::string &label,
                         const std::vector<config::BoundaryConfig> &boundaries) {
  const DesignEntry e{file, given, params, label};
  if (std::string err = check_walls(e, boundaries); !err.empty()) return err;
  const std::string name = params["name"].Scalar();
  KARMAN_REQUIRE(name.find_first_of(".[], \t") == std::string::npos,
                 "%s: '%s.name' must not contain '.', '[', ']', ',' or blanks (it prefixes the "
                 "variables' names), got '%s'",
                 e.at("name").c_str(), label.c_str(), name.c_str());
  std::string err;
  if (type == "ffd")
    err = check_ffd(e);
  else if (type == "hicks-henne")
    err = check_hicks_henne(e);
  else if (type == "rigid")
    err = check_names(e, "variables", {"angle", "dx", "dy", "dz"});
  if (!err.empty()) return err;
  return check_bounds(e, type);
}

} // namespace

std::vector<config::VariantSpec> shape_design_types() {
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
  d.push_back(
      {"radial",
       "2D: each wall point moves along its ray from `center` by a periodic B-spline of the "
       "angle about it (one variable per control point, uniformly spaced in angle): the wall "
       "stays a polar curve r(theta) and cannot cross or fold (the walls must be star-shaped "
       "about the centre); degree 1 allows corners at the control angles",
       with_common({
           typed("center", KeyType::RealVector, "[0, 0]",
                 "the centre the walls are star-shaped about (every ray from it meets them once)"),
           integer("control_points", "", "control points (variables), uniformly spaced in angle", 4,
                   1000),
           integer("degree", "3",
                   "degree of the B-spline in the angle: 1 piecewise linear (corners possible), 3 "
                   "cubic (curvature continuous)",
                   1, 5),
           typed("start_angle", KeyType::Real, "0",
                 "the angle of control point 0 about the centre [degrees, counter-clockwise from "
                 "+x]"),
       })});
  std::vector<config::VariantSpec> out;
  const char *short_names[] = {"ffd", "hh", "rigid", "normal", "radial"};
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::string type = d[i].name;
    out.push_back({d[i], "shape", short_names[i],
                   [type](const YAML::Node &given, const YAML::Node &params,
                          const std::string &label, const config::VariantContext &context) {
                     return check_design(context.file, type, given, params, label,
                                         *context.boundaries);
                   }});
  }
  return out;
}

} // namespace karman::design
