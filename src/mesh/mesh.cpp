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

PetscErrorCode load_mesh(MPI_Comm comm, const std::string &msh_file,
                         const std::vector<std::string> &boundary_names,
                         const std::string &case_file, Mesh *mesh) {
  PetscFunctionBeginUser;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));

  // (1) a readable Gmsh file?  (checked on rank 0 before PETSc's reader, which reads there)
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

  DM dm;
  PetscCall(PetscOptionsSetValue(nullptr, "-dm_plex_gmsh_use_regions", "true"));
  PetscCall(DMPlexCreateFromFile(comm, msh_file.c_str(), "karman", PETSC_TRUE, &dm));
  PetscCall(PetscOptionsClearValue(nullptr, "-dm_plex_gmsh_use_regions"));
  PetscInt dim;
  PetscCall(DMGetDimension(dm, &dim));
  {
    DMLabel label;
    PetscCall(DMCreateLabel(dm, kBoundaryLabel));
    PetscCall(DMGetLabel(dm, kBoundaryLabel, &label));
    PetscCall(DMPlexMarkBoundaryFaces(dm, 1, label));
  }

  // (2) boundary names
  if (rank == 0) {
    if (dim < 2 || dim > 3)
      error = msh_file + ": mesh dimension " + std::to_string(dim) + " (expected 2 or 3)";
    else
      PetscCall(check_boundaries(dm, boundary_names, case_file, msh_file, &error));
  }
  PetscCall(broadcast_string(comm, &error));
  if (!error.empty()) PetscCall(DMDestroy(&dm));
  PetscCheck(error.empty(), comm, PETSC_ERR_USER_INPUT, "%s", error.c_str());

  // (3) distribution with two layers of face-neighbour overlap
  PetscInt pStart0, pEnd0;
  PetscCall(DMPlexGetChart(dm, &pStart0, &pEnd0));
  PetscInt serial_vStart = 0, serial_nv = 0, serial_nc = 0;
  {
    PetscInt cs, ce, vs, ve;
    PetscCall(DMPlexGetHeightStratum(dm, 0, &cs, &ce));
    PetscCall(DMPlexGetDepthStratum(dm, 0, &vs, &ve));
    PetscCheck(cs == 0 || ce == cs, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "cells do not start at point 0");
    serial_vStart = vs, serial_nv = ve - vs, serial_nc = ce - cs;
  }
  PetscCallMPI(MPI_Bcast(&serial_vStart, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&serial_nv, 1, MPIU_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&serial_nc, 1, MPIU_INT, 0, comm));
  PetscCall(DMSetBasicAdjacency(dm, PETSC_TRUE, PETSC_FALSE));
  std::vector<PetscInt> original; // serial point number of each local point
  {
    std::vector<PetscInt> ids(pEnd0 - pStart0);
    for (PetscInt p = pStart0; p < pEnd0; ++p) ids[p - pStart0] = p;
    original = ids;
  }
  if (size > 1) {
    PetscPartitioner part;
    PetscCall(DMPlexGetPartitioner(dm, &part));
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
    PetscCall(DMPlexDistribute(dm, 0, &sf_mig, &dist));
    PetscCheck(dist, comm, PETSC_ERR_PLIB, "mesh distribution failed");
    PetscInt s, e;
    PetscCall(DMPlexGetChart(dist, &s, &e));
    std::vector<PetscInt> ids1(e - s, -1);
    PetscCall(PetscSFBcastBegin(sf_mig, MPIU_INT, original.data(), ids1.data(), MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf_mig, MPIU_INT, original.data(), ids1.data(), MPI_REPLACE));
    PetscCall(PetscSFDestroy(&sf_mig));
    PetscCall(DMDestroy(&dm));
    PetscCall(DMSetBasicAdjacency(dist, PETSC_TRUE, PETSC_FALSE));
    PetscCall(DMPlexDistributeOverlap(dist, 2, &sf_over, &over));
    if (over) {
      PetscCall(DMPlexGetChart(over, &s, &e));
      std::vector<PetscInt> ids2(e - s, -1);
      PetscCall(PetscSFBcastBegin(sf_over, MPIU_INT, ids1.data(), ids2.data(), MPI_REPLACE));
      PetscCall(PetscSFBcastEnd(sf_over, MPIU_INT, ids1.data(), ids2.data(), MPI_REPLACE));
      PetscCall(PetscSFDestroy(&sf_over));
      PetscCall(DMDestroy(&dist));
      dm = over;
      original = ids2;
    } else {
      dm = dist;
      original = ids1;
    }
  }
  mesh->comm = comm;
  // the flattened mesh below is all karman uses: the DMPlex (with its labels and overlap) is
  // destroyed at the end, also on an error (it is the largest part of a loaded mesh)
  struct DestroyAtExit {
    DM *dm;
    ~DestroyAtExit() { DMDestroy(dm); }
  } destroy_at_exit{&dm};
  mesh->dim = static_cast<int>(dim);
  mesh->source = msh_file;

  // (4) flatten
  PetscInt pStart, pEnd, cStart, cEnd, fStart, fEnd, vStart, vEnd;
  PetscCall(DMPlexGetChart(dm, &pStart, &pEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  PetscCall(DMPlexGetHeightStratum(dm, 1, &fStart, &fEnd));
  PetscCall(DMPlexGetDepthStratum(dm, 0, &vStart, &vEnd));
  std::vector<char> ghost(pEnd - pStart, 0);
  {
    PetscSF sf;
    PetscInt nroots, nleaves;
    const PetscInt *ilocal;
    const PetscSFNode *iremote;
    PetscCall(DMGetPointSF(dm, &sf));
    PetscCall(PetscSFGetGraph(sf, &nroots, &nleaves, &ilocal, &iremote));
    if (nroots >= 0)
      for (PetscInt i = 0; i < nleaves; ++i) ghost[ilocal ? ilocal[i] : i] = 1;
  }
  DMLabel boundary_label;
  PetscCall(DMGetLabel(dm, kBoundaryLabel, &boundary_label));

  // cell layers by breadth-first search over faces
  const PetscInt nc_plex = cEnd - cStart;
  std::vector<int> layer(nc_plex, 99);
  std::vector<PetscInt> frontier;
  for (PetscInt c = cStart; c < cEnd; ++c)
    if (!ghost[c]) layer[c - cStart] = 0, frontier.push_back(c);
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
  std::vector<PetscInt> cell_of_plex(nc_plex, -1), plex_of_cell;
  for (int l = 0; l <= 2; ++l)
    for (PetscInt c = cStart; c < cEnd; ++c)
      if (layer[c - cStart] == l) {
        cell_of_plex[c - cStart] = static_cast<PetscInt>(plex_of_cell.size());
        plex_of_cell.push_back(c);
      }
  const PetscInt ncell = static_cast<PetscInt>(plex_of_cell.size());
  mesh->n_cells = ncell;
  mesh->n_owned_cells = 0;
  for (PetscInt c = cStart; c < cEnd; ++c) mesh->n_owned_cells += layer[c - cStart] == 0;

  // vertices of kept cells
  std::vector<PetscInt> vertex_of_plex(vEnd - vStart, -1), plex_of_vertex;
  std::vector<std::vector<PetscInt>> cell_closure(ncell);
  for (PetscInt i = 0; i < ncell; ++i) {
    PetscCall(closure_vertices(dm, plex_of_cell[i], vStart, vEnd, &cell_closure[i]));
    for (PetscInt &v : cell_closure[i]) {
      if (vertex_of_plex[v - vStart] < 0) {
        vertex_of_plex[v - vStart] = static_cast<PetscInt>(plex_of_vertex.size());
        plex_of_vertex.push_back(v);
      }
      v = vertex_of_plex[v - vStart];
    }
  }
  const PetscInt nvert = static_cast<PetscInt>(plex_of_vertex.size());
  mesh->n_vertices = nvert;
  mesh->coordinates.assign(nvert, V3());
  mesh->vertex_gid.resize(nvert);
  mesh->vertex_owned.resize(nvert);
  {
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
      PetscCall(PetscSectionGetOffset(cs, plex_of_vertex[i], &off));
      for (PetscInt d = 0; d < std::min<PetscInt>(cdim, 3); ++d)
        mesh->coordinates[i][d] = PetscRealPart(a[off + d]);
      mesh->vertex_gid[i] = original[plex_of_vertex[i] - pStart] - serial_vStart;
      mesh->vertex_owned[i] = !ghost[plex_of_vertex[i]];
    }
    PetscCall(VecRestoreArrayRead(coords, &a));
  }
  const auto &X = mesh->coordinates;

  // faces: flux faces (of owned and layer-1 cells) first, then the remaining faces of layer-2 cells
  std::vector<PetscInt> face_of_plex(fEnd - fStart, -1), plex_of_face;
  for (int pass = 0; pass < 2; ++pass)
    for (PetscInt i = 0; i < ncell; ++i) {
      const int l = layer[plex_of_cell[i] - cStart];
      if ((pass == 0) != (l <= 1)) continue;
      PetscInt nf;
      const PetscInt *cone;
      PetscCall(DMPlexGetConeSize(dm, plex_of_cell[i], &nf));
      PetscCall(DMPlexGetCone(dm, plex_of_cell[i], &cone));
      for (PetscInt k = 0; k < nf; ++k)
        if (face_of_plex[cone[k] - fStart] < 0) {
          face_of_plex[cone[k] - fStart] = static_cast<PetscInt>(plex_of_face.size());
          plex_of_face.push_back(cone[k]);
        }
    }
  const PetscInt nface = static_cast<PetscInt>(plex_of_face.size());
  mesh->n_faces = nface;
  mesh->face_left.assign(nface, -1);
  mesh->face_right.assign(nface, -1);
  mesh->face_patch.assign(nface, -1);
  mesh->face_vertex_ptr.assign(1, 0);
  mesh->face_vertex.clear();
  PetscInt n_flux_faces = 0;
  for (PetscInt f = 0; f < nface; ++f) {
    const PetscInt pf = plex_of_face[f];
    PetscInt ns;
    const PetscInt *supp;
    PetscCall(DMPlexGetSupportSize(dm, pf, &ns));
    PetscCall(DMPlexGetSupport(dm, pf, &supp));
    std::vector<PetscInt> kept;
    bool flux_face = false;
    for (PetscInt j = 0; j < ns; ++j) {
      const PetscInt c = cell_of_plex[supp[j] - cStart];
      if (c >= 0) kept.push_back(c);
      if (c >= 0 && layer[supp[j] - cStart] <= 1) flux_face = true;
    }
    std::sort(kept.begin(), kept.end());
    mesh->face_left[f] = kept[0];
    if (kept.size() > 1) mesh->face_right[f] = kept[1];
    if (flux_face) {
      ++n_flux_faces;
      PetscInt is_boundary = -1;
      PetscCall(DMLabelGetValue(boundary_label, pf, &is_boundary));
      PetscCheck(ns == 2 || is_boundary == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "mesh overlap too small: face %d of a layer-%d cell has no neighbour", (int)pf,
                 layer[plex_of_cell[kept[0]] - cStart]);
    }
    std::vector<PetscInt> fv;
    PetscCall(closure_vertices(dm, pf, vStart, vEnd, &fv));
    for (PetscInt &v : fv) v = vertex_of_plex[v - vStart];
    // orient the area vector from left to right (or outwards)
    const V3 s = area_vector(fv, X, mesh->dim);
    const V3 xl = average(cell_closure[kept[0]], X);
    const V3 towards =
        kept.size() > 1 ? average(cell_closure[kept[1]], X) - xl : average(fv, X) - xl;
    if (dot(s, towards) < 0) std::reverse(fv.begin(), fv.end());
    mesh->face_vertex.insert(mesh->face_vertex.end(), fv.begin(), fv.end());
    mesh->face_vertex_ptr.push_back(static_cast<PetscInt>(mesh->face_vertex.size()));
  }
  mesh->n_flux_faces = n_flux_faces;

  // cells: shape, faces, VTK vertex order
  mesh->cell_layer.resize(ncell);
  mesh->cell_gid.resize(ncell);
  mesh->cell_shape.resize(ncell);
  mesh->cell_vertex_ptr.assign(1, 0);
  mesh->cell_face_ptr.assign(1, 0);
  mesh->cell_vertex.clear();
  mesh->cell_face.clear();
  for (PetscInt i = 0; i < ncell; ++i) {
    const PetscInt pc = plex_of_cell[i];
    mesh->cell_layer[i] = layer[pc - cStart];
    mesh->cell_gid[i] = original[pc - pStart];
    DMPolytopeType ct;
    PetscCall(DMPlexGetCellType(dm, pc, &ct));
    bool ok;
    mesh->cell_shape[i] = shape_of(ct, &ok);
    PetscCheck(ok, comm, PETSC_ERR_SUP, "%s: unsupported cell type %s", msh_file.c_str(),
               DMPolytopeTypes[ct]);
    PetscInt nf;
    const PetscInt *cone;
    PetscCall(DMPlexGetConeSize(dm, pc, &nf));
    PetscCall(DMPlexGetCone(dm, pc, &cone));
    std::vector<std::vector<PetscInt>> faces;
    for (PetscInt k = 0; k < nf; ++k) {
      const PetscInt f = face_of_plex[cone[k] - fStart];
      mesh->cell_face.push_back(f);
      faces.emplace_back(mesh->face_vertex.begin() + mesh->face_vertex_ptr[f],
                         mesh->face_vertex.begin() + mesh->face_vertex_ptr[f + 1]);
    }
    mesh->cell_face_ptr.push_back(static_cast<PetscInt>(mesh->cell_face.size()));
    std::vector<PetscInt> order = cell_closure[i];
    if (mesh->dim == 3) order = vtk_order_3d(mesh->cell_shape[i], faces, cell_closure[i], X);
    mesh->cell_vertex.insert(mesh->cell_vertex.end(), order.begin(), order.end());
    mesh->cell_vertex_ptr.push_back(static_cast<PetscInt>(mesh->cell_vertex.size()));
  }

  // boundary patches
  mesh->patch_names = boundary_names;
  mesh->patch_faces.assign(boundary_names.size(), {});
  for (std::size_t b = 0; b < boundary_names.size(); ++b) {
    DMLabel label;
    PetscCall(DMGetLabel(dm, boundary_names[b].c_str(), &label));
    PetscCheck(label, PETSC_COMM_SELF, PETSC_ERR_PLIB, "label %s lost in distribution",
               boundary_names[b].c_str());
    for (PetscInt f = 0; f < n_flux_faces; ++f) {
      if (mesh->face_right[f] >= 0) continue;
      const PetscInt pf = plex_of_face[f];
      PetscInt is_boundary = -1, in_label = -1;
      PetscCall(DMLabelGetValue(boundary_label, pf, &is_boundary));
      if (is_boundary != 1) continue;
      PetscCall(DMLabelGetValue(label, pf, &in_label));
      if (in_label < 0) continue;
      mesh->face_patch[f] = static_cast<int>(b);
      mesh->patch_faces[b].push_back(f);
    }
  }

  // global numbering: owned cells contiguous per rank; ghosts learn theirs from the owner
  PetscInt offset = 0, owned = mesh->n_owned_cells;
  PetscCallMPI(MPI_Exscan(&owned, &offset, 1, MPIU_INT, MPI_SUM, comm));
  if (rank == 0) offset = 0;
  mesh->global_cell_offset = offset;
  PetscCallMPI(MPI_Allreduce(&owned, &mesh->n_global_cells, 1, MPIU_INT, MPI_SUM, comm));
  mesh->n_global_vertices = serial_nv;
  PetscCheck(mesh->n_global_cells == serial_nc, comm, PETSC_ERR_PLIB,
             "cell count changed in distribution");
  mesh->cell_global.assign(ncell, -1);
  {
    std::vector<PetscInt> root(pEnd - pStart, -1), leaf(pEnd - pStart, -1);
    for (PetscInt i = 0; i < mesh->n_owned_cells; ++i) {
      mesh->cell_global[i] = offset + i;
      root[plex_of_cell[i] - pStart] = offset + i;
    }
    PetscSF sf;
    PetscCall(DMGetPointSF(dm, &sf));
    if (size > 1) {
      PetscCall(PetscSFBcastBegin(sf, MPIU_INT, root.data(), leaf.data(), MPI_REPLACE));
      PetscCall(PetscSFBcastEnd(sf, MPIU_INT, root.data(), leaf.data(), MPI_REPLACE));
    }
    for (PetscInt i = mesh->n_owned_cells; i < ncell; ++i) {
      mesh->cell_global[i] = leaf[plex_of_cell[i] - pStart];
      PetscCheck(mesh->cell_global[i] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "ghost cell without owner");
    }
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
