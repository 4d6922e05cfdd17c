// MPI/PETSc helpers (see include/karman/core/parallel.hpp).
#include "karman/core/parallel.hpp"

#include <algorithm>

namespace karman {

PetscErrorCode broadcast_string(MPI_Comm comm, std::string *s, int root) {
  PetscFunctionBeginUser;
  int n = static_cast<int>(s->size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, root, comm));
  s->resize(n);
  if (n > 0) PetscCallMPI(MPI_Bcast(s->data(), n, MPI_CHAR, root, comm));
  PetscFunctionReturn(0);
}

PetscErrorCode node_memory_fits(MPI_Comm comm, double need, double reusable, double free_bytes,
                                double fraction, const char *limit_option, bool *fits,
                                double *needed_gib, double *available_gib) {
  PetscFunctionBeginUser;
  double mine[2] = {need, reusable}, on_node[2];
  MPI_Comm node;
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Allreduce(mine, on_node, 2, MPI_DOUBLE, MPI_SUM, node));
  PetscCallMPI(MPI_Comm_free(&node));
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  double available = free_bytes + on_node[1];
  PetscReal limit;
  PetscBool limited;
  PetscCall(PetscOptionsGetReal(nullptr, nullptr, limit_option, &limit, &limited));
  if (limited) available = std::min(available, limit * gib);
  // the tightest node: the largest need - fraction x available, with both figures
  struct {
    double value;
    int rank;
  } in{on_node[0] - fraction * available, 0}, out{};
  PetscCallMPI(MPI_Comm_rank(comm, &in.rank));
  PetscCallMPI(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  double worst[3] = {out.value, on_node[0], available};
  PetscCallMPI(MPI_Bcast(worst + 1, 2, MPI_DOUBLE, out.rank, comm));
  *fits = worst[0] <= 0;
  if (needed_gib) *needed_gib = worst[1] / gib;
  if (available_gib) *available_gib = worst[2] / gib;
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
