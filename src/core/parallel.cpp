// MPI/PETSc helpers (see include/karman/core/parallel.hpp).
#include "karman/core/parallel.hpp"

namespace karman {

PetscErrorCode broadcast_string(MPI_Comm comm, std::string *s, int root) {
  PetscFunctionBeginUser;
  int n = static_cast<int>(s->size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, root, comm));
  s->resize(n);
  if (n > 0) PetscCallMPI(MPI_Bcast(s->data(), n, MPI_CHAR, root, comm));
  PetscFunctionReturn(0);
}

PetscErrorCode ghosted_local_values(Vec v, std::vector<double> *values) {
  PetscFunctionBeginUser;
  PetscCall(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
  Vec local;
  PetscInt n;
  const PetscScalar *a;
  PetscCall(VecGhostGetLocalForm(v, &local));
  PetscCall(VecGetLocalSize(local, &n));
  PetscCall(VecGetArrayRead(local, &a));
  values->assign(a, a + n);
  PetscCall(VecRestoreArrayRead(local, &a));
  PetscCall(VecGhostRestoreLocalForm(v, &local));
  PetscFunctionReturn(0);
}

} // namespace karman
