// Access to the forward trajectory for the backward (adjoint) sweep of an unsteady run
// (src/adjoint/README.md, sec. 7).  The backward sweep asks for the time levels in decreasing
// order, n = N, N-1, ..., 1; each level is (w^n, w^{n-1}) with t^n and the step sizes.
//   StoreAll: the forward run writes every level's state to scratch files, one per rank (each
//             rank its own part, raw), and the sweep reads them back.
//   Revolve:  at most `snapshots` levels are kept in memory, placed by the binomial rule of
//             Griewank & Walther (2000, ACM TOMS 26): to reverse l steps from a level k with s
//             free snapshots, with t the least repetition number such that
//             beta(s, t) = (s + t)! / (s! t!) >= l, the next snapshot goes to
//             k + max(1, l - beta(s - 1, t), beta(s, t - 2)) (which recomputes the fewest steps,
//             t l - beta(s + 1, t - 1)); the missing levels are recomputed forward.
// Both report the number of recomputed steps, snapshots used and bytes written.
#pragma once

#include "karman/solver/unsteady_solver.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace karman::adjoint {

struct TimeLevel {
  long step = 0;
  double time = 0, dt = 0, dt_prev = 0; ///< t^n, dt_n (to t^n), dt_{n-1}
};

/// The steps of a forward run: the sizes given (a fixed step, or a recorded sequence replayed),
/// or, with `sizes` empty, the solver's step-size controller (time.dt auto,
/// solver/step_size.hpp) until t_end.
struct StepSchedule {
  std::vector<double> sizes;
  double t_end = 0;
  bool controlled() const { return sizes.empty(); }
};

/// The state of a level of a forward run that is given instead of solved (Trajectory::set_given).
using GivenStates = std::function<PetscErrorCode(const TimeLevel &level, Vec w)>;

class Trajectory {
public:
  virtual ~Trajectory();
  /// The forward's steps do not solve: each sets the solver's state to what given(level, w) puts
  /// into w (a fixed or replayed schedule only; a store-all trajectory, which never recomputes).
  void set_given(GivenStates given) { given_ = std::move(given); }
  /// Runs the forward from the solver's current state (level 0) with the steps of `schedule`;
  /// on_step(level) is called after each step with the solver at that level.  The sizes taken
  /// are recorded (step_sizes()); recomputations repeat them.  Collective.
  virtual PetscErrorCode
  forward(const StepSchedule &schedule,
          const std::function<PetscErrorCode(const TimeLevel &)> &on_step) = 0;
  /// w^n, w^{n-1} and the times of level n into w, w_prev.  Collective.
  virtual PetscErrorCode get(long n, Vec w, Vec w_prev, TimeLevel *level) = 0;
  long recomputed_steps() const { return recomputed_; }
  long snapshots_used() const { return max_snapshots_; }
  double bytes_written() const { return bytes_; }
  /// The sizes of the forward's steps, dt_1 ... dt_N.
  const std::vector<double> &step_sizes() const { return sizes_; }

protected:
  /// Step k + 1 of `schedule` (k steps taken): *done when it has none left, else the solver
  /// advanced (an error if the step does not converge) and *level the new level.  Collective.
  PetscErrorCode step(solver::UnsteadySolver &solver, const StepSchedule &schedule, long k,
                      bool *done, TimeLevel *level);
  /// The steps left after k (an estimate for a controlled schedule: the time left over the
  /// proposed step).
  long steps_left(const solver::UnsteadySolver &solver, const StepSchedule &schedule, long k) const;

  long recomputed_ = 0, max_snapshots_ = 0;
  double bytes_ = 0;
  std::vector<double> sizes_;
  GivenStates given_;
  Vec given_w_ = nullptr, given_prev_ = nullptr; ///< work vectors of a given step
};

/// Every level in `directory`, a scratch folder of the trajectory's own: each rank writes its part
/// of each state (w^0 ... w^N) to its own file, rank-R.bin, and reads it back (no gathering,
/// whatever the number of ranks; w^{n-1} of level n is the next level's w^n, so each state is
/// read once).  forward() empties the folder first (earlier or killed runs' files), the
/// destructor removes the files and the folder.
std::unique_ptr<Trajectory> make_store_all(solver::UnsteadySolver &solver, const mesh::Mesh &mesh,
                                           const std::string &directory);

/// At most `snapshots` levels in memory (binomial schedule), the rest recomputed.
std::unique_ptr<Trajectory> make_revolve(solver::UnsteadySolver &solver, long snapshots);

/// beta(s, t) = (s + t)! / (s! t!), saturating at LONG_MAX.
long binomial_beta(long s, long t);
/// The position (steps from the start) of the next snapshot when reversing l steps with s free
/// snapshots.
long binomial_split(long l, long s);

} // namespace karman::adjoint
