// The partition-independent block layout (src/io/natural_layout.cpp): items owned in any order on
// any rank go to rank r's block [r N / P, (r + 1) N / P) of the serial order and back unchanged,
// with several components and integer data; a gid out of range is refused.
#include "karman/core/error.hpp"
#include "karman/io/natural_layout.hpp"

#include <catch2/catch.hpp>

using namespace karman;

TEST_CASE("natural layout: owned order to serial blocks and back", "[io][mpi]") {
  int rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const PetscInt N = 23;
  // rank r owns the gids g with (7 g + 3) mod P == r, in decreasing order (a scrambled
  // partition, as a mesh distribution gives)
  std::vector<PetscInt> gids;
  for (PetscInt g = N - 1; g >= 0; --g)
    if ((7 * g + 3) % size == rank) gids.push_back(g);
  io::NaturalLayout layout;
  REQUIRE(layout.create(PETSC_COMM_WORLD, N, gids) == 0);
  CHECK(layout.n_global() == N);
  CHECK(layout.n_owned() == static_cast<PetscInt>(gids.size()));
  CHECK(layout.block_start() == N * rank / size);
  CHECK(layout.block_size() == N * (rank + 1) / size - N * rank / size);
  const int ncomp = 3;
  std::vector<double> owned;
  std::vector<PetscInt> owned_int;
  for (PetscInt g : gids)
    for (int k = 0; k < ncomp; ++k) owned.push_back(g + 0.25 * k), owned_int.push_back(10 * g + k);
  std::vector<double> block(ncomp * layout.block_size(), -1);
  std::vector<PetscInt> block_int(ncomp * layout.block_size(), -1);
  REQUIRE(layout.to_natural(owned.data(), block.data(), ncomp) == 0);
  REQUIRE(layout.to_natural(owned_int.data(), block_int.data(), ncomp) == 0);
  for (PetscInt i = 0; i < layout.block_size(); ++i)
    for (int k = 0; k < ncomp; ++k) {
      const PetscInt g = layout.block_start() + i;
      CHECK(block[ncomp * i + k] == g + 0.25 * k);
      CHECK(block_int[ncomp * i + k] == 10 * g + k);
    }
  std::vector<double> back(owned.size(), -1);
  REQUIRE(layout.from_natural(block.data(), back.data(), ncomp) == 0);
  CHECK(back == owned);
}

TEST_CASE("natural layout: a gid out of range is refused", "[io]") {
  io::NaturalLayout layout;
  clear_error();
  CHECK(layout.create(PETSC_COMM_SELF, 4, {0, 4}) != 0);
  CHECK(last_error_message() == "gid 4 out of range");
  clear_error();
}
