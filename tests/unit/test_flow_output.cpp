// The flow output (src/driver/flow_output.cpp) of a state with flow on the DFG 2D-1 channel
// (level 0): NAME.h5 reads back to the same state, with the time and the case's problem hash;
// NAME.pvd and one series per wall-type boundary (or per output.surfaces entry) are written,
// nothing with output.vtk and output.hdf5 false; an unknown surface is refused naming the key.
// The residual per field and cell of a state (what a failed steady solve writes beside its last
// good state and names in its message): its squares sum to |R|^2, the located cell holds the
// largest value, and the fields reach the ParaView series (1 and 2 ranks).
#include "karman/driver/flow_output.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/state_fields.hpp"
#include "objective_check.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace karman;
namespace fs = std::filesystem;

TEST_CASE("flow output: HDF5 round trip, ParaView series of volume and walls", "[driver][mpi]") {
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: drag, walls: [cylinder]}\n", &f);
  test::set_smooth_state(f.res(), f.w);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = test::work_dir("flow-output-np" + std::to_string(size));
  REQUIRE(driver::write_flow_state(f.res(), f.fc.monitors(), f.cfg, dir, "flow", f.w,
                                   discretization::TimeLevel{1.5, 0}) == 0);
  for (const char *file : {"flow.h5", "flow.pvd", "flow_walls.pvd", "flow_cylinder.pvd"})
    CHECK(fs::exists(dir + "/" + file));
  CHECK(!fs::exists(dir + "/flow_inlet.pvd"));
  std::ifstream pvd(dir + "/flow.pvd");
  std::stringstream text;
  text << pvd.rdbuf();
  CHECK_THAT(text.str(), Catch::Contains("1.5"));
  Vec back;
  REQUIRE(VecDuplicate(f.w, &back) == 0);
  REQUIRE(io::read_state_h5(f.res().mesh(), f.res().equations(), dir + "/flow.h5", back) == 0);
  CHECK(test::relative_difference(back, f.w) == 0);
  double time = 0;
  REQUIRE(io::read_real_attribute_h5(PETSC_COMM_WORLD, dir + "/flow.h5", "time", &time) == 0);
  CHECK(time == 1.5);
  std::string hash;
  REQUIRE(io::read_text_attribute_h5(PETSC_COMM_WORLD, dir + "/flow.h5", "case_hash", &hash) == 0);
  CHECK(hash == f.cfg.problem_hash());
  VecDestroy(&back);
}

TEST_CASE("flow output: surfaces chosen, output switched off, unknown surfaces", "[driver]") {
  {
    test::FlowFixture f;
    test::load_dfg_with("objective: {type: drag, walls: [cylinder]}\noutput: {surfaces: [inlet]}\n",
                        &f);
    const std::string dir = test::work_dir("flow-output-surfaces");
    REQUIRE(driver::write_flow_state(f.res(), f.fc.monitors(), f.cfg, dir, "last_good", f.w,
                                     discretization::kSteady) == 0);
    CHECK(fs::exists(dir + "/last_good_inlet.pvd"));
    CHECK(!fs::exists(dir + "/last_good_cylinder.pvd"));
  }
  {
    test::FlowFixture f;
    test::load_dfg_with(
        "objective: {type: drag, walls: [cylinder]}\noutput: {vtk: false, hdf5: false}\n", &f);
    const std::string dir = test::work_dir("flow-output-none");
    REQUIRE(driver::write_flow_state(f.res(), f.fc.monitors(), f.cfg, dir, "flow", f.w,
                                     discretization::kSteady) == 0);
    CHECK(fs::is_empty(dir));
  }
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: drag, walls: [cylinder]}\noutput: {surfaces: [inlte]}\n",
                      &f);
  clear_error();
  CHECK(driver::write_flow_state(f.res(), f.fc.monitors(), f.cfg, test::work_dir("flow-output-bad"),
                                 "flow", f.w, discretization::kSteady) != 0);
  CHECK(last_error_message() == "case.yaml: output.surfaces: no boundary named 'inlte'");
  clear_error();
}

TEST_CASE("flow output: the residual per field and cell, and where it is largest",
          "[driver][mpi]") {
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: drag, walls: [cylinder]}\n", &f);
  test::set_smooth_state(f.res(), f.w);
  std::vector<io::Field> fields;
  driver::ResidualLocation where;
  REQUIRE(driver::residual_fields(f.res(), f.w, discretization::kSteady, &fields, &where) == 0);
  Vec R;
  REQUIRE(f.res().create_state(&R) == 0);
  REQUIRE(f.res().residual(discretization::kSteady, f.w, R) == 0);
  PetscReal r_norm;
  REQUIRE(VecNorm(R, NORM_2, &r_norm) == 0);
  VecDestroy(&R);
  REQUIRE(r_norm > 0);
  CHECK(where.norm == Approx(r_norm).epsilon(1e-14));
  REQUIRE(fields.size() == 2);
  CHECK(fields[0].name == "residual_pressure");
  CHECK(fields[1].name == "residual_velocity");
  const mesh::Mesh &m = f.res().mesh();
  double sum = 0, largest = 0;
  int holds = 0; // a cell at where.x with the largest value, on this rank
  for (const io::Field &field : fields) {
    REQUIRE(field.values.size() == static_cast<std::size_t>(m.n_owned_cells));
    for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
      sum += field.values[c] * field.values[c];
      largest = std::max(largest, field.values[c]);
      const Vec3<double> d = f.res().geometry().cell_centroid[c] - where.x;
      if (norm(d) < 1e-12 && field.values[c] == where.cell_norm &&
          "residual_" + where.field == field.name)
        holds = 1;
    }
  }
  double all[2] = {sum, 0}, top = 0;
  int found = 0;
  MPI_Allreduce(&sum, &all[1], 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(&largest, &top, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(&holds, &found, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  CHECK(std::sqrt(all[1]) == Approx(r_norm).epsilon(1e-12));
  CHECK(where.cell_norm == top);
  CHECK(found == 1);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = test::work_dir("flow-output-residual-np" + std::to_string(size));
  REQUIRE(driver::write_flow_state(f.res(), f.fc.monitors(), f.cfg, dir, "last_good", f.w,
                                   discretization::kSteady, fields) == 0);
  std::ifstream pvtu(dir + "/last_good_0000.pvtu");
  std::stringstream text;
  text << pvtu.rdbuf();
  CHECK_THAT(text.str(), Catch::Contains("Name=\"residual_velocity\""));
  CHECK_THAT(text.str(), Catch::Contains("Name=\"residual_pressure\""));
}
