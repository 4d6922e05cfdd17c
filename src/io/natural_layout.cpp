// Partition-independent block layout (see include/karman/io/natural_layout.hpp).
#include "karman/io/natural_layout.hpp"

namespace karman::io {
namespace {

PetscInt block_begin(PetscInt n, PetscMPIInt size, PetscMPIInt r) {
  return static_cast<PetscInt>((static_cast<long long>(n) * r) / size);
}

} // namespace

NaturalLayout::~NaturalLayout() {
  if (sf_) PetscSFDestroy(&sf_);
}

PetscErrorCode NaturalLayout::create(MPI_Comm comm, PetscInt n_global,
                                     const std::vector<PetscInt> &owned_gids) {
  PetscFunctionBeginUser;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (sf_) PetscCall(PetscSFDestroy(&sf_));
  n_global_ = n_global;
  n_owned_ = static_cast<PetscInt>(owned_gids.size());
  start_ = block_begin(n_global, size, rank);
  size_ = block_begin(n_global, size, rank + 1) - start_;
  PetscSFNode *remote;
  PetscCall(PetscMalloc1(owned_gids.size(), &remote));
  for (std::size_t i = 0; i < owned_gids.size(); ++i) {
    const PetscInt g = owned_gids[i];
    PetscCheck(g >= 0 && g < n_global, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "gid %d out of range", (int)g);
    // owner rank of g: the largest r with block_begin(r) <= g
    PetscMPIInt r = static_cast<PetscMPIInt>((static_cast<long long>(g) * size) / n_global);
    while (r + 1 < size && block_begin(n_global, size, r + 1) <= g) ++r;
    while (r > 0 && block_begin(n_global, size, r) > g) --r;
    remote[i].rank = r;
    remote[i].index = g - block_begin(n_global, size, r);
  }
  PetscCall(PetscSFCreate(comm, &sf_));
  PetscCall(
      PetscSFSetGraph(sf_, size_, n_owned_, nullptr, PETSC_COPY_VALUES, remote, PETSC_OWN_POINTER));
  PetscCall(PetscSFSetUp(sf_));
  PetscFunctionReturn(0);
}

PetscErrorCode NaturalLayout::move(MPI_Datatype base, const void *src, void *dst, int ncomp,
                                   bool forward) const {
  PetscFunctionBeginUser;
  MPI_Datatype unit;
  PetscCallMPI(MPI_Type_contiguous(ncomp, base, &unit));
  PetscCallMPI(MPI_Type_commit(&unit));
  if (forward) { // leaves (owned) -> roots (block)
    PetscCall(PetscSFReduceBegin(sf_, unit, src, dst, MPI_REPLACE));
    PetscCall(PetscSFReduceEnd(sf_, unit, src, dst, MPI_REPLACE));
  } else {
    PetscCall(PetscSFBcastBegin(sf_, unit, src, dst, MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf_, unit, src, dst, MPI_REPLACE));
  }
  PetscCallMPI(MPI_Type_free(&unit));
  PetscFunctionReturn(0);
}

PetscErrorCode NaturalLayout::to_natural(const double *owned, double *block, int ncomp) const {
  PetscFunctionBeginUser;
  PetscCall(move(MPI_DOUBLE, owned, block, ncomp, true));
  PetscFunctionReturn(0);
}

PetscErrorCode NaturalLayout::to_natural(const PetscInt *owned, PetscInt *block, int ncomp) const {
  PetscFunctionBeginUser;
  PetscCall(move(MPIU_INT, owned, block, ncomp, true));
  PetscFunctionReturn(0);
}

PetscErrorCode NaturalLayout::from_natural(const double *block, double *owned, int ncomp) const {
  PetscFunctionBeginUser;
  PetscCall(move(MPI_DOUBLE, block, owned, ncomp, false));
  PetscFunctionReturn(0);
}

} // namespace karman::io
