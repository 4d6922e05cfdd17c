// Forward trajectories for the unsteady adjoint (see include/karman/adjoint/trajectory.hpp).
#include "karman/adjoint/trajectory.hpp"

#include "karman/solver/step_size.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace karman::adjoint {

long binomial_beta(long s, long t) {
  // (s + t choose s), computed incrementally; saturate instead of overflowing
  long double b = 1;
  for (long i = 1; i <= s; ++i) {
    b = b * (t + i) / i;
    if (b > static_cast<long double>(LONG_MAX / 2)) return LONG_MAX;
  }
  return static_cast<long>(b + 0.5);
}

long binomial_split(long l, long s) {
  if (l <= 1 || s <= 0) return l;
  long t = 0;
  while (binomial_beta(s, t) < l) ++t;
  // the remaining l - k steps must be reversible with s - 1 snapshots in t sweeps
  // (k >= l - beta(s - 1, t)), the first k with s snapshots in t - 1 sweeps; k >= beta(s, t - 2)
  // keeps the recomputation at Griewank & Walther's minimum t l - beta(s + 1, t - 1) (without it,
  // e.g. l = 11, s = 3: 21 steps instead of 18)
  const long rest = binomial_beta(s - 1, t);
  const long low = t >= 2 ? binomial_beta(s, t - 2) : 1;
  return std::max({1L, l - (rest == LONG_MAX ? 0 : rest), low});
}

Trajectory::~Trajectory() {
  if (given_w_) VecDestroy(&given_w_);
  if (given_prev_) VecDestroy(&given_prev_);
}

PetscErrorCode Trajectory::step(solver::UnsteadySolver &solver, const StepSchedule &schedule,
                                long k, bool *done, TimeLevel *level) {
  PetscFunctionBeginUser;
  if (k == 0) sizes_.clear();
  const double dt_prev = solver.previous_dt();
  if (given_) { // the level's state as given: w^{n+1} from given_, w^n the current one
    PetscCheck(!schedule.controlled(),
               PetscObjectComm(reinterpret_cast<PetscObject>(solver.state())), PETSC_ERR_SUP,
               "given states need a fixed or replayed step sequence");
    *done = k >= static_cast<long>(schedule.sizes.size());
    if (*done) PetscFunctionReturn(0);
    const double dt = schedule.sizes[k];
    *level = TimeLevel{solver.step() + 1, solver.time() + dt, dt, dt_prev};
    if (!given_w_) PetscCall(VecDuplicate(solver.state(), &given_w_));
    if (!given_prev_) PetscCall(VecDuplicate(solver.state(), &given_prev_));
    PetscCall(VecCopy(solver.state(), given_prev_));
    PetscCall(given_(*level, given_w_));
    PetscCall(solver.set_state(given_w_, given_prev_, level->step, level->time, dt));
    sizes_.push_back(dt);
    PetscFunctionReturn(0);
  }
  solver::StepReport r;
  if (schedule.controlled()) {
    *done = solver::reached_end(solver, schedule.t_end, 0.0);
    if (*done) PetscFunctionReturn(0);
    PetscCall(solver::advance_controlled(solver, schedule.t_end, &r));
  } else {
    *done = k >= static_cast<long>(schedule.sizes.size());
    if (*done) PetscFunctionReturn(0);
    PetscCall(solver.advance(schedule.sizes[k], &r));
  }
  PetscCheck(r.converged, PetscObjectComm(reinterpret_cast<PetscObject>(solver.state())),
             PETSC_ERR_NOT_CONVERGED, "forward step %ld did not converge (%s)", r.step,
             r.reason.c_str());
  sizes_.push_back(r.dt);
  *level = TimeLevel{solver.step(), solver.time(), r.dt, dt_prev};
  PetscFunctionReturn(0);
}

long Trajectory::steps_left(const solver::UnsteadySolver &solver, const StepSchedule &schedule,
                            long k) const {
  if (!schedule.controlled()) return static_cast<long>(schedule.sizes.size()) - k;
  const double left = schedule.t_end - solver.time(), dt = solver.step_control()->proposal();
  return left > 1e-9 * dt ? static_cast<long>(std::ceil(left / dt - 1e-9)) : 0;
}

namespace {

class StoreAll : public Trajectory {
public:
  StoreAll(solver::UnsteadySolver &solver, const mesh::Mesh &mesh, std::string dir)
      : solver_(solver), mesh_(mesh), dir_(std::move(dir)) {}
  // the trajectory is scratch: its files go with it (a killed run's are removed by the next)
  ~StoreAll() override {
    close_file();
    remove_own_file();
    if (cached_) VecDestroy(&cached_);
  }

  PetscErrorCode forward(const StepSchedule &schedule,
                         const std::function<PetscErrorCode(const TimeLevel &)> &on_step) override {
    PetscFunctionBeginUser;
    // the folder is the trajectory's own: empty it (earlier runs' files, a killed run's partial
    // ones, perhaps of another number of ranks), so that the disk holds one trajectory at most
    close_file();
    remove_own_file();
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(mesh_.comm, &rank));
    std::error_code ec;
    if (rank == 0) std::filesystem::remove_all(dir_, ec);
    PetscCallMPI(MPI_Barrier(mesh_.comm));
    // every rank creates the folder (it may be on a disk of the rank's own node)
    std::filesystem::create_directories(dir_, ec);
    file_ = dir_ + "/rank-" + std::to_string(rank) + ".bin";
    fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    const int error = fd_ < 0 ? errno : 0;
    int failed = fd_ < 0, any = 0;
    PetscCallMPI(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, mesh_.comm));
    PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN,
               "store-all trajectory: cannot create %s (%s)", file_.c_str(), std::strerror(error));
    PetscCheck(!any, mesh_.comm, PETSC_ERR_FILE_OPEN,
               "store-all trajectory: another rank cannot create its file in %s", dir_.c_str());
    PetscInt local;
    PetscCall(VecGetLocalSize(solver_.state(), &local));
    record_ = static_cast<std::size_t>(local) * sizeof(PetscScalar);
    double global = static_cast<double>(record_);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &global, 1, MPI_DOUBLE, MPI_SUM, mesh_.comm));
    levels_.assign(1, TimeLevel{solver_.step(), solver_.time(), solver_.previous_dt(), 0.0});
    first_step_ = solver_.step();
    cached_level_ = -1;
    // level 0 too: it is the first level's w^{n-1}
    PetscCall(write(0, solver_.state()));
    bytes_ += global;
    for (long k = 0;; ++k) {
      bool done;
      TimeLevel level;
      PetscCall(step(solver_, schedule, k, &done, &level));
      if (done) break;
      levels_.push_back(level);
      PetscCall(write(k + 1, solver_.state()));
      bytes_ += global;
      PetscCall(on_step(level));
    }
    max_snapshots_ = static_cast<long>(levels_.size()) - 1;
    PetscFunctionReturn(0);
  }

  PetscErrorCode get(long n, Vec w, Vec w_prev, TimeLevel *level) override {
    PetscFunctionBeginUser;
    const long k = n - first_step_;
    PetscCheck(k >= 1 && k < static_cast<long>(levels_.size()), mesh_.comm,
               PETSC_ERR_ARG_OUTOFRANGE, "trajectory: no level %ld", n);
    // the sweep asks for n = N, N-1, ...: level n's w^{n-1} is the next level's w^n, kept
    if (k == cached_level_)
      PetscCall(VecCopy(cached_, w));
    else
      PetscCall(read(k, w));
    PetscCall(read(k - 1, w_prev));
    if (!cached_) PetscCall(VecDuplicate(w_prev, &cached_));
    PetscCall(VecCopy(w_prev, cached_));
    cached_level_ = k - 1;
    *level = levels_[k];
    PetscFunctionReturn(0);
  }

private:
  // Record k (the level first_step_ + k) of this rank's file: the rank's part of the state.
  PetscErrorCode write(long k, Vec v) {
    PetscFunctionBeginUser;
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(v, &a));
    const int error = transfer(true, k, const_cast<PetscScalar *>(a));
    PetscCall(VecRestoreArrayRead(v, &a));
    PetscCheck(error == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE,
               "store-all trajectory: writing level %ld to %s failed (%s)", first_step_ + k,
               file_.c_str(), std::strerror(error));
    PetscFunctionReturn(0);
  }
  PetscErrorCode read(long k, Vec v) {
    PetscFunctionBeginUser;
    PetscScalar *a;
    PetscCall(VecGetArray(v, &a));
    const int error = transfer(false, k, a);
    PetscCall(VecRestoreArray(v, &a));
    PetscCheck(error == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ,
               "store-all trajectory: reading level %ld from %s failed (%s)", first_step_ + k,
               file_.c_str(), error > 0 ? std::strerror(error) : "the file is shorter");
    PetscFunctionReturn(0);
  }
  // pwrite / pread of one record, repeated until complete: 0, errno, or -1 at end of file
  int transfer(bool out, long k, PetscScalar *a) const {
    char *p = reinterpret_cast<char *>(a);
    std::size_t done = 0;
    const off_t offset = static_cast<off_t>(k) * static_cast<off_t>(record_);
    while (done < record_) {
      const ssize_t n = out ? ::pwrite(fd_, p + done, record_ - done, offset + done)
                            : ::pread(fd_, p + done, record_ - done, offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      if (n == 0) return out ? EIO : -1;
      done += static_cast<std::size_t>(n);
    }
    return 0;
  }
  void close_file() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Each rank removes its own file, then tries the folder: it goes with the last file (no
  // collective call, so that this also runs on a rank that unwinds an error alone)
  void remove_own_file() {
    std::error_code ec;
    if (!file_.empty()) {
      std::filesystem::remove(file_, ec);
      std::filesystem::remove(dir_, ec); // only if empty
    }
    file_.clear();
  }

  solver::UnsteadySolver &solver_;
  const mesh::Mesh &mesh_;
  std::string dir_, file_;
  int fd_ = -1;
  std::size_t record_ = 0; ///< bytes per level in this rank's file
  long first_step_ = 0;
  std::vector<TimeLevel> levels_;
  Vec cached_ = nullptr; ///< the state of level first_step_ + cached_level_
  long cached_level_ = -1;
};

class Revolve : public Trajectory {
public:
  Revolve(solver::UnsteadySolver &solver, long snapshots)
      : solver_(solver), snapshots_(snapshots) {}
  ~Revolve() override {
    for (auto &[k, s] : store_) {
      VecDestroy(&s.w);
      VecDestroy(&s.w_prev);
    }
  }

  PetscErrorCode forward(const StepSchedule &schedule,
                         const std::function<PetscErrorCode(const TimeLevel &)> &on_step) override {
    PetscFunctionBeginUser;
    first_ = solver_.step();
    PetscCall(keep(TimeLevel{solver_.step(), solver_.time(), solver_.previous_dt(),
                             0.0})); // level 0, not counted
    // first sweep: snapshots at the binomial positions (of the steps left as far as they are
    // known: a controlled schedule's count is estimated from the proposed step)
    long next = first_ + binomial_split(steps_left(solver_, schedule, 0), snapshots_);
    for (long k = 0;; ++k) {
      bool done;
      TimeLevel level;
      PetscCall(step(solver_, schedule, k, &done, &level));
      if (done) break;
      const long left = steps_left(solver_, schedule, k + 1);
      if (level.step == next && left > 0 && used() < snapshots_) {
        PetscCall(keep(level));
        next = level.step + binomial_split(left, snapshots_ - used());
      }
      PetscCall(on_step(level));
      final_ = level;
    }
    last_ = solver_.step();
    PetscFunctionReturn(0);
  }

  PetscErrorCode get(long n, Vec w, Vec w_prev, TimeLevel *level) override {
    PetscFunctionBeginUser;
    if (n == last_ && solver_.step() == last_) { // the forward just ended there
      PetscCall(VecCopy(solver_.state(), w));
      PetscCall(VecCopy(solver_.previous_state(), w_prev));
      *level = final_;
      PetscFunctionReturn(0);
    }
    while (true) {
      auto it = store_.upper_bound(n);
      --it; // the latest stored level <= n (level 0 is always there)
      const long k = it->first;
      if (k == n) {
        PetscCall(VecCopy(it->second.w, w));
        PetscCall(VecCopy(it->second.w_prev, w_prev));
        *level = it->second.level;
        break;
      }
      const long free = snapshots_ - used();
      const long m = (free == 0 || n - k == 1) ? n : k + binomial_split(n - k, free);
      PetscCall(solver_.set_state(it->second.w, it->second.w_prev, k, it->second.level.time,
                                  it->second.level.dt));
      solver_.mark_restart_point();
      TimeLevel level_m;
      for (long j = k; j < m; ++j) {
        // the step the forward took from level j
        const double dt = sizes_[static_cast<std::size_t>(j - first_)];
        solver::StepReport r;
        const double dt_prev = solver_.previous_dt();
        PetscCall(solver_.advance(dt, &r));
        PetscCheck(r.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
                   "recomputed step %ld did not converge (%s)", r.step, r.reason.c_str());
        ++recomputed_;
        level_m = TimeLevel{solver_.step(), solver_.time(), dt, dt_prev};
      }
      if (m == n) {
        PetscCall(VecCopy(solver_.state(), w));
        PetscCall(VecCopy(solver_.previous_state(), w_prev));
        *level = level_m;
        break;
      }
      PetscCall(keep(level_m));
    }
    // levels >= n are not needed again
    for (auto it = store_.lower_bound(n); it != store_.end();) {
      if (it->first == first_) {
        ++it;
        continue;
      }
      VecDestroy(&it->second.w);
      VecDestroy(&it->second.w_prev);
      it = store_.erase(it);
    }
    PetscFunctionReturn(0);
  }

private:
  struct Snapshot {
    Vec w = nullptr, w_prev = nullptr;
    TimeLevel level;
  };
  long used() const { return static_cast<long>(store_.size()) - 1; }
  PetscErrorCode keep(const TimeLevel &level) {
    PetscFunctionBeginUser;
    Snapshot s;
    s.level = level;
    PetscCall(VecDuplicate(solver_.state(), &s.w));
    PetscCall(VecDuplicate(solver_.state(), &s.w_prev));
    PetscCall(VecCopy(solver_.state(), s.w));
    PetscCall(VecCopy(solver_.previous_state(), s.w_prev));
    store_[level.step] = s;
    max_snapshots_ = std::max(max_snapshots_, used());
    PetscFunctionReturn(0);
  }
  solver::UnsteadySolver &solver_;
  long snapshots_;
  long first_ = 0, last_ = 0;
  TimeLevel final_;
  std::map<long, Snapshot> store_;
};

} // namespace

std::unique_ptr<Trajectory> make_store_all(solver::UnsteadySolver &solver, const mesh::Mesh &mesh,
                                           const std::string &directory) {
  return std::make_unique<StoreAll>(solver, mesh, directory);
}

std::unique_ptr<Trajectory> make_revolve(solver::UnsteadySolver &solver, long snapshots) {
  return std::make_unique<Revolve>(solver, snapshots);
}

} // namespace karman::adjoint
