// A state as named output fields and back (src/io/state_fields.cpp): with the fields pressure,
// velocity (dim components) and scalar, state_fields gives one field per field of the equation
// set (vectors with 3 components, z = 0 in 2D, named prefix + name + suffix), join_state inverts
// it, and read_state_h5 reads a state written to an HDF5 fields file back unchanged; a field the
// file lacks is an error naming the file and the field, or is listed as missing.
#include "karman/core/error.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

using namespace karman;

TEST_CASE("state fields: round trips through fields and an HDF5 file", "[io][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &m);
  const physics::EquationSet eq(2, {{"pressure", 1}, {"velocity", 2}, {"scalar", 1}});
  const int nv = eq.nv();
  REQUIRE(nv == 4);
  std::vector<double> w(nv * m.n_owned_cells);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (int k = 0; k < nv; ++k) w[c * nv + k] = test::serial_value(m.cell_gid[c], k);
  const auto fields = io::state_fields(m, eq, w.data(), "adjoint_", "_x");
  REQUIRE(fields.size() == 3);
  CHECK(fields[0].name == "adjoint_pressure_x");
  CHECK(fields[1].name == "adjoint_velocity_x");
  CHECK(fields[1].ncomp == 3);
  CHECK(fields[2].ncomp == 1);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    CHECK(fields[0].values[c] == w[c * nv]);
    CHECK(fields[1].values[3 * c + 1] == w[c * nv + 2]);
    CHECK(fields[1].values[3 * c + 2] == 0);
    CHECK(fields[2].values[c] == w[c * nv + 3]);
  }
  std::vector<double> back(w.size(), -1);
  io::join_state(m, eq, fields, back.data());
  CHECK(back == w);
  // through a file: the plain names
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = test::work_dir("state-fields-np" + std::to_string(size));
  const std::string file = dir + "/flow.h5";
  REQUIRE(io::write_fields_h5(m, m.coordinates, file, io::state_fields(m, eq, w.data()), {}) == 0);
  Vec v;
  REQUIRE(VecCreateMPI(PETSC_COMM_WORLD, nv * m.n_owned_cells, PETSC_DETERMINE, &v) == 0);
  REQUIRE(io::read_state_h5(m, eq, file, v) == 0);
  const PetscScalar *a;
  REQUIRE(VecGetArrayRead(v, &a) == 0);
  CHECK(std::vector<double>(a, a + w.size()) == w);
  REQUIRE(VecRestoreArrayRead(v, &a) == 0);
  // a file of the flow alone: the scalar is missing
  const physics::EquationSet flow(2, {{"pressure", 1}, {"velocity", 2}});
  std::vector<double> wf(3 * m.n_owned_cells, 1.0);
  const std::string flow_file = dir + "/flow-only.h5";
  REQUIRE(io::write_fields_h5(m, m.coordinates, flow_file, io::state_fields(m, flow, wf.data()),
                              {}) == 0);
  clear_error();
  CHECK(io::read_state_h5(m, eq, flow_file, v) != 0);
  CHECK_THAT(last_error_message(),
             Catch::Contains("flow-only.h5") && Catch::Contains("no field 'scalar'"));
  clear_error();
  std::vector<std::string> missing;
  REQUIRE(VecSet(v, -5.0) == 0);
  REQUIRE(io::read_state_h5(m, eq, flow_file, v, &missing) == 0);
  CHECK(missing == std::vector<std::string>{"scalar"});
  REQUIRE(VecGetArrayRead(v, &a) == 0);
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    CHECK(a[c * nv] == 1.0);
    CHECK(a[c * nv + 3] == -5.0); // left as it was
  }
  REQUIRE(VecRestoreArrayRead(v, &a) == 0);
  VecDestroy(&v);
}
