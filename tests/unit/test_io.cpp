// Output round trips: ParaView files read back with VTK's own XML reader, and HDF5
// field files read back, also on a different number of ranks (each rank alone reads
// the file written by all ranks).
#include "karman/core/error.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/vtk_writer.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace karman;

namespace {

std::string work_dir(const std::string &name) {
  const std::string d = std::string(KARMAN_TEST_WORK_DIR) + "/" + name;
  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) std::filesystem::create_directories(d);
  MPI_Barrier(PETSC_COMM_WORLD);
  return d;
}

// A field that is a known function of the serial cell index.
double value_of(PetscInt gid, int comp) {
  return 0.25 * gid + comp;
}

} // namespace

TEST_CASE("VTK: .pvd/.pvtu written on P ranks read back with the VTK reader", "[io][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = work_dir("vtk-np" + std::to_string(size));
  io::Field id{"id", 1, {}}, vec{"vector", 3, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    id.values.push_back(value_of(m.cell_gid[c], 0));
    for (int d = 0; d < 3; ++d) vec.values.push_back(value_of(m.cell_gid[c], d));
  }
  io::VtkSeries series(PETSC_COMM_WORLD, dir, "flow");
  REQUIRE(series.write_volume(m, m.coordinates, 0.0, {id, vec}) == 0);
  REQUIRE(series.write_volume(m, m.coordinates, 0.5, {id, vec}) == 0);
  io::VtkSeries surface(PETSC_COMM_WORLD, dir, "boundary_left");
  int left_faces = static_cast<int>(io::VtkSeries::surface_faces(m, m.patch_index("left")).size());
  MPI_Allreduce(MPI_IN_PLACE, &left_faces, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  io::Field sid{
      "id", 1,
      std::vector<double>(io::VtkSeries::surface_faces(m, m.patch_index("left")).size(), 1.0)};
  REQUIRE(surface.write_surface(m, m.coordinates, m.patch_index("left"), 0.0, {sid}) == 0);
  MPI_Barrier(PETSC_COMM_WORLD);

  int rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) {
    // the .pvd lists both snapshots with their times
    std::ifstream pvd(dir + "/flow.pvd");
    std::stringstream text;
    text << pvd.rdbuf();
    REQUIRE_THAT(text.str(), Catch::Contains("timestep=\"0\"") &&
                                 Catch::Contains("timestep=\"0.5\"") &&
                                 Catch::Contains("flow_0001.pvtu"));
    vtkNew<vtkXMLPUnstructuredGridReader> reader;
    reader->SetFileName((dir + "/flow_0001.pvtu").c_str());
    reader->Update();
    vtkUnstructuredGrid *grid = reader->GetOutput();
    REQUIRE(grid->GetNumberOfCells() == m.n_global_cells);
    vtkDataArray *a = grid->GetCellData()->GetArray("id");
    vtkDataArray *v = grid->GetCellData()->GetArray("vector");
    REQUIRE(a);
    REQUIRE(v);
    REQUIRE(v->GetNumberOfComponents() == 3);
    // the values are those of all cells exactly once: compare sums of known functions
    double sum = 0, expected = 0, vsum = 0;
    for (vtkIdType i = 0; i < grid->GetNumberOfCells(); ++i)
      sum += a->GetComponent(i, 0), vsum += v->GetComponent(i, 2);
    for (PetscInt g = 0; g < m.n_global_cells; ++g) expected += value_of(g, 0);
    REQUIRE(sum == Approx(expected).epsilon(1e-14));
    REQUIRE(vsum == Approx(expected + 2.0 * m.n_global_cells).epsilon(1e-14));
    vtkNew<vtkXMLPUnstructuredGridReader> sreader;
    sreader->SetFileName((dir + "/boundary_left_0000.pvtu").c_str());
    sreader->Update();
    REQUIRE(left_faces == 16); // h = 1/16 on x = 0 at level 1
    REQUIRE(sreader->GetOutput()->GetNumberOfCells() == left_faces);
  }
}

TEST_CASE("HDF5: fields written on P ranks read back on P and on 1 rank", "[io][mpi]") {
  mesh::Mesh m, serial;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"},
             &serial);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string file = work_dir("h5-np" + std::to_string(size)) + "/fields.h5";
  io::Field f{"velocity", 3, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (int d = 0; d < 3; ++d) f.values.push_back(value_of(m.cell_gid[c], d));
  REQUIRE(io::write_fields_h5(m, m.coordinates, file, {f}, {{"time", 1.5}}) == 0);

  io::Field back;
  REQUIRE(io::read_cell_field_h5(m, file, "velocity", &back) == 0);
  REQUIRE(back.ncomp == 3);
  REQUIRE(back.values == f.values);

  io::Field alone;
  REQUIRE(io::read_cell_field_h5(serial, file, "velocity", &alone) == 0);
  for (PetscInt c = 0; c < serial.n_cells; ++c)
    for (int d = 0; d < 3; ++d) REQUIRE(alone.values[3 * c + d] == value_of(serial.cell_gid[c], d));

  // the mesh fingerprint is partition independent
  std::string h_dist, h_serial;
  REQUIRE(io::mesh_hash(m, m.coordinates, &h_dist) == 0);
  REQUIRE(io::mesh_hash(serial, serial.coordinates, &h_serial) == 0);
  REQUIRE(h_dist == h_serial);

  clear_error();
  REQUIRE(io::read_cell_field_h5(m, file, "pressure", &back) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("no field 'pressure'"));
}

TEST_CASE("HDF5: a file completed with vertex fields and text, published by a rename",
          "[io][mpi]") {
  mesh::Mesh m, serial;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"},
             &serial);
  int size, rank;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  const std::string file = work_dir("h5-extra-np" + std::to_string(size)) + "/state.h5";
  const std::string tmp = file + ".tmp";
  if (rank == 0) std::filesystem::remove(file);
  MPI_Barrier(PETSC_COMM_WORLD);
  io::Field p{"p", 1, {}}, xv{"xv", 2, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) p.values.push_back(value_of(m.cell_gid[c], 0));
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v])
      for (int d = 0; d < 2; ++d) xv.values.push_back(value_of(m.vertex_gid[v], d));
  REQUIRE(io::create_fields_h5(m, m.coordinates, tmp, {p}, {{"level", 7.0}}) == 0);
  const std::string text = "{\"level\": 7, \"series\": [1.5, 2.5]}";
  REQUIRE(io::add_to_fields_h5(m, tmp, {xv}, {{"record", text}}) == 0);
  REQUIRE(!std::filesystem::exists(file));
  REQUIRE(io::replace_file(m.comm, tmp, file) == 0);
  REQUIRE(std::filesystem::exists(file));
  REQUIRE(!std::filesystem::exists(tmp));

  std::string back_text;
  REQUIRE(io::read_text_h5(m.comm, file, "record", &back_text) == 0);
  REQUIRE(back_text == text);
  REQUIRE(io::read_text_h5(m.comm, file, "missing", &back_text) == 0);
  REQUIRE(back_text.empty());
  double level = 0;
  REQUIRE(io::read_real_attribute_h5(m.comm, file, "level", &level) == 0);
  REQUIRE(level == 7.0);
  REQUIRE(io::read_real_attribute_h5(m.comm, file, "missing", &level) == 0);
  REQUIRE(std::isnan(level));

  io::Field back;
  REQUIRE(io::read_vertex_field_h5(m, file, "xv", &back) == 0);
  REQUIRE(back.ncomp == 2);
  REQUIRE(back.values == xv.values);
  io::Field alone;
  REQUIRE(io::read_vertex_field_h5(serial, file, "xv", &alone) == 0);
  REQUIRE(alone.values.size() == static_cast<std::size_t>(2 * serial.n_vertices));
  for (PetscInt v = 0; v < serial.n_vertices; ++v)
    for (int d = 0; d < 2; ++d)
      REQUIRE(alone.values[2 * v + d] == value_of(serial.vertex_gid[v], d));
  REQUIRE(io::read_cell_field_h5(serial, file, "p", &alone) == 0);
  for (PetscInt c = 0; c < serial.n_cells; ++c)
    REQUIRE(alone.values[c] == value_of(serial.cell_gid[c], 0));

  clear_error();
  REQUIRE(io::read_vertex_field_h5(m, file, "p", &back) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("no field 'p'"));
}
