// Wall shapes as CSV (src/io/wall_shape.cpp): on the unit square (mixed cells), the rows of the
// `bottom` and `top` walls are their faces' vertices, faces numbered per file, sorted by patch, the
// coordinates those of X (moved here), a vertex field in the g columns; the file is the same on 1
// and 2 ranks (written by rank 0 from every rank's faces) as for the serial mesh.
#include "karman/io/wall_shape.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace karman;

TEST_CASE("wall shape: rows of the wall faces, same file on every rank count", "[io][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"}, &m);
  std::vector<Vec3<double>> X = m.coordinates, g(m.n_vertices);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    X[v][1] += 0.1 * X[v][0]; // a shear: the file has the moved coordinates
    g[v] = Vec3<double>(X[v][0], 2 * X[v][1], 0);
  }
  int size, rank;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  const std::string dir = test::work_dir("wall-shape", false);
  const std::string path = dir + "/walls-np" + std::to_string(size) + ".csv";
  REQUIRE(io::write_wall_shape(m, X, {m.patch_index("top"), m.patch_index("bottom")}, path, &g) ==
          0);
  if (rank != 0) return;
  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line == "wall,face,x,y,z,gx,gy,gz");
  int rows = 0, faces = 0;
  std::string last_wall;
  long last_face = -1;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string wall, cell;
    std::vector<double> v;
    std::getline(s, wall, ',');
    while (std::getline(s, cell, ',')) v.push_back(std::stod(cell));
    REQUIRE(v.size() == 7);
    CAPTURE(line);
    // sorted by patch (index: bottom before top), faces numbered from 0 in file order
    if (last_wall == "top") CHECK(wall == "top");
    CHECK((wall == "bottom" || wall == "top"));
    CHECK((v[0] == last_face || v[0] == last_face + 1));
    if (v[0] != last_face) ++faces;
    last_face = static_cast<long>(v[0]), last_wall = wall;
    const double x = v[1], y = v[2];
    CHECK(y == Approx((wall == "top" ? 1.0 : 0.0) + 0.1 * x).margin(1e-12));
    CHECK(v[4] == x);
    CHECK(v[5] == 2 * y);
    ++rows;
  }
  CHECK(rows == 2 * faces); // two vertices per face in 2D
  CHECK(faces > 0);
  // the same walls of the serial mesh, written by this rank alone: the same file
  mesh::Mesh serial;
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 0, 2, {"left", "right", "bottom", "top"},
             &serial);
  std::vector<Vec3<double>> Xs = serial.coordinates, gs(serial.n_vertices);
  for (PetscInt v = 0; v < serial.n_vertices; ++v) {
    Xs[v][1] += 0.1 * Xs[v][0];
    gs[v] = Vec3<double>(Xs[v][0], 2 * Xs[v][1], 0);
  }
  const std::string serial_path = dir + "/walls-serial.csv";
  REQUIRE(io::write_wall_shape(serial, Xs,
                               {serial.patch_index("top"), serial.patch_index("bottom")},
                               serial_path, &gs) == 0);
  std::ifstream a(path), b(serial_path);
  std::stringstream ta, tb;
  ta << a.rdbuf();
  tb << b.rdbuf();
  CHECK(ta.str() == tb.str());
}
