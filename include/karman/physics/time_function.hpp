// A scalar boundary parameter as a function of time, as given in the case file:
//   2.0                                              constant
//   {type: sine, amplitude: A, frequency: f, phase: phi, offset: c}
//                                                    c + A sin(2 pi f t + phi)
//   {type: table, points: [[t0, v0], [t1, v1], ...]} piecewise linear in t (held
//   {type: table, file: values.csv}                  constant outside), file: "t, v" rows
//   {type: steps, file: values.csv}                  one value per time level n = 0, 1, ...
//                                                    (value n applies at t^n)
// value(t, n) needs the time level n only for `steps`.
#pragma once

#include <string>
#include <vector>

namespace karman::physics {

class TimeFunction {
public:
  enum class Kind { Constant, Sine, Table, Steps };

  static TimeFunction constant(double v);
  static TimeFunction sine(double amplitude, double frequency, double phase, double offset);
  static TimeFunction table(std::vector<double> times, std::vector<double> values);
  static TimeFunction steps(std::vector<double> values);

  /// The value at time t, time level n.  Steps beyond the given values return the last value
  /// and set *beyond (if not null).
  double value(double t, long n, bool *beyond = nullptr) const;
  Kind kind() const { return kind_; }
  bool is_constant() const { return kind_ == Kind::Constant; }
  /// The parameters whose derivatives parameter_derivatives gives: a sine's amplitude,
  /// frequency, phase and offset, a table's knot values knot[0], knot[1], ...; none otherwise.
  std::vector<std::string> parameter_names() const;
  /// d f(t) / d(parameter i) in the order of parameter_names() (a table interpolates linearly
  /// and holds its end values).
  std::vector<double> parameter_derivatives(double t) const;
  std::string describe() const;

  double amplitude = 0, frequency = 0, phase = 0, offset = 0; ///< Constant uses offset
  std::vector<double> times, values;                          ///< Table / Steps

private:
  Kind kind_ = Kind::Constant;
};

} // namespace karman::physics
