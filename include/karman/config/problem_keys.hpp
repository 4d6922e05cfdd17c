// Comparing two lists of problem keys (CaseConfig::problem_keys(): the resolved keys that define
// the discrete residual): which keys differ, and the message that names them, for a restart or an
// adjoint state that was written for another problem.
#pragma once

#include <string>
#include <vector>

namespace karman::config {

/// A key whose value differs between two problem_keys() texts.
struct KeyChange {
  std::string key;     ///< "solver.upwind"
  std::string stored;  ///< value in the stored text ("(none)": not there)
  std::string current; ///< value in the current text ("(none)": not there)
};

/// The keys whose values differ between `stored` (e.g. read from a checkpoint) and `current`
/// (both CaseConfig::problem_keys() texts), in the order of `stored`, then keys only in
/// `current`.  A text that is not a YAML map gives one entry saying so.
std::vector<KeyChange> compare_problem_keys(const std::string &stored, const std::string &current);

/// "solver.upwind = 1, this case has 0; solver.stabilization = ..." for messages.
std::string describe_key_changes(const std::vector<KeyChange> &changes);

/// What differs between a stored problem_keys() text (of a checkpoint, flow.h5 or adjoint
/// state) and the current one, for messages: describe_key_changes() of the two, or, when
/// `stored` is empty (a file written before the key list was stored), that the keys are unknown.
std::string describe_problem_change(const std::string &stored, const std::string &current);

} // namespace karman::config
