// Mesh loading, checking, distribution and flattening (see include/karman/mesh/mesh.hpp).
//
// Steps: (1) rank 0 reads the .msh into a serial DMPlex with one label per Gmsh
// physical name; (2) rank 0 checks the boundary names of the case against the mesh
// (collective verdict); (3) DMPlexDistribute + DMPlexDistributeOverlap(2) with
// face adjacency; (4) the distributed DMPlex is flattened into arrays.
#include "karman/mesh/mesh.hpp"

#include "karman/core/parallel.hpp"

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

const char *kBoundaryLabel = "karman_boundary";

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

CellShape shape_of(DMPolytopeType t, bool *ok) {
  *ok = true;
  switch (t) {
  case DM_POLYTOPE_TRIANGLE:
    return CellShape::Triangle;
  case DM_POLYTOPE_QUADRILATERAL:
    return CellShape::Quadrilateral;
  case DM_POLYTOPE_TETRAHEDRON:
    return CellShape::Tetrahedron;
  case DM_POLYTOPE_HEXAHEDRON:
    return CellShape::Hexahedron;
  case DM_POLYTOPE_TRI_PRISM:
    return CellShape::Prism;
  case DM_POLYTOPE_PYRAMID:
    return CellShape::Pyramid;
  default:
    *ok = false;
    return CellShape::Triangle;
  }
}

// Vertices (points) of a face or cell in closure order.
PetscErrorCode closure_vertices(DM dm, PetscInt point, PetscInt vStart, PetscInt vEnd,
                                std::vector<PetscInt> *out) {
  PetscFunctionBeginUser;
  PetscInt n, *closure = nullptr;
  out->clear();
  PetscCall(DMPlexGetTransitiveClosure(dm, point, PETSC_TRUE, &n, &closure));
  for (PetscInt k = 0; k < n; ++k) {
    const PetscInt p = closure[2 * k];
    if (p >= vStart && p < vEnd) out->push_back(p);
  }
  PetscCall(DMPlexRestoreTransitiveClosure(dm, point, PETSC_TRUE, &n, &closure));
  PetscFunctionReturn(0);
}

using V3 = Vec3<double>;

V3 average(const std::vector<PetscInt> &v, const std::vector<V3> &x) {
  V3 s;
  for (PetscInt i : v) s += x[i];
  return (1.0 / static_cast<double>(v.size())) * s;
}

// Area vector of a polygon (2D: a segment, rotated) from its ordered vertices.
V3 area_vector(const std::vector<PetscInt> &v, const std::vector<V3> &x, int dim) {
  if (dim == 2) {
    const V3 t = x[v[1]] - x[v[0]];
    return V3(t[1], -t[0], 0.0);
  }
  const V3 c = average(v, x);
  V3 s;
  for (std::size_t k = 0; k < v.size(); ++k)
    s += 0.5 * cross(x[v[k]] - c, x[v[(k + 1) % v.size()]] - c);
  return s;
}

// Puts a 3D cell's vertices in VTK order from its faces (each a cyclic vertex list).
std::vector<PetscInt> vtk_order_3d(CellShape shape, const std::vector<std::vector<PetscInt>> &faces,
                                   const std::vector<PetscInt> &closure, const std::vector<V3> &x) {
  std::set<std::pair<PetscInt, PetscInt>> edges;
  for (const auto &f : faces)
    for (std::size_t k = 0; k < f.size(); ++k) {
      PetscInt a = f[k], b = f[(k + 1) % f.size()];
      edges.insert({std::min(a, b), std::max(a, b)});
    }
  auto linked = [&](PetscInt a, PetscInt b) {
    return edges.count({std::min(a, b), std::max(a, b)}) > 0;
  };
  const V3 centre = average(closure, x);
  std::vector<PetscInt> out;
  if (shape == CellShape::Tetrahedron) {
    out = closure;
    if (dot(cross(x[out[1]] - x[out[0]], x[out[2]] - x[out[0]]), x[out[3]] - x[out[0]]) < 0)
      std::swap(out[1], out[2]);
    return out;
  }
  const std::size_t base_size = shape == CellShape::Prism ? 3 : 4;
  std::vector<PetscInt> base;
  for (const auto &f : faces)
    if (f.size() == base_size) {
      base = f;
      break;
    }
  // base normal: towards the opposite face (hex, pyramid) or away from it (prism)
  const V3 n = area_vector(base, x, 3);
  const bool inward = dot(n, centre - average(base, x)) > 0;
  const bool want_inward = shape != CellShape::Prism;
  if (inward != want_inward) std::reverse(base.begin(), base.end());
  out = base;
  if (shape == CellShape::Pyramid) {
    for (PetscInt p : closure)
      if (std::find(base.begin(), base.end(), p) == base.end()) out.push_back(p);
    return out;
  }
  for (PetscInt b : base)
    for (PetscInt p : closure)
      if (std::find(base.begin(), base.end(), p) == base.end() && linked(b, p)) {
        out.push_back(p);
        break;
      }
  return out;
}

} // namespace

std::vector<PetscInt> Mesh::boundary_faces(int patch) const {
  std::vector<PetscInt> faces;
  for (PetscInt f : patch_faces[patch])
    if (owned(face_left[f])) faces.push_back(f);
  return faces;
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

// The serial mesh's counts (rank 0's, known on every rank).
struct SerialCounts {
  PetscInt vStart = 0, n_vertices = 0, n_cells = 0;
};

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

// (4) The flattening of a distributed DMPlex: its strata, which points are ghosts, and the
// numbering of the kept cells, vertices and faces (plex point <-> flattened index).
struct Flattening {
  DM dm = nullptr;
  PetscInt pStart = 0, pEnd = 0, cStart = 0, cEnd = 0, fStart = 0, fEnd = 0, vStart = 0, vEnd = 0;
  std::vector<char> ghost; ///< per point: a leaf of the point SF
  std::vector<int> layer;  ///< per plex cell: 0 owned, 1-2 overlap, 99 dropped
  std::vector<PetscInt> cell_of_plex, plex_of_cell;
  std::vector<PetscInt> vertex_of_plex, plex_of_vertex;
  std::vector<std::vector<PetscInt>> cell_closure; ///< per kept cell: its vertices (flattened)
  std::vector<PetscInt> face_of_plex, plex_of_face;
  DMLabel boundary_label = nullptr;
};

PetscErrorCode strata_and_ghosts(DM dm, Flattening *fl) {
  PetscFunctionBeginUser;
  fl->dm = dm;
  PetscCall(DMPlexGetChart(dm, &fl->pStart, &fl->pEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &fl->cStart, &fl->cEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 1, &fl->fStart, &fl->fEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &fl->vStart, &fl->vEnd));
  fl->ghost.assign(fl->pEnd - fl->pStart, 0);
  PetscSF sf;
  PetscInt nroots, nleaves;
  const PetscInt *ilocal;
  const PetscSFNode *iremote;
  PetscCall(DMGetPointSF(dm, &sf));
  PetscCall(PetscSFGetGraph(sf, &nroots, &nleaves, &ilocal, &iremote));
  if (nroots >= 0)
    for (PetscInt i = 0; i < nleaves; ++i) fl->ghost[ilocal ? ilocal[i] : i] = 1;
  PetscCall(DMGetLabel(dm, kBoundaryLabel, &fl->boundary_label));
  PetscFunctionReturn(0);
}

// cell layers by breadth-first search over faces; the kept cells numbered layer by layer
PetscErrorCode number_cells(Flattening *fl, Mesh *mesh) {
  PetscFunctionBeginUser;
  DM dm = fl->dm;
  const PetscInt cStart = fl->cStart, cEnd = fl->cEnd;
  const PetscInt nc_plex = cEnd - cStart;
  std::vector<int> &layer = fl->layer;
  layer.assign(nc_plex, 99);
  std::vector<PetscInt> frontier;
  for (PetscInt c = cStart; c < cEnd; ++c)
    if (!fl->ghost[c]) layer[c - cStart] = 0, frontier.push_back(c);
  for (int depth = 1; depth <= 2; ++depth) {
    std::vector<PetscInt> next;
    for (PetscInt c : frontier) {
      PetscInt nf;
      const PetscInt *cone;
      PetscCall(DMPlexGetConeSize(dm, c, &nf));
      PetscCall(DMPlexGetCone(dm, c, &cone));
      for (PetscInt k = 0; k < nf; ++k) {
        PetscInt ns;
        const PetscInt *supp;
        PetscCall(DMPlexGetSupportSize(dm, cone[k], &ns));
        PetscCall(DMPlexGetSupport(dm, cone[k], &supp));
        for (PetscInt j = 0; j < ns; ++j)
          if (layer[supp[j] - cStart] > depth)
            layer[supp[j] - cStart] = depth, next.push_back(supp[j]);
      }
    }
    frontier.swap(next);
  }
  fl->cell_of_plex.assign(nc_plex, -1);
  fl->plex_of_cell.clear();
  for (int l = 0; l <= 2; ++l)
    for (PetscInt c = cStart; c < cEnd; ++c)
      if (layer[c - cStart] == l) {
        fl->cell_of_plex[c - cStart] = static_cast<PetscInt>(fl->plex_of_cell.size());
        fl->plex_of_cell.push_back(c);
      }
  mesh->n_cells = static_cast<PetscInt>(fl->plex_of_cell.size());
  mesh->n_owned_cells = 0;
  for (PetscInt c = cStart; c < cEnd; ++c) mesh->n_owned_cells += layer[c - cStart] == 0;
  PetscFunctionReturn(0);
}

// the vertices of the kept cells: numbering, coordinates, serial numbers, ownership
PetscErrorCode flatten_vertices(const std::vector<PetscInt> &original, PetscInt serial_vStart,
                                Flattening *fl, Mesh *mesh) {
  PetscFunctionBeginUser;
  DM dm = fl->dm;
  const PetscInt vStart = fl->vStart, ncell = mesh->n_cells;
  fl->vertex_of_plex.assign(fl->vEnd - vStart, -1);
  fl->plex_of_vertex.clear();
  fl->cell_closure.assign(ncell, {});
  for (PetscInt i = 0; i < ncell; ++i) {
    PetscCall(closure_vertices(dm, fl->plex_of_cell[i], vStart, fl->vEnd, &fl->cell_closure[i]));
    for (PetscInt &v : fl->cell_closure[i]) {
      if (fl->vertex_of_plex[v - vStart] < 0) {
        fl->vertex_of_plex[v - vStart] = static_cast<PetscInt>(fl->plex_of_vertex.size());
        fl->plex_of_vertex.push_back(v);
      }
      v = fl->vertex_of_plex[v - vStart];
    }
  }
  const PetscInt nvert = static_cast<PetscInt>(fl->plex_of_vertex.size());
  mesh->n_vertices = nvert;
  mesh->coordinates.assign(nvert, V3());
  mesh->vertex_gid.resize(nvert);
  mesh->vertex_owned.resize(nvert);
  Vec coords;
  PetscSection cs;
  const PetscScalar *a;
  PetscInt cdim;
  PetscCall(DMGetCoordinatesLocal(dm, &coords));
  PetscCall(DMGetCoordinateSection(dm, &cs));
  PetscCall(DMGetCoordinateDim(dm, &cdim));
  PetscCall(VecGetArrayRead(coords, &a));
  for (PetscInt i = 0; i < nvert; ++i) {
    PetscInt off;
    PetscCall(PetscSectionGetOffset(cs, fl->plex_of_vertex[i], &off));
    for (PetscInt d = 0; d < std::min<PetscInt>(cdim, 3); ++d)
      mesh->coordinates[i][d] = PetscRealPart(a[off + d]);
    mesh->vertex_gid[i] = original[fl->plex_of_vertex[i] - fl->pStart] - serial_vStart;
    mesh->vertex_owned[i] = !fl->ghost[fl->plex_of_vertex[i]];
  }
  PetscCall(VecRestoreArrayRead(coords, &a));
  PetscFunctionReturn(0);
}

// faces: flux faces (of owned and layer-1 cells) first, then the remaining faces of layer-2
// cells; their cells (left < right), vertices (area vector from left to right, or outwards)
PetscErrorCode flatten_faces(Flattening *fl, Mesh *mesh) {
  PetscFunctionBeginUser;
  DM dm = fl->dm;
  const PetscInt cStart = fl->cStart, fStart = fl->fStart, ncell = mesh->n_cells;
  const auto &X = mesh->coordinates;
  fl->face_of_plex.assign(fl->fEnd - fStart, -1);
  fl->plex_of_face.clear();
  for (int pass = 0; pass < 2; ++pass)
    for (PetscInt i = 0; i < ncell; ++i) {
      const int l = fl->layer[fl->plex_of_cell[i] - cStart];
      if ((pass == 0) != (l <= 1)) continue;
      PetscInt nf;
      const PetscInt *cone;
      PetscCall(DMPlexGetConeSize(dm, fl->plex_of_cell[i], &nf));
      PetscCall(DMPlexGetCone(dm, fl->plex_of_cell[i], &cone));
      for (PetscInt k = 0; k < nf; ++k)
        if (fl->face_of_plex[cone[k] - fStart] < 0) {
          fl->face_of_plex[cone[k] - fStart] = static_cast<PetscInt>(fl->plex_of_face.size());
          fl->plex_of_face.push_back(cone[k]);
        }
    }
  const PetscInt nface = static_cast<PetscInt>(fl->plex_of_face.size());
  mesh->n_faces = nface;
  mesh->face_left.assign(nface, -1);
  mesh->face_right.assign(nface, -1);
  mesh->face_patch.assign(nface, -1);
  mesh->face_vertex_ptr.assign(1, 0);
  mesh->face_vertex.clear();
  PetscInt n_flux_faces = 0;
  for (PetscInt f = 0; f < nface; ++f) {
    const PetscInt pf = fl->plex_of_face[f];
    PetscInt ns;
    const PetscInt *supp;
    PetscCall(DMPlexGetSupportSize(dm, pf, &ns));
    PetscCall(DMPlexGetSupport(dm, pf, &supp));
    std::vector<PetscInt> kept;
    bool flux_face = false;
    for (PetscInt j = 0; j < ns; ++j) {
      const PetscInt c = fl->cell_of_plex[supp[j] - cStart];
      if (c >= 0) kept.push_back(c);
      if (c >= 0 && fl->layer[supp[j] - cStart] <= 1) flux_face = true;
    }
    std::sort(kept.begin(), kept.end());
    mesh->face_left[f] = kept[0];
    if (kept.size() > 1) mesh->face_right[f] = kept[1];
    if (flux_face) {
      ++n_flux_faces;
      PetscInt is_boundary = -1;
      PetscCall(DMLabelGetValue(fl->boundary_label, pf, &is_boundary));
      PetscCheck(ns == 2 || is_boundary == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "mesh overlap too small: face %d of a layer-%d cell has no neighbour", (int)pf,
                 fl->layer[fl->plex_of_cell[kept[0]] - cStart]);
    }
    std::vector<PetscInt> fv;
    PetscCall(closure_vertices(dm, pf, fl->vStart, fl->vEnd, &fv));
    for (PetscInt &v : fv) v = fl->vertex_of_plex[v - fl->vStart];
    // orient the area vector from left to right (or outwards)
    const V3 s = area_vector(fv, X, mesh->dim);
    const V3 xl = average(fl->cell_closure[kept[0]], X);
    const V3 towards =
        kept.size() > 1 ? average(fl->cell_closure[kept[1]], X) - xl : average(fv, X) - xl;
    if (dot(s, towards) < 0) std::reverse(fv.begin(), fv.end());
    mesh->face_vertex.insert(mesh->face_vertex.end(), fv.begin(), fv.end());
    mesh->face_vertex_ptr.push_back(static_cast<PetscInt>(mesh->face_vertex.size()));
  }
  mesh->n_flux_faces = n_flux_faces;
  PetscFunctionReturn(0);
}

// cells: layer, serial number, shape, faces, VTK vertex order
PetscErrorCode flatten_cells(const std::vector<PetscInt> &original, const Flattening &fl,
                             Mesh *mesh) {
  PetscFunctionBeginUser;
  DM dm = fl.dm;
  const PetscInt ncell = mesh->n_cells;
  const auto &X = mesh->coordinates;
  mesh->cell_layer.resize(ncell);
  mesh->cell_gid.resize(ncell);
  mesh->cell_shape.resize(ncell);
  mesh->cell_vertex_ptr.assign(1, 0);
  mesh->cell_face_ptr.assign(1, 0);
  mesh->cell_vertex.clear();
  mesh->cell_face.clear();
  for (PetscInt i = 0; i < ncell; ++i) {
    const PetscInt pc = fl.plex_of_cell[i];
    mesh->cell_layer[i] = fl.layer[pc - fl.cStart];
    mesh->cell_gid[i] = original[pc - fl.pStart];
    DMPolytopeType ct;
    PetscCall(DMPlexGetCellType(dm, pc, &ct));
    bool ok;
    mesh->cell_shape[i] = shape_of(ct, &ok);
    PetscCheck(ok, mesh->comm, PETSC_ERR_SUP, "%s: unsupported cell type %s", mesh->source.c_str(),
               DMPolytopeTypes[ct]);
    PetscInt nf;
    const PetscInt *cone;
    PetscCall(DMPlexGetConeSize(dm, pc, &nf));
    PetscCall(DMPlexGetCone(dm, pc, &cone));
    std::vector<std::vector<PetscInt>> faces;
    for (PetscInt k = 0; k < nf; ++k) {
      const PetscInt f = fl.face_of_plex[cone[k] - fl.fStart];
      mesh->cell_face.push_back(f);
      faces.emplace_back(mesh->face_vertex.begin() + mesh->face_vertex_ptr[f],
                         mesh->face_vertex.begin() + mesh->face_vertex_ptr[f + 1]);
    }
    mesh->cell_face_ptr.push_back(static_cast<PetscInt>(mesh->cell_face.size()));
    std::vector<PetscInt> order = fl.cell_closure[i];
    if (mesh->dim == 3) order = vtk_order_3d(mesh->cell_shape[i], faces, fl.cell_closure[i], X);
    mesh->cell_vertex.insert(mesh->cell_vertex.end(), order.begin(), order.end());
    mesh->cell_vertex_ptr.push_back(static_cast<PetscInt>(mesh->cell_vertex.size()));
  }
  PetscFunctionReturn(0);
}

// boundary patches: the boundary flux faces in each named label
PetscErrorCode boundary_patches(const std::vector<std::string> &boundary_names,
                                const Flattening &fl, Mesh *mesh) {
  PetscFunctionBeginUser;
  mesh->patch_names = boundary_names;
  mesh->patch_faces.assign(boundary_names.size(), {});
  for (std::size_t b = 0; b < boundary_names.size(); ++b) {
    DMLabel label;
    PetscCall(DMGetLabel(fl.dm, boundary_names[b].c_str(), &label));
    PetscCheck(label, PETSC_COMM_SELF, PETSC_ERR_PLIB, "label %s lost in distribution",
               boundary_names[b].c_str());
    for (PetscInt f = 0; f < mesh->n_flux_faces; ++f) {
      if (mesh->face_right[f] >= 0) continue;
      const PetscInt pf = fl.plex_of_face[f];
      PetscInt is_boundary = -1, in_label = -1;
      PetscCall(DMLabelGetValue(fl.boundary_label, pf, &is_boundary));
      if (is_boundary != 1) continue;
      PetscCall(DMLabelGetValue(label, pf, &in_label));
      if (in_label < 0) continue;
      mesh->face_patch[f] = static_cast<int>(b);
      mesh->patch_faces[b].push_back(f);
    }
  }
  PetscFunctionReturn(0);
}

// global numbering: owned cells contiguous per rank; ghosts learn theirs from the owner
PetscErrorCode number_globally(const SerialCounts &serial, const Flattening &fl, Mesh *mesh) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = mesh->comm;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscInt offset = 0, owned = mesh->n_owned_cells;
  PetscCallMPI(MPI_Exscan(&owned, &offset, 1, MPIU_INT, MPI_SUM, comm));
  if (rank == 0) offset = 0;
  mesh->global_cell_offset = offset;
  PetscCallMPI(MPI_Allreduce(&owned, &mesh->n_global_cells, 1, MPIU_INT, MPI_SUM, comm));
  mesh->n_global_vertices = serial.n_vertices;
  PetscCheck(mesh->n_global_cells == serial.n_cells, comm, PETSC_ERR_PLIB,
             "cell count changed in distribution");
  const PetscInt ncell = mesh->n_cells;
  mesh->cell_global.assign(ncell, -1);
  std::vector<PetscInt> root(fl.pEnd - fl.pStart, -1), leaf(fl.pEnd - fl.pStart, -1);
  for (PetscInt i = 0; i < mesh->n_owned_cells; ++i) {
    mesh->cell_global[i] = offset + i;
    root[fl.plex_of_cell[i] - fl.pStart] = offset + i;
  }
  PetscSF sf;
  PetscCall(DMGetPointSF(fl.dm, &sf));
  if (size > 1) {
    PetscCall(PetscSFBcastBegin(sf, MPIU_INT, root.data(), leaf.data(), MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf, MPIU_INT, root.data(), leaf.data(), MPI_REPLACE));
  }
  for (PetscInt i = mesh->n_owned_cells; i < ncell; ++i) {
    mesh->cell_global[i] = leaf[fl.plex_of_cell[i] - fl.pStart];
    PetscCheck(mesh->cell_global[i] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "ghost cell without owner");
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
  {
    Flattening fl;
    PetscCall(strata_and_ghosts(dm, &fl));
    PetscCall(number_cells(&fl, mesh));
    PetscCall(flatten_vertices(original, serial.vStart, &fl, mesh));
    PetscCall(flatten_faces(&fl, mesh));
    PetscCall(flatten_cells(original, fl, mesh));
    PetscCall(boundary_patches(boundary_names, fl, mesh));
    PetscCall(number_globally(serial, fl, mesh));
  }
  // the DMPlex and the serial mesh that rank 0 read are gone: give their memory back to the
  // system, so that it does not stay in the heap beside the solver's (on 312k cells: 230 MB)
  PetscCall(DMDestroy(&dm));
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  PetscFunctionReturn(0);
}

} // namespace karman::mesh
