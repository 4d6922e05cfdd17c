// The flattening of a distributed DMPlex into the arrays of mesh::Mesh (see
// include/karman/mesh/mesh_flattening.hpp): plex points <-> flattened cells, vertices and faces;
// faces oriented from left to right (outwards on the boundary) with the area vector of their
// ordered vertices; 3D cells' vertices put in VTK order from their faces.
#include "karman/mesh/mesh_flattening.hpp"

#include <petscsf.h>

#include <algorithm>
#include <set>
#include <utility>

namespace karman::mesh {
namespace {

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

PetscErrorCode flatten_mesh(DM dm, const std::vector<PetscInt> &original,
                            const SerialCounts &serial,
                            const std::vector<std::string> &boundary_names, Mesh *mesh) {
  PetscFunctionBeginUser;
  Flattening fl;
  PetscCall(strata_and_ghosts(dm, &fl));
  PetscCall(number_cells(&fl, mesh));
  PetscCall(flatten_vertices(original, serial.vStart, &fl, mesh));
  PetscCall(flatten_faces(&fl, mesh));
  PetscCall(flatten_cells(original, fl, mesh));
  PetscCall(boundary_patches(boundary_names, fl, mesh));
  PetscCall(number_globally(serial, fl, mesh));
  PetscFunctionReturn(0);
}

} // namespace karman::mesh
