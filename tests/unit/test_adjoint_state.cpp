// The saved state of an unsteady adjoint sweep (adjoint/adjoint_state.hpp) on the DFG channel's
// level 0: what is saved is read back exactly (level, the psi history, dJ/dX on every vertex copy,
// parameter sums, control series)  [mpi: also on 2 ranks]; a state of another run (number of
// steps), a truncated file and a missing one are refused with a message that names the file.  The
// kill-and-resume tests of a whole sweep are in tests/cli/unsteady_adjoint.sh.
#include "karman/adjoint/adjoint_state.hpp"
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/optimization/case_schema.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace karman;

TEST_CASE("adjoint state: read back exactly; another run's, a truncated or a missing state is "
          "refused",
          "[adjoint-state][mpi]") {
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load_text(
              PETSC_COMM_WORLD,
              test::dfg_case_yaml(0, "time: {mode: unsteady, dt: 0.02, t_end: 0.1}\n"), "case.yaml",
              ".", {}, optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  const discretization::FlowResidual &res = fc.residual();
  const mesh::Mesh &m = res.mesh();
  const int nv = res.nv();
  const std::string path = test::work_dir("adjoint_state") + "/state.h5";
  const adjoint::AdjointStateRun run{res, cfg, 5, 0.02};

  // three levels of history with known values of the serial cell index, dJ/dX from the
  // coordinates (the same on every copy of a vertex), two parameters and a control series
  std::vector<Vec> saved(3), loaded(3);
  for (std::size_t k = 0; k < saved.size(); ++k) {
    REQUIRE(res.create_state(&saved[k]) == 0);
    REQUIRE(res.create_state(&loaded[k]) == 0);
    PetscScalar *a;
    REQUIRE(VecGetArray(saved[k], &a) == 0);
    for (PetscInt c = 0; c < m.n_owned_cells; ++c)
      for (int i = 0; i < nv; ++i) a[c * nv + i] = test::serial_value(m.cell_gid[c], i) + k;
    REQUIRE(VecRestoreArray(saved[k], &a) == 0);
  }
  adjoint::UnsteadyAdjointResult r;
  r.J = 1.25;
  r.parameters = {{"fluid.viscosity", 0.0, 3.5}, {"boundaries.inlet.velocity", 0.0, -0.75}};
  r.control["boundaries.cylinder.omega"] = {0.1, 0.2, 0.3, 0.4, 0.5};
  for (const Vec3<double> &x : res.coordinates())
    r.X.push_back(Vec3<double>(2 * x[0] + 1, x[1] - 3, 0.5 * x[0] * x[1]));
  REQUIRE(adjoint::save_adjoint_state(run, path, 4, saved, r, {}) == 0);

  long n = 0;
  adjoint::UnsteadyAdjointResult back;
  back.X.resize(m.n_vertices);
  clear_error();
  const PetscErrorCode ierr = adjoint::load_adjoint_state(run, path, &n, loaded, &back);
  INFO(last_error_message());
  REQUIRE(ierr == 0);
  CHECK(n == 4);
  for (std::size_t k = 0; k < saved.size(); ++k) {
    CAPTURE(k);
    CHECK(test::relative_difference(loaded[k], saved[k]) == 0.0);
  }
  REQUIRE(back.parameters.size() == 2);
  for (const auto &p : back.parameters) {
    CAPTURE(p.name);
    CHECK(p.gradient == (p.name == "fluid.viscosity" ? 3.5 : -0.75));
  }
  CHECK(back.control == r.control);
  bool same_x = true;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    for (int d = 0; d < 3; ++d) same_x = same_x && back.X[v][d] == r.X[v][d];
  CHECK(same_x);

  // another run: 6 steps instead of 5
  const adjoint::AdjointStateRun other{res, cfg, 6, 0.02};
  clear_error();
  CHECK(adjoint::load_adjoint_state(other, path, &n, loaded, &back) != 0);
  CHECK(last_error_message().find(path + ": adjoint state of a run with 5 steps of dt 0.02") !=
        std::string::npos);
  // a truncated file (half of it)
  const std::string truncated = path + ".truncated";
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    std::filesystem::copy_file(path, truncated, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(truncated, std::filesystem::file_size(path) / 2);
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  clear_error();
  CHECK(adjoint::load_adjoint_state(run, truncated, &n, loaded, &back) != 0);
  CHECK(last_error_message().find(truncated) != std::string::npos);
  // a missing file
  clear_error();
  CHECK(adjoint::load_adjoint_state(run, path + ".missing", &n, loaded, &back) != 0);
  CHECK(last_error_message().find("no saved adjoint state " + path + ".missing") !=
        std::string::npos);
  clear_error();
  for (std::size_t k = 0; k < saved.size(); ++k) {
    VecDestroy(&saved[k]);
    VecDestroy(&loaded[k]);
  }
}
