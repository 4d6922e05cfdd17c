// HDF5 checkpoints: round trip on P and on 1 rank, checksums.
#include "karman/core/error.hpp"
#include "karman/io/checkpoint.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/solver/unsteady_solver.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

using namespace karman;

TEST_CASE("checkpoints: written on P ranks, read on P and on 1 rank, checksummed",
          "[unsteady][io][mpi]") {
  mesh::Mesh m, serial;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"},
             &serial);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = test::work_dir("checkpoints-np" + std::to_string(size));
  std::string hash;
  REQUIRE(io::mesh_hash(m, m.coordinates, &hash) == 0);
  const physics::EquationSet eq(2, physics::navier_stokes_fields(2));
  const int nv = eq.nv();
  auto value = [](PetscInt gid, int k, long step) { return 0.5 * gid + k + 100.0 * step; };
  auto make = [&](const mesh::Mesh &mm, long step, Vec *v) {
    REQUIRE(VecCreateMPI(mm.comm, mm.n_owned_cells * nv, PETSC_DETERMINE, v) == 0);
    PetscScalar *a;
    REQUIRE(VecGetArray(*v, &a) == 0);
    for (PetscInt c = 0; c < mm.n_owned_cells; ++c)
      for (int k = 0; k < nv; ++k) a[c * nv + k] = value(mm.cell_gid[c], k, step);
    REQUIRE(VecRestoreArray(*v, &a) == 0);
  };
  {
    io::CheckpointWriter ck;
    REQUIRE(ck.open(m, dir, hash, "case-1", eq, "solver.upwind: 1\n") == 0);
    for (long step = 1; step <= 3; ++step) {
      Vec w, wp;
      make(m, step, &w);
      make(m, step - 1, &wp);
      REQUIRE(ck.write(step, 0.1 * step, 0.1, 0.1, w, wp, nullptr, nullptr) == 0);
      VecDestroy(&w);
      VecDestroy(&wp);
    }
  }
  for (const mesh::Mesh *mm : {&m, &serial}) {
    io::CheckpointRecord rec;
    bool found = false;
    REQUIRE(io::find_latest_checkpoint(mm->comm, dir, hash, eq, mm->n_global_cells, &rec, &found) ==
            0);
    REQUIRE(found);
    REQUIRE(rec.case_hash == "case-1"); // the caller compares the case
    REQUIRE(rec.case_keys == "solver.upwind: 1\n");
    REQUIRE(rec.step == 3);
    REQUIRE(rec.time == Approx(0.3));
    Vec w, wp;
    REQUIRE(VecCreateMPI(mm->comm, mm->n_owned_cells * nv, PETSC_DETERMINE, &w) == 0);
    REQUIRE(VecDuplicate(w, &wp) == 0);
    REQUIRE(io::read_checkpoint(*mm, rec, eq, w, wp) == 0);
    const PetscScalar *a, *b;
    REQUIRE(VecGetArrayRead(w, &a) == 0);
    REQUIRE(VecGetArrayRead(wp, &b) == 0);
    for (PetscInt c = 0; c < mm->n_owned_cells; ++c)
      for (int k = 0; k < nv; ++k) {
        REQUIRE(a[c * nv + k] == value(mm->cell_gid[c], k, 3));
        REQUIRE(b[c * nv + k] == value(mm->cell_gid[c], k, 2));
      }
    VecRestoreArrayRead(w, &a);
    VecRestoreArrayRead(wp, &b);
    VecDestroy(&w);
    VecDestroy(&wp);
  }
  // another mesh: a clear error
  io::CheckpointRecord rec;
  bool found;
  clear_error();
  REQUIRE(io::find_latest_checkpoint(PETSC_COMM_WORLD, dir, "0123", eq, m.n_global_cells, &rec,
                                     &found) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("checkpoint of another mesh"));
  // other fields (the flow with a scalar): a clear error naming both
  auto fields = physics::navier_stokes_fields(2);
  fields.push_back({"scalar", 1, true, 1.0, 2});
  const physics::EquationSet with_scalar(2, fields);
  clear_error();
  REQUIRE(io::find_latest_checkpoint(PETSC_COMM_WORLD, dir, hash, with_scalar, m.n_global_cells,
                                     &rec, &found) != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("checkpoint of other fields (pressure:1,velocity:2; this case "
                               "solves pressure:1,velocity:2,scalar:1)"));
}

// A checkpoint of a version before the field signature (no "fields" attribute) holds (p, u): the
// flow reads it, a case with a scalar is told which version wrote it.
TEST_CASE("checkpoints: files without the field signature", "[unsteady][io]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  const std::string dir = test::work_dir("checkpoints-unsigned");
  std::string hash;
  REQUIRE(io::mesh_hash(m, m.coordinates, &hash) == 0);
  const physics::EquationSet eq(2, physics::navier_stokes_fields(2));
  std::string path;
  {
    io::CheckpointWriter ck;
    REQUIRE(ck.open(m, dir, hash, "case-1", eq) == 0);
    Vec w;
    REQUIRE(VecCreateMPI(m.comm, m.n_owned_cells * eq.nv(), PETSC_DETERMINE, &w) == 0);
    REQUIRE(VecSet(w, 1.5) == 0);
    REQUIRE(ck.write(1, 0.1, 0.1, 0.1, w, w, nullptr, nullptr) == 0);
    VecDestroy(&w);
    path = ck.path();
  }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  REQUIRE(H5Adelete(f, "fields") >= 0);
  H5Fclose(f);
  io::CheckpointRecord rec;
  bool found = false;
  REQUIRE(io::find_latest_checkpoint(m.comm, dir, hash, eq, m.n_global_cells, &rec, &found) == 0);
  REQUIRE(found);
  auto fields = physics::navier_stokes_fields(2);
  fields.push_back({"scalar", 1, true, 1.0, 2});
  clear_error();
  REQUIRE(io::find_latest_checkpoint(m.comm, dir, hash, physics::EquationSet(2, fields),
                                     m.n_global_cells, &rec, &found) != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("a file of a version before the field signature"));
}
