// Transfer of cell fields between meshes: the nearest-point search against brute force,
// exactness of the linear least-squares fit for linear fields, and the file transfer from
// one mesh to another on P ranks.
#include "karman/core/error.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/io/field_transfer.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

using namespace karman;

namespace {

// A graded cloud: points crowd towards the origin (like cells towards a wall).
std::vector<Vec3<double>> graded_cloud(int dim, int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Vec3<double>> p(n);
  for (auto &x : p)
    for (int d = 0; d < dim; ++d) x[d] = 2.0 * std::pow(u(gen), 3.0) - 0.3;
  return p;
}

double linear_value(const Vec3<double> &x, int comp) {
  return 0.7 - 1.3 * x[0] + 2.1 * x[1] + 0.4 * x[2] + comp * (x[0] - 0.5 * x[1]);
}

} // namespace

TEST_CASE("Field transfer: nearest points match a brute-force search", "[io][transfer]") {
  for (int dim : {2, 3}) {
    const auto cloud = graded_cloud(dim, 3000, 7 + dim);
    io::PointCloudInterpolator interp;
    interp.build(dim, cloud);
    std::mt19937 gen(3);
    std::uniform_real_distribution<double> u(-0.6, 2.0); // also outside the cloud's box
    for (int q = 0; q < 300; ++q) {
      Vec3<double> x;
      for (int d = 0; d < dim; ++d) x[d] = u(gen);
      const std::size_t k = 1 + q % 12;
      const auto got = interp.nearest(x, k);
      std::vector<double> dist;
      for (const auto &p : cloud) {
        double s = 0;
        for (int d = 0; d < dim; ++d) s += (p[d] - x[d]) * (p[d] - x[d]);
        dist.push_back(s);
      }
      std::sort(dist.begin(), dist.end());
      CAPTURE(dim, q, k);
      REQUIRE(got.size() == k);
      for (std::size_t i = 0; i < k; ++i) {
        double s = 0;
        for (int d = 0; d < dim; ++d) s += (cloud[got[i]][d] - x[d]) * (cloud[got[i]][d] - x[d]);
        REQUIRE(s == dist[i]);
      }
    }
  }
}

TEST_CASE("Field transfer: the least-squares fit is exact for linear fields", "[io][transfer]") {
  for (int dim : {2, 3}) {
    const auto cloud = graded_cloud(dim, 2000, 11 + dim);
    std::vector<double> values;
    for (const auto &p : cloud)
      for (int c = 0; c < 2; ++c) values.push_back(linear_value(p, c));
    io::PointCloudInterpolator interp;
    interp.build(dim, cloud);
    std::mt19937 gen(5);
    std::uniform_real_distribution<double> u(-0.5, 1.9);
    for (int q = 0; q < 200; ++q) {
      Vec3<double> x;
      for (int d = 0; d < dim; ++d) x[d] = u(gen);
      double out[2];
      interp.evaluate(x, values, 2, out);
      CAPTURE(dim, q);
      for (int c = 0; c < 2; ++c) REQUIRE(out[c] == Approx(linear_value(x, c)).margin(1e-10));
    }
  }
  // points on a line do not determine a plane: the nearest value is taken
  std::vector<Vec3<double>> line;
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) line.emplace_back(0.1 * i, 0.0, 0.0), v.push_back(i);
  io::PointCloudInterpolator on_line;
  on_line.build(2, line);
  double out;
  const double gap = on_line.evaluate(Vec3<double>(0.52, 0.3, 0.0), v, 1, &out);
  REQUIRE(out == 5.0);
  REQUIRE(gap == Approx(std::hypot(0.02, 0.3)));
}

TEST_CASE("Field transfer: fields of one mesh onto another, on P ranks", "[io][transfer][mpi]") {
  // source: level 1, written on all ranks; target: level 2 (another mesh), on all ranks
  mesh::Mesh coarse, fine;
  const std::vector<std::string> names{"left", "right", "bottom", "top"};
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, names, &coarse);
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 2, 2, names, &fine);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = std::string(KARMAN_TEST_WORK_DIR) + "/transfer-np" + std::to_string(size);
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(PETSC_COMM_WORLD);
  const std::string file = dir + "/coarse.h5";

  // the source field must be given at the source centroids as the file defines them (the
  // vertex mean), so that a linear field is linear in the transfer's own points
  geometry::Geometry<double> gc, gf;
  geometry::compute_geometry(coarse, coarse.coordinates, gc);
  geometry::compute_geometry(fine, fine.coordinates, gf);
  io::Field vel{"velocity", 3, {}}, pre{"pressure", 1, {}};
  for (PetscInt c = 0; c < coarse.n_owned_cells; ++c) {
    Vec3<double> xm(0, 0, 0);
    const PetscInt nv = coarse.cell_vertex_ptr[c + 1] - coarse.cell_vertex_ptr[c];
    for (PetscInt i = coarse.cell_vertex_ptr[c]; i < coarse.cell_vertex_ptr[c + 1]; ++i)
      xm = xm + (1.0 / nv) * coarse.coordinates[coarse.cell_vertex[i]];
    for (int d = 0; d < 3; ++d) vel.values.push_back(linear_value(xm, d));
    pre.values.push_back(linear_value(xm, 5));
  }
  REQUIRE(io::write_fields_h5(coarse, coarse.coordinates, file, {vel, pre}, {}) == 0);

  std::vector<Vec3<double>> x(gf.cell_centroid.begin(),
                              gf.cell_centroid.begin() + fine.n_owned_cells);
  std::vector<double> h;
  for (PetscInt c = 0; c < fine.n_owned_cells; ++c) h.push_back(std::sqrt(gf.cell_volume[c]));
  std::vector<io::Field> out;
  PetscInt source_cells = 0;
  double gap = 0;
  REQUIRE(io::transfer_cell_fields_h5(PETSC_COMM_WORLD, 2, file, {"velocity", "pressure"}, x, h,
                                      &out, &source_cells, &gap) == 0);
  REQUIRE(source_cells == coarse.n_global_cells);
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].ncomp == 3);
  REQUIRE(out[1].ncomp == 1);
  for (PetscInt c = 0; c < fine.n_owned_cells; ++c) {
    for (int d = 0; d < 3; ++d)
      REQUIRE(out[0].values[3 * c + d] == Approx(linear_value(x[c], d)).margin(1e-10));
    REQUIRE(out[1].values[c] == Approx(linear_value(x[c], 5)).margin(1e-10));
  }
  // every fine centroid lies inside the coarse mesh: within about a coarse cell of a source centre
  REQUIRE(gap > 0.0);
  REQUIRE(gap < 3.0);

  clear_error();
  REQUIRE(io::transfer_cell_fields_h5(PETSC_COMM_WORLD, 2, file, {"temperature"}, x, h, &out,
                                      &source_cells, &gap) != 0);
  REQUIRE_THAT(last_error_message(),
               Catch::Contains("coarse.h5: no dataset '/fields/temperature'"));
  clear_error();
  REQUIRE(io::transfer_cell_fields_h5(PETSC_COMM_WORLD, 2, dir + "/missing.h5", {"velocity"}, x, h,
                                      &out, &source_cells, &gap) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("missing.h5: cannot open HDF5 file"));
  clear_error();
}
