// ParaView output round trip: files written on P ranks read back with VTK's own XML reader.
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

TEST_CASE("VTK: .pvd/.pvtu written on P ranks read back with the VTK reader", "[io][mpi]") {
  mesh::Mesh m;
  test::load(PETSC_COMM_WORLD, "square-mixed.geo", 1, 2, {"left", "right", "bottom", "top"}, &m);
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const std::string dir = test::work_dir("vtk-np" + std::to_string(size), false);
  io::Field id{"id", 1, {}}, vec{"vector", 3, {}};
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    id.values.push_back(test::serial_value(m.cell_gid[c], 0));
    for (int d = 0; d < 3; ++d) vec.values.push_back(test::serial_value(m.cell_gid[c], d));
  }
  io::VtkSeries series(PETSC_COMM_WORLD, dir, "flow");
  REQUIRE(series.write_volume(m, m.coordinates, 0.0, {id, vec}) == 0);
  REQUIRE(series.write_volume(m, m.coordinates, 0.5, {id, vec}) == 0);
  io::VtkSeries surface(PETSC_COMM_WORLD, dir, "boundary_left");
  int left_faces = static_cast<int>(m.boundary_faces(m.patch_index("left")).size());
  MPI_Allreduce(MPI_IN_PLACE, &left_faces, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  io::Field sid{"id", 1, std::vector<double>(m.boundary_faces(m.patch_index("left")).size(), 1.0)};
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
    for (PetscInt g = 0; g < m.n_global_cells; ++g) expected += test::serial_value(g, 0);
    REQUIRE(sum == Approx(expected).epsilon(1e-14));
    REQUIRE(vsum == Approx(expected + 2.0 * m.n_global_cells).epsilon(1e-14));
    vtkNew<vtkXMLPUnstructuredGridReader> sreader;
    sreader->SetFileName((dir + "/boundary_left_0000.pvtu").c_str());
    sreader->Update();
    REQUIRE(left_faces == 16); // h = 1/16 on x = 0 at level 1
    REQUIRE(sreader->GetOutput()->GetNumberOfCells() == left_faces);
  }
}
