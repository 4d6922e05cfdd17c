// Mesh loading, checking and distribution (see include/karman/mesh/mesh.hpp); the flattening
// into arrays is in mesh_flattening.cpp.
//
// Steps: (1) rank 0 reads the .msh into a serial DMPlex with one label per Gmsh
// physical name; (2) rank 0 checks the boundary names of the case against the mesh
// (collective verdict); (3) DMPlexDistribute + DMPlexDistributeOverlap(2) with
// face adjacency; (4) the distributed DMPlex is flattened into arrays.
#include "karman/mesh/mesh.hpp"

#include "karman/core/parallel.hpp"
#include "karman/mesh/mesh_flattening.hpp"

#include <petscsf.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdint> // (scotch.h uses int64_t without including it)
#include <scotch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

namespace karman::mesh {
namespace {

bool is_builtin_label(const std::string &name) {
  static const std::set<std::string> builtin = {"depth",     "celltype",    "Cell Sets",
                                                "Face Sets", "Vertex Sets", "Edge Sets",
                                                "marker",    kBoundaryLabel};
  return builtin.count(name) > 0;
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s.empty() ? "(none)" : s;
}

// All points of a label, over all its values.
PetscErrorCode label_points(DMLabel label, std::set<PetscInt> *points) {
  PetscFunctionBeginUser;
  IS values;
  PetscCall(DMLabelGetValueIS(label, &values));
  PetscInt nv;
  const PetscInt *v;
  PetscCall(ISGetLocalSize(values, &nv));
  PetscCall(ISGetIndices(values, &v));
  for (PetscInt i = 0; i < nv; ++i) {
    IS stratum;
    PetscCall(DMLabelGetStratumIS(label, v[i], &stratum));
    if (!stratum) continue;
    PetscInt n;
    const PetscInt *p;
    PetscCall(ISGetLocalSize(stratum, &n));
    PetscCall(ISGetIndices(stratum, &p));
    points->insert(p, p + n);
    PetscCall(ISRestoreIndices(stratum, &p));
    PetscCall(ISDestroy(&stratum));
  }
  PetscCall(ISRestoreIndices(values, &v));
  PetscCall(ISDestroy(&values));
  PetscFunctionReturn(0);
}

// Rank 0: checks the case's boundary names against the serial mesh.  Returns "" or the message.
PetscErrorCode check_boundaries(DM dm, const std::vector<std::string> &names,
                                const std::string &case_file, const std::string &msh_file,
                                std::string *error) {
  PetscFunctionBeginUser;
  DMLabel boundary;
  PetscCall(DMGetLabel(dm, kBoundaryLabel, &boundary));
  PetscInt fStart, fEnd;
  PetscCall(DMPlexGetHeightStratum(dm, 1, &fStart, &fEnd));
  std::set<PetscInt> boundary_faces;
  PetscCall(label_points(boundary, &boundary_faces));

  // Gmsh physical groups that hold boundary faces, and those that do not.
  std::map<std::string, std::set<PetscInt>> groups;
  std::vector<std::string> other_groups;
  PetscInt nlabels;
  PetscCall(DMGetNumLabels(dm, &nlabels));
  for (PetscInt l = 0; l < nlabels; ++l) {
    const char *lname;
    PetscCall(DMGetLabelName(dm, l, &lname));
    if (is_builtin_label(lname)) continue;
    DMLabel label;
    PetscCall(DMGetLabel(dm, lname, &label));
    std::set<PetscInt> points, faces;
    PetscCall(label_points(label, &points));
    for (PetscInt p : points)
      if (boundary_faces.count(p)) faces.insert(p);
    if (faces.empty())
      other_groups.push_back(lname);
    else
      groups[lname] = faces;
  }
  std::vector<std::string> group_names;
  for (const auto &g : groups) group_names.push_back(g.first);

  for (const auto &n : names) {
    if (groups.count(n)) continue;
    const bool is_other =
        std::find(other_groups.begin(), other_groups.end(), n) != other_groups.end();
    *error = case_file + ": boundaries." + n + ": " +
             (is_other ? "physical group '" + n + "' of " + msh_file + " holds no boundary faces"
                       : "the mesh " + msh_file + " has no boundary named '" + n + "'") +
             " (mesh boundaries: " + join(group_names) + ")";
    PetscFunctionReturn(0);
  }
  std::map<PetscInt, int> count;
  for (const auto &n : names)
    for (PetscInt f : groups[n]) ++count[f];
  std::vector<std::string> missing;
  for (const auto &g : groups)
    if (std::find(names.begin(), names.end(), g.first) == names.end()) missing.push_back(g.first);
  if (!missing.empty()) {
    *error = case_file + ": the mesh boundary " + join(missing) + " of " + msh_file +
             " has no entry in 'boundaries' (every boundary needs a condition)";
    PetscFunctionReturn(0);
  }
  std::size_t unassigned = 0, doubled = 0;
  for (PetscInt f : boundary_faces) {
    auto it = count.find(f);
    if (it == count.end())
      ++unassigned;
    else if (it->second > 1)
      ++doubled;
  }
  if (unassigned) {
    *error = msh_file + ": " + std::to_string(unassigned) +
             " boundary faces belong to no physical group; give every boundary curve/surface a "
             "Physical name in the .geo";
  } else if (doubled) {
    *error = case_file + ": " + std::to_string(doubled) +
             " boundary faces belong to two of the boundaries listed in 'boundaries'";
  }
  PetscFunctionReturn(0);
}

} // namespace

std::vector<PetscInt> Mesh::boundary_faces(int patch) const {
  std::vector<PetscInt> faces;
  for (PetscInt f : patch_faces[patch])
    if (owned(face_left[f])) faces.push_back(f);
  return faces;
}

bool has_tetrahedra(const Mesh &mesh) {
  int tets = 0;
  for (PetscInt c = 0; c < mesh.n_owned_cells && !tets; ++c)
    tets = mesh.cell_shape[c] == CellShape::Tetrahedron;
  MPI_Allreduce(MPI_IN_PLACE, &tets, 1, MPI_INT, MPI_MAX, mesh.comm);
  return tets != 0;
}

PetscErrorCode sum_vertex_copies(const Mesh &mesh, std::vector<Vec3<double>> &values) {
  PetscFunctionBeginUser;
  PetscMPIInt size, rank;
  PetscCallMPI(MPI_Comm_size(mesh.comm, &size));
  PetscCallMPI(MPI_Comm_rank(mesh.comm, &rank));
  if (size == 1) PetscFunctionReturn(0);
  const PetscInt N = mesh.n_global_vertices;
  auto begin = [&](PetscMPIInt r) {
    return static_cast<PetscInt>((static_cast<long long>(N) * r) / size);
  };
  const PetscInt nroots = begin(rank + 1) - begin(rank);
  PetscSFNode *remote;
  PetscCall(PetscMalloc1(mesh.n_vertices, &remote));
  for (PetscInt v = 0; v < mesh.n_vertices; ++v) {
    const PetscInt g = mesh.vertex_gid[v];
    PetscMPIInt r = static_cast<PetscMPIInt>((static_cast<long long>(g) * size) / N);
    while (r + 1 < size && begin(r + 1) <= g) ++r;
    while (r > 0 && begin(r) > g) --r;
    remote[v].rank = r;
    remote[v].index = g - begin(r);
  }
  PetscSF sf;
  PetscCall(PetscSFCreate(mesh.comm, &sf));
  PetscCall(PetscSFSetGraph(sf, nroots, mesh.n_vertices, nullptr, PETSC_COPY_VALUES, remote,
                            PETSC_OWN_POINTER));
  PetscCall(PetscSFSetUp(sf));
  MPI_Datatype unit;
  PetscCallMPI(MPI_Type_contiguous(3, MPI_DOUBLE, &unit));
  PetscCallMPI(MPI_Type_commit(&unit));
  std::vector<double> roots(3 * nroots, 0.0), leaves(3 * mesh.n_vertices);
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    for (int d = 0; d < 3; ++d) leaves[3 * v + d] = values[v][d];
  PetscCall(PetscSFReduceBegin(sf, unit, leaves.data(), roots.data(), MPI_SUM));
  PetscCall(PetscSFReduceEnd(sf, unit, leaves.data(), roots.data(), MPI_SUM));
  PetscCall(PetscSFBcastBegin(sf, unit, roots.data(), leaves.data(), MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf, unit, roots.data(), leaves.data(), MPI_REPLACE));
  for (PetscInt v = 0; v < mesh.n_vertices; ++v)
    for (int d = 0; d < 3; ++d) values[v][d] = leaves[3 * v + d];
  PetscCallMPI(MPI_Type_free(&unit));
  PetscCall(PetscSFDestroy(&sf));
  PetscFunctionReturn(0);
}

int vtk_cell_type(CellShape shape) {
  switch (shape) {
  case CellShape::Triangle:
    return 5;
  case CellShape::Quadrilateral:
    return 9;
  case CellShape::Tetrahedron:
    return 10;
  case CellShape::Hexahedron:
    return 12;
  case CellShape::Prism:
    return 13;
  case CellShape::Pyramid:
    return 14;
  }
  return 0;
}

int Mesh::patch_index(const std::string &name) const {
  for (std::size_t i = 0; i < patch_names.size(); ++i)
    if (patch_names[i] == name) return static_cast<int>(i);
  return -1;
}

namespace {

// (1) a readable Gmsh file?  (checked on rank 0 before PETSc's reader, which reads there)
PetscErrorCode check_msh_file(MPI_Comm comm, const std::string &msh_file) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error;
  if (rank == 0) {
    std::ifstream in(msh_file);
    std::string first;
    if (!in.good())
      error = msh_file + ": mesh file not found or not readable";
    else if (!std::getline(in, first) || first.rfind("$MeshFormat", 0) != 0)
      error = msh_file + ": not a Gmsh .msh file (first line should be $MeshFormat)";
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_USER_INPUT, "%s", error.c_str());
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode count_cells(MPI_Comm comm, const std::string &msh_file, long *cells) {
  PetscFunctionBeginUser;
  PetscCall(check_msh_file(comm, msh_file));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  // (rank 0 reads: a reader's error there becomes the collective one below)
  long n = -1;
  if (rank == 0) {
    DM dm = nullptr;
    PetscInt cs, ce;
    if (!DMPlexCreateFromFile(PETSC_COMM_SELF, msh_file.c_str(), "karman", PETSC_FALSE, &dm) &&
        !DMPlexGetHeightStratum(dm, 0, &cs, &ce))
      n = static_cast<long>(ce - cs);
    PetscCall(DMDestroy(&dm));
  }
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_LONG, 0, comm));
  PetscCheck(n >= 0, comm, PETSC_ERR_FILE_READ, "%s: cannot read the mesh's cells",
             msh_file.c_str());
  *cells = n;
  PetscFunctionReturn(0);
}

namespace {

// (1)-(2) the serial DMPlex of the file (on rank 0), its boundary faces marked, the case's
// boundary names checked against it (collective verdict)
PetscErrorCode read_serial(MPI_Comm comm, const std::string &msh_file,
                           const std::vector<std::string> &boundary_names,
                           const std::string &case_file, DM *dm, PetscInt *dim) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(check_msh_file(comm, msh_file));
  PetscCall(PetscOptionsSetValue(nullptr, "-dm_plex_gmsh_use_regions", "true"));
  PetscCall(DMPlexCreateFromFile(comm, msh_file.c_str(), "karman", PETSC_TRUE, dm));
  PetscCall(PetscOptionsClearValue(nullptr, "-dm_plex_gmsh_use_regions"));
  PetscCall(DMGetDimension(*dm, dim));
  {
    DMLabel label;
    PetscCall(DMCreateLabel(*dm, kBoundaryLabel));
    PetscCall(DMGetLabel(*dm, kBoundaryLabel, &label));
    PetscCall(DMPlexMarkBoundaryFaces(*dm, 1, label));
  }
  std::string error;
  if (rank == 0) {
    if (*dim < 2 || *dim > 3)
      error = msh_file + ": mesh dimension " + std::to_string(*dim) + " (expected 2 or 3)";
    else
      PetscCall(check_boundaries(*dm, boundary_names, case_file, msh_file, &error));
  }
  PetscCall(broadcast_string(comm, &error));
  if (!error.empty()) PetscCall(DMDestroy(dm));
  PetscCheck(error.empty(), comm, PETSC_ERR_USER_INPUT, "%s", error.c_str());
  PetscFunctionReturn(0);
}

// (3) distribution with two layers of face-neighbour overlap: *dm replaced by the distributed
// DMPlex; original[p - pStart] the serial point number of each local point p.
PetscErrorCode distribute(MPI_Comm comm, DM *dm, SerialCounts *serial,
                          std::vector<PetscInt> *original) {
  PetscFunctionBeginUser;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscInt pStart0, pEnd0;
  PetscCall(DMPlexGetChart(*dm, &pStart0, &pEnd0));
  {
    PetscInt cs, ce, vs, ve;
    PetscCall(DMPlexGetHeightStratum(*dm, 0, &cs, &ce));
    PetscCall(DMPlexGetDepthStratum(*dm, 0, &vs, &ve));
    PetscCheck(cs == 0 || ce == cs, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "cells do not start at point 0");
    serial->vStart = vs, serial->n_vertices = ve - vs, serial->n_cells = ce - cs;
  }
  PetscCallMPI(MPI_Bcast(&serial->vStart, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&serial->n_vertices, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&serial->n_cells, 1, MPIU_INT, 0, comm));
  PetscCall(DMSetBasicAdjacency(*dm, PETSC_TRUE, PETSC_FALSE));
  original->resize(pEnd0 - pStart0);
  for (PetscInt p = pStart0; p < pEnd0; ++p) (*original)[p - pStart0] = p;
  if (size == 1) PetscFunctionReturn(0);
  PetscPartitioner part;
  PetscCall(DMPlexGetPartitioner(*dm, &part));
  PetscCall(PetscPartitionerSetFromOptions(part));
  // PT-Scotch (PETSc's default partitioner here) is not reproducible by default: its graph
  // coarsening runs on threads (Scotch 7), and its random generator is seeded from the clock
  // and never reset, so the same mesh got another partition in every process and at every
  // load.  One thread (unless SCOTCH_PTHREAD_NUMBER is set) and a fixed seed, reset before
  // each distribution, make the partition -- and so every parallel run -- reproducible.
  setenv("SCOTCH_PTHREAD_NUMBER", "1", 0);
  SCOTCH_randomSeed(1);
  SCOTCH_randomReset();
  DM dist = nullptr, over = nullptr;
  PetscSF sf_mig = nullptr, sf_over = nullptr;
  PetscCall(DMPlexDistribute(*dm, 0, &sf_mig, &dist));
  PetscCheck(dist, comm, PETSC_ERR_PLIB, "mesh distribution failed");
  PetscInt s, e;
  PetscCall(DMPlexGetChart(dist, &s, &e));
  std::vector<PetscInt> ids1(e - s, -1);
  PetscCall(PetscSFBcastBegin(sf_mig, MPIU_INT, original->data(), ids1.data(), MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf_mig, MPIU_INT, original->data(), ids1.data(), MPI_REPLACE));
  PetscCall(PetscSFDestroy(&sf_mig));
  PetscCall(DMDestroy(dm));
  PetscCall(DMSetBasicAdjacency(dist, PETSC_TRUE, PETSC_FALSE));
  PetscCall(DMPlexDistributeOverlap(dist, 2, &sf_over, &over));
  if (over) {
    PetscCall(DMPlexGetChart(over, &s, &e));
    std::vector<PetscInt> ids2(e - s, -1);
    PetscCall(PetscSFBcastBegin(sf_over, MPIU_INT, ids1.data(), ids2.data(), MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf_over, MPIU_INT, ids1.data(), ids2.data(), MPI_REPLACE));
    PetscCall(PetscSFDestroy(&sf_over));
    PetscCall(DMDestroy(&dist));
    *dm = over;
    *original = std::move(ids2);
  } else {
    *dm = dist;
    *original = std::move(ids1);
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode load_mesh(MPI_Comm comm, const std::string &msh_file,
                         const std::vector<std::string> &boundary_names,
                         const std::string &case_file, Mesh *mesh) {
  PetscFunctionBeginUser;
  DM dm;
  PetscInt dim;
  PetscCall(read_serial(comm, msh_file, boundary_names, case_file, &dm, &dim));
  SerialCounts serial;
  std::vector<PetscInt> original; // serial point number of each local point
  PetscCall(distribute(comm, &dm, &serial, &original));
  mesh->comm = comm;
  // the flattened mesh below is all karman uses: the DMPlex (with its labels and overlap) is
  // destroyed at the end, also on an error (it is the largest part of a loaded mesh)
  struct DestroyAtExit {
    DM *dm;
    ~DestroyAtExit() { DMDestroy(dm); }
  } destroy_at_exit{&dm};
  mesh->dim = static_cast<int>(dim);
  mesh->source = msh_file;
  PetscCall(flatten_mesh(dm, original, serial, boundary_names, mesh));
  // the DMPlex and the serial mesh that rank 0 read are gone: give their memory back to the
  // system, so that it does not stay in the heap beside the solver's (on 312k cells: 230 MB)
  PetscCall(DMDestroy(&dm));
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  PetscFunctionReturn(0);
}

} // namespace karman::mesh
