// Scalar functions of time (see include/karman/physics/time_function.hpp).
#include "karman/physics/time_function.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace karman::physics {

TimeFunction TimeFunction::constant(double v) {
  TimeFunction f;
  f.kind_ = Kind::Constant;
  f.offset = v;
  return f;
}

TimeFunction TimeFunction::sine(double amplitude, double frequency, double phase, double offset) {
  TimeFunction f;
  f.kind_ = Kind::Sine;
  f.amplitude = amplitude, f.frequency = frequency, f.phase = phase, f.offset = offset;
  return f;
}

TimeFunction TimeFunction::table(std::vector<double> t, std::vector<double> v) {
  TimeFunction f;
  f.kind_ = Kind::Table;
  f.times = std::move(t);
  f.values = std::move(v);
  return f;
}

TimeFunction TimeFunction::steps(std::vector<double> v) {
  TimeFunction f;
  f.kind_ = Kind::Steps;
  f.values = std::move(v);
  return f;
}

std::vector<std::string> TimeFunction::parameter_names() const {
  if (kind_ == Kind::Sine) return {"amplitude", "frequency", "phase", "offset"};
  std::vector<std::string> names;
  if (kind_ == Kind::Table)
    for (std::size_t j = 0; j < times.size(); ++j)
      names.push_back("knot[" + std::to_string(j) + "]");
  return names;
}

std::vector<double> TimeFunction::parameter_derivatives(double t) const {
  if (kind_ == Kind::Sine) {
    const double arg = 2 * M_PI * frequency * t + phase;
    return {std::sin(arg), amplitude * std::cos(arg) * 2 * M_PI * t, amplitude * std::cos(arg),
            1.0};
  }
  std::vector<double> d(kind_ == Kind::Table ? times.size() : 0, 0.0);
  if (d.empty()) return d;
  if (t <= times.front()) {
    d.front() = 1;
  } else if (t >= times.back()) {
    d.back() = 1;
  } else {
    const std::size_t j = std::upper_bound(times.begin(), times.end(), t) - times.begin();
    const double s = (t - times[j - 1]) / (times[j] - times[j - 1]);
    d[j - 1] = 1 - s, d[j] = s;
  }
  return d;
}

double TimeFunction::value(double t, long n, bool *beyond) const {
  if (beyond) *beyond = false;
  switch (kind_) {
  case Kind::Constant:
    return offset;
  case Kind::Sine:
    return offset + amplitude * std::sin(2 * M_PI * frequency * t + phase);
  case Kind::Table: {
    if (t <= times.front()) return values.front();
    if (t >= times.back()) return values.back();
    const auto it = std::upper_bound(times.begin(), times.end(), t);
    const std::size_t k = static_cast<std::size_t>(it - times.begin());
    const double s = (t - times[k - 1]) / (times[k] - times[k - 1]);
    return (1 - s) * values[k - 1] + s * values[k];
  }
  case Kind::Steps:
    if (n < 0) n = 0;
    if (static_cast<std::size_t>(n) >= values.size()) {
      if (beyond) *beyond = true;
      return values.back();
    }
    return values[n];
  }
  return 0;
}

std::string TimeFunction::describe() const {
  char buf[256];
  switch (kind_) {
  case Kind::Constant:
    std::snprintf(buf, sizeof(buf), "%g", offset);
    break;
  case Kind::Sine:
    std::snprintf(buf, sizeof(buf), "%g + %g sin(2 pi %g t + %g)", offset, amplitude, frequency,
                  phase);
    break;
  case Kind::Table:
    std::snprintf(buf, sizeof(buf), "table of %zu points", times.size());
    break;
  case Kind::Steps:
    std::snprintf(buf, sizeof(buf), "%zu values, one per time level", values.size());
    break;
  }
  return buf;
}

} // namespace karman::physics
