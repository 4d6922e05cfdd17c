// MPI helpers (src/core/parallel.cpp, include/karman/core/parallel.hpp): a string broadcast from
// any root (also empty), a gather on rank 0 in rank order with unequal counts, and the local form
// of a ghosted vector (owned values then the ghosts' owners' values).
#include "karman/core/parallel.hpp"

#include <catch2/catch.hpp>

using namespace karman;

TEST_CASE("parallel: broadcast a string, gather to rank 0", "[core][mpi]") {
  int rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  for (int root = 0; root < size; ++root) {
    std::string s = rank == root ? "error on rank " + std::to_string(root) : "something else";
    REQUIRE(broadcast_string(PETSC_COMM_WORLD, &s, root) == 0);
    CHECK(s == "error on rank " + std::to_string(root));
  }
  std::string empty = rank == 0 ? "" : "not empty";
  REQUIRE(broadcast_string(PETSC_COMM_WORLD, &empty) == 0);
  CHECK(empty.empty());
  // rank r contributes r + 1 values 100 r + i
  std::vector<double> mine, all = {-1};
  for (int i = 0; i <= rank; ++i) mine.push_back(100.0 * rank + i);
  REQUIRE(gather_to_root(PETSC_COMM_WORLD, mine, MPI_DOUBLE, &all) == 0);
  std::vector<double> expected;
  for (int r = 0; r < size; ++r)
    for (int i = 0; i <= r; ++i) expected.push_back(100.0 * r + i);
  if (rank == 0)
    CHECK(all == expected);
  else
    CHECK(all == std::vector<double>{-1}); // untouched
}

TEST_CASE("parallel: local form of a ghosted vector", "[core][mpi]") {
  int rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  // 3 owned entries per rank, valued by their global index; ghosts: the first entry of the next
  // rank (cyclic)
  const PetscInt n = 3, ghost = ((rank + 1) % size) * n;
  Vec v;
  REQUIRE(VecCreateGhost(PETSC_COMM_WORLD, n, PETSC_DECIDE, 1, &ghost, &v) == 0);
  for (PetscInt i = 0; i < n; ++i)
    REQUIRE(VecSetValue(v, rank * n + i, 10.0 * (rank * n + i), INSERT_VALUES) == 0);
  REQUIRE(VecAssemblyBegin(v) == 0);
  REQUIRE(VecAssemblyEnd(v) == 0);
  std::vector<double> local;
  REQUIRE(ghosted_local_values(v, &local) == 0);
  const std::vector<double> expected = {10.0 * rank * n, 10.0 * (rank * n + 1),
                                        10.0 * (rank * n + 2), 10.0 * ghost};
  CHECK(local == expected);
  VecDestroy(&v);
}
