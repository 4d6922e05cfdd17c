// HDF5 field files written on P ranks read back on P and on 1 rank (each rank alone reads
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

TEST_CASE("HDF5: fields written on P ranks read back on P and on 1 rank", "[io][mpi]") {
  mesh::Mesh m, serial;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  test::load(PETSC_COMM_SELF, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"},
             &serial);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string file = test::work_dir("h5-np" + std::to_string(size), false) + "/fields.h5";
  io::Field f{"velocity", 3, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    for (int d = 0; d < 3; ++d) f.values.push_back(test::serial_value(m.cell_gid[c], d));
  REQUIRE(io::write_fields_h5(m, m.coordinates, file, {f}, {{"time", 1.5}}) == 0);

  io::Field back;
  REQUIRE(io::read_cell_field_h5(m, file, "velocity", &back) == 0);
  REQUIRE(back.ncomp == 3);
  REQUIRE(back.values == f.values);

  io::Field alone;
  REQUIRE(io::read_cell_field_h5(serial, file, "velocity", &alone) == 0);
  for (PetscInt c = 0; c < serial.n_cells; ++c)
    for (int d = 0; d < 3; ++d)
      REQUIRE(alone.values[3 * c + d] == test::serial_value(serial.cell_gid[c], d));

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
  const std::string file =
      test::work_dir("h5-extra-np" + std::to_string(size), false) + "/state.h5";
  const std::string tmp = file + ".tmp";
  if (rank == 0) std::filesystem::remove(file);
  MPI_Barrier(PETSC_COMM_WORLD);
  io::Field p{"p", 1, {}}, xv{"xv", 2, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c)
    p.values.push_back(test::serial_value(m.cell_gid[c], 0));
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v])
      for (int d = 0; d < 2; ++d) xv.values.push_back(test::serial_value(m.vertex_gid[v], d));
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
      REQUIRE(alone.values[2 * v + d] == test::serial_value(serial.vertex_gid[v], d));
  REQUIRE(io::read_cell_field_h5(serial, file, "p", &alone) == 0);
  for (PetscInt c = 0; c < serial.n_cells; ++c)
    REQUIRE(alone.values[c] == test::serial_value(serial.cell_gid[c], 0));

  clear_error();
  REQUIRE(io::read_vertex_field_h5(m, file, "p", &back) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("no field 'p'"));
}
