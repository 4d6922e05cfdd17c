// Forward trajectories for the unsteady adjoint (see include/karman/adjoint/trajectory.hpp).
#include "karman/adjoint/trajectory.hpp"

#include "karman/io/checkpoint.hpp"

#include <climits>
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
  const long rest = binomial_beta(s - 1, t);
  return std::max(1L, l - (rest == LONG_MAX ? 0 : rest));
}

namespace {

class StoreAll : public Trajectory {
public:
  StoreAll(solver::UnsteadySolver &solver, const mesh::Mesh &mesh, std::string dir,
           std::string mesh_hash, std::string case_hash, int nv)
      : solver_(solver), mesh_(mesh), dir_(std::move(dir)), mesh_hash_(std::move(mesh_hash)),
        case_hash_(std::move(case_hash)), nv_(nv) {}
  // the trajectory is scratch: its file goes with it (a killed run's is removed by the next)
  ~StoreAll() override { remove_own_file(); }

  PetscErrorCode forward(long steps, double dt,
                         const std::function<PetscErrorCode(const TimeLevel &)> &on_step) override {
    PetscFunctionBeginUser;
    // the folder is the trajectory's own: empty it (earlier runs' files, a killed run's partial
    // one), so that the disk holds one trajectory at most
    remove_own_file();
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(mesh_.comm, &rank));
    if (rank == 0) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
    PetscCallMPI(MPI_Barrier(mesh_.comm));
    io::CheckpointWriter writer;
    PetscCall(writer.open(mesh_, dir_, mesh_hash_, case_hash_, nv_));
    file_ = writer.path();
    levels_.assign(1, TimeLevel{solver_.step(), solver_.time(), solver_.previous_dt(), 0.0});
    first_step_ = solver_.step();
    for (long k = 0; k < steps; ++k) {
      solver::StepReport r;
      PetscCall(solver_.advance(dt, &r));
      PetscCheck(r.converged, mesh_.comm, PETSC_ERR_NOT_CONVERGED,
                 "forward step %ld did not converge (%s)", r.step, r.reason.c_str());
      const TimeLevel level{solver_.step(), solver_.time(), dt, levels_.back().dt};
      levels_.push_back(level);
      double bytes;
      PetscCall(writer.write(level.step, level.time, level.dt, level.dt_prev, solver_.state(),
                             solver_.previous_state(), nullptr, &bytes));
      bytes_ += bytes;
      PetscCall(on_step(level));
    }
    PetscCall(writer.close());
    max_snapshots_ = steps;
    PetscFunctionReturn(0);
  }

  PetscErrorCode get(long n, Vec w, Vec w_prev, TimeLevel *level) override {
    PetscFunctionBeginUser;
    const long k = n - first_step_;
    PetscCheck(k >= 1 && k < static_cast<long>(levels_.size()), mesh_.comm,
               PETSC_ERR_ARG_OUTOFRANGE, "trajectory: no level %ld", n);
    io::CheckpointRecord rec;
    rec.file = file_;
    rec.index = k - 1;
    PetscCall(io::read_checkpoint(mesh_, rec, nv_, w, w_prev));
    *level = levels_[k];
    PetscFunctionReturn(0);
  }

private:
  void remove_own_file() {
    int rank = 0;
    MPI_Comm_rank(mesh_.comm, &rank);
    std::error_code ec;
    if (rank == 0 && !file_.empty()) {
      std::filesystem::remove(file_, ec);
      std::filesystem::remove(dir_, ec); // only if empty
    }
    file_.clear();
  }

  solver::UnsteadySolver &solver_;
  const mesh::Mesh &mesh_;
  std::string dir_, mesh_hash_, case_hash_, file_;
  int nv_;
  long first_step_ = 0;
  std::vector<TimeLevel> levels_;
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

  PetscErrorCode forward(long steps, double dt,
                         const std::function<PetscErrorCode(const TimeLevel &)> &on_step) override {
    PetscFunctionBeginUser;
    dt_ = dt;
    first_ = solver_.step();
    last_ = first_ + steps;
    PetscCall(keep(TimeLevel{solver_.step(), solver_.time(), solver_.previous_dt(),
                             0.0})); // level 0, not counted
    // first sweep: snapshots at the binomial positions
    long next = first_ + binomial_split(steps, snapshots_);
    for (long k = 0; k < steps; ++k) {
      solver::StepReport r;
      const double dt_prev = solver_.previous_dt();
      PetscCall(solver_.advance(dt, &r));
      PetscCheck(r.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
                 "forward step %ld did not converge (%s)", r.step, r.reason.c_str());
      const TimeLevel level{solver_.step(), solver_.time(), dt, dt_prev};
      if (level.step == next && level.step < last_ && used() < snapshots_) {
        PetscCall(keep(level));
        next = level.step + binomial_split(last_ - level.step, snapshots_ - used());
      }
      PetscCall(on_step(level));
    }
    final_ = TimeLevel{solver_.step(), solver_.time(), dt, solver_.previous_dt()};
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
        solver::StepReport r;
        const double dt_prev = solver_.previous_dt();
        PetscCall(solver_.advance(dt_, &r));
        PetscCheck(r.converged, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED,
                   "recomputed step %ld did not converge (%s)", r.step, r.reason.c_str());
        ++recomputed_;
        level_m = TimeLevel{solver_.step(), solver_.time(), dt_, dt_prev};
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
  double dt_ = 0;
  long first_ = 0, last_ = 0;
  TimeLevel final_;
  std::map<long, Snapshot> store_;
};

} // namespace

std::unique_ptr<Trajectory> make_store_all(solver::UnsteadySolver &solver, const mesh::Mesh &mesh,
                                           const std::string &directory,
                                           const std::string &mesh_hash,
                                           const std::string &case_hash, int nv) {
  return std::make_unique<StoreAll>(solver, mesh, directory, mesh_hash, case_hash, nv);
}

std::unique_ptr<Trajectory> make_revolve(solver::UnsteadySolver &solver, long snapshots) {
  return std::make_unique<Revolve>(solver, snapshots);
}

} // namespace karman::adjoint
