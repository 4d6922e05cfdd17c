// MPI/PETSc helpers (see include/karman/core/parallel.hpp).
#include "karman/core/parallel.hpp"

#include <algorithm>
#include <unistd.h>

namespace karman {

PetscErrorCode broadcast_string(MPI_Comm comm, std::string *s, int root) {
  PetscFunctionBeginUser;
  int n = static_cast<int>(s->size());
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, root, comm));
  s->resize(n);
  if (n > 0) PetscCallMPI(MPI_Bcast(s->data(), n, MPI_CHAR, root, comm));
  PetscFunctionReturn(0);
}

PetscErrorCode max_with_data(MPI_Comm comm, double value, const double *data, int n,
                             double *largest, double *out) {
  PetscFunctionBeginUser;
  struct {
    double value;
    int rank;
  } in{value, 0}, top{};
  PetscCallMPI(MPI_Comm_rank(comm, &in.rank));
  PetscCallMPI(MPI_Allreduce(&in, &top, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  if (out != data) std::copy(data, data + n, out);
  PetscCallMPI(MPI_Bcast(out, n, MPI_DOUBLE, top.rank, comm));
  *largest = top.value;
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
  double excess, worst[2] = {on_node[0], available};
  PetscCall(max_with_data(comm, on_node[0] - fraction * available, worst, 2, &excess, worst));
  *fits = excess <= 0;
  if (needed_gib) *needed_gib = worst[0] / gib;
  if (available_gib) *available_gib = worst[1] / gib;
  PetscFunctionReturn(0);
}

PetscErrorCode lu_factors_fit(MPI_Comm comm, double bytes, bool *fits, double *needed_gib,
                              double *available_gib) {
  PetscFunctionBeginUser;
  const double free_bytes =
      static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  PetscCall(node_memory_fits(comm, bytes, 0, free_bytes, 0.8, "-lu_fallback_memory", fits,
                             needed_gib, available_gib));
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
