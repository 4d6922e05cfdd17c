// Force-history statistics (see include/karman/driver/force_history.hpp).
#include "karman/driver/force_history.hpp"

namespace karman::driver {

bool window_statistics(const std::vector<ForceSample> &history, double t0,
                       double ForceSample::*field, SignalStatistics *statistics) {
  std::vector<double> t, v;
  for (const auto &p : history) {
    if (p.time < t0 || p.step == 0) continue; // the initial state is data, not a result
    t.push_back(p.time);
    v.push_back(p.*field);
  }
  if (v.empty()) return false;
  *statistics = signal_statistics(t, v);
  return true;
}

double lift_frequency(const std::vector<ForceSample> &s, double t0, int *periods) {
  double sum = 0;
  int n = 0;
  for (const auto &p : s)
    if (p.time >= t0) sum += p.cl, ++n;
  *periods = 0;
  if (n < 3) return 0;
  const double mean = sum / n;
  std::vector<double> up;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i - 1].time < t0) continue;
    const double a = s[i - 1].cl - mean, b = s[i].cl - mean;
    if (a < 0 && b >= 0) up.push_back(s[i - 1].time + (s[i].time - s[i - 1].time) * (-a) / (b - a));
  }
  if (up.size() < 2) return 0;
  *periods = static_cast<int>(up.size() - 1);
  return (up.size() - 1) / (up.back() - up.front());
}

} // namespace karman::driver
