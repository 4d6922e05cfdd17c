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
    for (int d = 0; d < 3; ++d) REQUIRE(alone.values[3 * c + d] == test::serial_value(serial.cell_gid[c], d));

  // the mesh fingerprint is partition independent
  std::string h_dist, h_serial;
  REQUIRE(io::mesh_hash(m, m.coordinates, &h_dist) == 0);
  REQUIRE(io::mesh_hash(serial, serial.coordinates, &h_serial) == 0);
  REQUIRE(h_dist == h_serial);

  clear_error();
  REQUIRE(io::read_cell_field_h5(m, file, "pressure", &back) != 0);
  REQUIRE_THAT(last_error_message(), Catch::Contains("no field 'pressure'"));
}
