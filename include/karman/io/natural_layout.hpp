// Partition-independent data layout: items (cells or vertices) numbered by their index
// in the serial mesh ("gid") and split into contiguous blocks, rank r holding gids
// [r N / P, (r + 1) N / P).  A PetscSF moves data between the distributed (owned) order
// and this block order, so files written on N ranks read back on M ranks.
#pragma once

#include <petscsf.h>

#include <vector>

namespace karman::io {

class NaturalLayout {
public:
  NaturalLayout() = default;
  NaturalLayout(const NaturalLayout &) = delete;
  NaturalLayout &operator=(const NaturalLayout &) = delete;
  ~NaturalLayout();

  /// `owned_gids`: the gid of each locally owned item, in local order.  Collective.
  PetscErrorCode create(MPI_Comm comm, PetscInt n_global, const std::vector<PetscInt> &owned_gids);

  /// Owned-order data (`ncomp` per item) -> this rank's block of the serial order.
  PetscErrorCode to_natural(const double *owned, double *block, int ncomp) const;
  PetscErrorCode to_natural(const PetscInt *owned, PetscInt *block, int ncomp) const;
  /// Block of the serial order -> owned-order data.
  PetscErrorCode from_natural(const double *block, double *owned, int ncomp) const;

  PetscInt block_start() const { return start_; }
  PetscInt block_size() const { return size_; }
  PetscInt n_global() const { return n_global_; }
  PetscInt n_owned() const { return n_owned_; }

private:
  PetscErrorCode move(MPI_Datatype base, const void *src, void *dst, int ncomp, bool forward) const;
  PetscSF sf_ = nullptr;
  PetscInt start_ = 0, size_ = 0, n_global_ = 0, n_owned_ = 0;
};

} // namespace karman::io
