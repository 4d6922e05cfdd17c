// J^T products of a block Jacobian (src/solver/block_transpose.cpp): for BAIJ matrices of block
// sizes 3 and 4 with a random sparsity pattern (off-process blocks on 2 ranks), the shell's
// product equals PETSc's MatMultTranspose, its transposed product MatMult, its diagonal J's; other
// block sizes get PETSc's virtual transpose (the same products).
#include "karman/solver/block_transpose.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace karman;

namespace {

// A random BAIJ matrix of block size bs with nb block rows per rank: the diagonal block and 3
// random blocks per block row, some in other ranks' columns.
Mat random_baij(PetscInt bs, PetscInt nb) {
  int rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  Mat J;
  MatCreateBAIJ(PETSC_COMM_WORLD, bs, bs * nb, bs * nb, PETSC_DETERMINE, PETSC_DETERMINE, 4,
                nullptr, 3, nullptr, &J);
  MatSetOption(J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE);
  std::mt19937 gen(17 + rank);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<PetscInt> col(0, size * nb - 1);
  std::vector<PetscScalar> block(bs * bs);
  for (PetscInt i = rank * nb; i < (rank + 1) * nb; ++i) {
    std::vector<PetscInt> cols = {i, col(gen), col(gen), col(gen)};
    for (PetscInt j : cols) {
      for (auto &b : block) b = u(gen);
      MatSetValuesBlocked(J, 1, &i, 1, &j, block.data(), ADD_VALUES);
    }
  }
  MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY);
  return J;
}

} // namespace

TEST_CASE("block transpose: products equal PETSc's for block sizes 2, 3, 4", "[solver][mpi]") {
  for (PetscInt bs : {2, 3, 4}) {
    CAPTURE(bs);
    Mat J = random_baij(bs, 7), JT;
    REQUIRE(solver::create_block_transpose(J, &JT) == 0);
    MatType type;
    REQUIRE(MatGetType(JT, &type) == 0);
    CHECK(std::string(type) == (bs == 2 ? MATTRANSPOSEVIRTUAL : MATSHELL));
    Vec x, y, ref, d, dref;
    REQUIRE(MatCreateVecs(J, &x, &y) == 0);
    REQUIRE(VecDuplicate(x, &ref) == 0);
    PetscRandom rnd;
    REQUIRE(PetscRandomCreate(PETSC_COMM_WORLD, &rnd) == 0);
    REQUIRE(VecSetRandom(y, rnd) == 0);
    REQUIRE(MatMult(JT, y, x) == 0);
    REQUIRE(MatMultTranspose(J, y, ref) == 0);
    CHECK(test::relative_difference(x, ref) < 1e-14);
    // J is read at every product: a change of its values shows at the next one
    REQUIRE(MatScale(J, -2.0) == 0);
    REQUIRE(MatMult(JT, y, x) == 0);
    REQUIRE(MatMultTranspose(J, y, ref) == 0);
    CHECK(test::relative_difference(x, ref) < 1e-14);
    // the shell's transposed product is J's product
    REQUIRE(VecSetRandom(x, rnd) == 0);
    REQUIRE(VecDuplicate(y, &d) == 0);
    REQUIRE(MatMultTranspose(JT, x, y) == 0);
    REQUIRE(MatMult(J, x, d) == 0);
    CHECK(test::relative_difference(y, d) < 1e-14);
    REQUIRE(VecDuplicate(y, &dref) == 0);
    REQUIRE(MatGetDiagonal(JT, d) == 0);
    REQUIRE(MatGetDiagonal(J, dref) == 0);
    CHECK(test::relative_difference(d, dref) == 0);
    for (Vec *v : {&x, &y, &ref, &d, &dref}) VecDestroy(v);
    PetscRandomDestroy(&rnd);
    MatDestroy(&JT);
    MatDestroy(&J);
  }
}
