// VTK XML output (see include/karman/io/vtk_writer.hpp).
#include "karman/io/vtk_writer.hpp"

#include "karman/io/atomic_file.hpp"
#include "karman/core/parallel.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkPointData.h>
#include <vtkDoubleArray.h>
#include <vtkIdTypeArray.h>
#include <vtkMPI.h>
#include <vtkMPICommunicator.h>
#include <vtkMPIController.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridWriter.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace karman::io {
namespace fs = std::filesystem;

PetscErrorCode VtkSeries::resume(double t_max) {
  PetscFunctionBeginUser;
  entries_.clear();
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  std::string text;
  if (rank == 0) {
    std::ifstream in(fs::path(directory_) / (name_ + ".pvd"));
    std::string line;
    while (std::getline(in, line)) {
      const auto t = line.find("timestep=\""), f = line.find("file=\"");
      if (t == std::string::npos || f == std::string::npos) continue;
      const double time = std::atof(line.c_str() + t + 10);
      const std::string file = line.substr(f + 6, line.find('"', f + 6) - (f + 6));
      if (time <= t_max + 1e-12 * std::max(1.0, std::abs(t_max))) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.17g ", time);
        text += buf + file + "\n";
      }
    }
  }
  PetscCall(broadcast_string(comm_, &text));
  std::istringstream in(text);
  double time;
  std::string file;
  while (in >> time >> file) entries_.emplace_back(time, file);
  PetscFunctionReturn(0);
}

PetscErrorCode VtkSeries::write_volume(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                       double time, const std::vector<Field> &fields,
                                       const std::vector<Field> &point_fields) {
  PetscFunctionBeginUser;
  std::vector<PetscInt> vertices, offsets{0};
  std::vector<int> types;
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) {
    for (PetscInt i = mesh.cell_vertex_ptr[c]; i < mesh.cell_vertex_ptr[c + 1]; ++i)
      vertices.push_back(mesh.cell_vertex[i]);
    offsets.push_back(static_cast<PetscInt>(vertices.size()));
    types.push_back(mesh::vtk_cell_type(mesh.cell_shape[c]));
  }
  PetscCall(write_grid(X, vertices, offsets, types, time, fields, point_fields));
  PetscFunctionReturn(0);
}

PetscErrorCode VtkSeries::write_surface(const mesh::Mesh &mesh, const std::vector<Vec3<double>> &X,
                                        int patch, double time, const std::vector<Field> &fields,
                                        const std::vector<Field> &point_fields) {
  PetscFunctionBeginUser;
  std::vector<PetscInt> vertices, offsets{0};
  std::vector<int> types;
  for (PetscInt f : mesh.boundary_faces(patch)) {
    const PetscInt n = mesh.face_vertex_ptr[f + 1] - mesh.face_vertex_ptr[f];
    for (PetscInt i = mesh.face_vertex_ptr[f]; i < mesh.face_vertex_ptr[f + 1]; ++i)
      vertices.push_back(mesh.face_vertex[i]);
    offsets.push_back(static_cast<PetscInt>(vertices.size()));
    types.push_back(n == 2 ? 3 /* VTK_LINE */ : n == 3 ? 5 /* VTK_TRIANGLE */ : 9 /* VTK_QUAD */);
  }
  PetscCall(write_grid(X, vertices, offsets, types, time, fields, point_fields));
  PetscFunctionReturn(0);
}

namespace {

// The unstructured grid of the cells (vertex lists `vertices` split at `offsets`, VTK types
// `types`) with their vertices at X, numbered compactly: point_of maps a mesh vertex to its point
void build_grid(const std::vector<Vec3<double>> &X, const std::vector<PetscInt> &vertices,
                const std::vector<PetscInt> &offsets, const std::vector<int> &types,
                vtkUnstructuredGrid *grid, std::map<PetscInt, vtkIdType> *point_of) {
  const std::size_t ncells = types.size();
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  std::vector<vtkIdType> conn(vertices.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    auto it = point_of->find(vertices[i]);
    if (it == point_of->end()) {
      const Vec3<double> &x = X[vertices[i]];
      it = point_of->emplace(vertices[i], points->InsertNextPoint(x[0], x[1], x[2])).first;
    }
    conn[i] = it->second;
  }
  grid->SetPoints(points);
  vtkNew<vtkCellArray> cells;
  vtkNew<vtkIdTypeArray> offsets_array, conn_array;
  offsets_array->SetNumberOfValues(static_cast<vtkIdType>(offsets.size()));
  for (std::size_t i = 0; i < offsets.size(); ++i)
    offsets_array->SetValue(static_cast<vtkIdType>(i), offsets[i]);
  conn_array->SetNumberOfValues(static_cast<vtkIdType>(conn.size()));
  for (std::size_t i = 0; i < conn.size(); ++i)
    conn_array->SetValue(static_cast<vtkIdType>(i), conn[i]);
  cells->SetData(offsets_array, conn_array);
  vtkNew<vtkUnsignedCharArray> type_array;
  type_array->SetNumberOfValues(static_cast<vtkIdType>(ncells));
  for (std::size_t i = 0; i < ncells; ++i)
    type_array->SetValue(static_cast<vtkIdType>(i), static_cast<unsigned char>(types[i]));
  grid->SetCells(type_array, cells);
}

// The cell fields (ncells values each) and point fields (by mesh vertex, at point_of) of the grid
PetscErrorCode add_fields(const std::vector<Field> &fields, const std::vector<Field> &point_fields,
                          std::size_t ncells, const std::map<PetscInt, vtkIdType> &point_of,
                          vtkUnstructuredGrid *grid) {
  PetscFunctionBeginUser;
  for (const auto &f : fields) {
    PetscCheck(f.values.size() == ncells * static_cast<std::size_t>(f.ncomp), PETSC_COMM_SELF,
               PETSC_ERR_PLIB, "field %s has %zu values, expected %zu", f.name.c_str(),
               f.values.size(), ncells * f.ncomp);
    vtkNew<vtkDoubleArray> a;
    a->SetName(f.name.c_str());
    a->SetNumberOfComponents(f.ncomp);
    a->SetNumberOfTuples(static_cast<vtkIdType>(ncells));
    for (std::size_t i = 0; i < f.values.size(); ++i)
      a->SetValue(static_cast<vtkIdType>(i), f.values[i]);
    grid->GetCellData()->AddArray(a);
  }
  for (const auto &f : point_fields) {
    vtkNew<vtkDoubleArray> a;
    a->SetName(f.name.c_str());
    a->SetNumberOfComponents(f.ncomp);
    a->SetNumberOfTuples(static_cast<vtkIdType>(point_of.size()));
    for (const auto &[v, id] : point_of)
      for (int k = 0; k < f.ncomp; ++k) a->SetComponent(id, k, f.values[v * f.ncomp + k]);
    grid->GetPointData()->AddArray(a);
  }
  PetscFunctionReturn(0);
}

// Writes every rank's grid as one piece of directory/pvtu (the pieces in its subdirectory).
// Collective.
PetscErrorCode write_pieces(MPI_Comm comm, const std::string &directory, const std::string &pvtu,
                            vtkUnstructuredGrid *grid) {
  PetscFunctionBeginUser;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  // The controller lets rank 0 learn which pieces the other ranks wrote, so that the
  // .pvtu summary lists all of them.
  MPI_Comm opaque_comm = comm;
  vtkMPICommunicatorOpaqueComm opaque(&opaque_comm);
  vtkNew<vtkMPICommunicator> communicator;
  communicator->InitializeExternal(&opaque);
  vtkNew<vtkMPIController> controller;
  controller->SetCommunicator(communicator);
  vtkNew<vtkXMLPUnstructuredGridWriter> writer;
  writer->SetController(controller);
  writer->SetInputData(grid);
  writer->SetFileName((fs::path(directory) / pvtu).string().c_str());
  writer->SetNumberOfPieces(size);
  writer->SetStartPiece(rank);
  writer->SetEndPiece(rank);
  writer->SetWriteSummaryFile(1); // collective with the controller; only rank 0 writes it
  writer->SetUseSubdirectory(true);
  writer->SetDataModeToAppended();
  writer->SetCompressorTypeToZLib();
  writer->EncodeAppendedDataOff();
  const int ok = writer->Write();
  int all_ok = 0;
  PetscCallMPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm));
  PetscCheck(all_ok == 1, comm, PETSC_ERR_FILE_WRITE, "cannot write %s in %s", pvtu.c_str(),
             directory.c_str());
  PetscFunctionReturn(0);
}

// Writes the collection file pvd listing the series' (time, file) entries (rank 0). Collective.
PetscErrorCode write_collection(MPI_Comm comm, const std::string &pvd,
                                const std::vector<std::pair<double, std::string>> &entries) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error;
  if (rank == 0)
    error = write_file_atomically(pvd, [&](std::FILE *f) {
      std::fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
                 "byte_order=\"LittleEndian\">\n"
                 "  <Collection>\n",
                 f);
      for (const auto &[t, file] : entries)
        std::fprintf(f, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"%s\"/>\n", t,
                     file.c_str());
      std::fputs("  </Collection>\n</VTKFile>\n", f);
    });
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode VtkSeries::write_grid(const std::vector<Vec3<double>> &X,
                                     const std::vector<PetscInt> &vertices,
                                     const std::vector<PetscInt> &offsets,
                                     const std::vector<int> &types, double time,
                                     const std::vector<Field> &fields,
                                     const std::vector<Field> &point_fields) {
  PetscFunctionBeginUser;
  std::map<PetscInt, vtkIdType> point_of;
  vtkNew<vtkUnstructuredGrid> grid;
  build_grid(X, vertices, offsets, types, grid, &point_of);
  PetscCall(add_fields(fields, point_fields, types.size(), point_of, grid));
  char stem[512];
  std::snprintf(stem, sizeof(stem), "%s_%04zu", name_.c_str(), entries_.size());
  const std::string pvtu = stem + std::string(".pvtu");
  PetscCall(write_pieces(comm_, directory_, pvtu, grid));
  entries_.emplace_back(time, pvtu);
  pvd_ = (fs::path(directory_) / (name_ + ".pvd")).string();
  PetscCall(write_collection(comm_, pvd_, entries_));
  PetscFunctionReturn(0);
}

} // namespace karman::io
