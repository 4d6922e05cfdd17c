// Gmsh MSH 2.2 output (see include/karman/io/msh_writer.hpp).
#include "karman/io/msh_writer.hpp"

#include "karman/core/parallel.hpp"
#include "karman/io/atomic_file.hpp"

#include <cstdio>
#include <map>

namespace karman::io {

namespace {

// Gmsh element type of a cell shape, and of a boundary face with n vertices.
int gmsh_cell_type(mesh::CellShape s) {
  switch (s) {
  case mesh::CellShape::Triangle:
    return 2;
  case mesh::CellShape::Quadrilateral:
    return 3;
  case mesh::CellShape::Tetrahedron:
    return 4;
  case mesh::CellShape::Hexahedron:
    return 5;
  case mesh::CellShape::Prism:
    return 6;
  case mesh::CellShape::Pyramid:
    return 7;
  }
  return 0;
}

int gmsh_face_type(int dim, PetscInt n) {
  return dim == 2 ? 1 : (n == 3 ? 2 : 3);
}

} // namespace

PetscErrorCode write_msh(const mesh::Mesh &m, const std::vector<Vec3<double>> &X,
                         const std::string &path, const std::string &volume_name) {
  PetscFunctionBeginUser;
  // nodes: owned vertices (gid, x, y, z); elements: (group, type, n, vertex gids...)
  std::vector<double> nodes;
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (m.vertex_owned[v])
      nodes.insert(nodes.end(), {static_cast<double>(m.vertex_gid[v]), X[v][0], X[v][1], X[v][2]});
  const long volume_group = static_cast<long>(m.patch_names.size()) + 1;
  std::vector<long> elements;
  for (std::size_t p = 0; p < m.patch_names.size(); ++p)
    for (PetscInt f : m.boundary_faces(static_cast<int>(p))) {
      const PetscInt b = m.face_vertex_ptr[f], e = m.face_vertex_ptr[f + 1];
      elements.insert(elements.end(), {static_cast<long>(p) + 1, gmsh_face_type(m.dim, e - b),
                                       static_cast<long>(e - b)});
      for (PetscInt i = b; i < e; ++i) elements.push_back(m.vertex_gid[m.face_vertex[i]]);
    }
  for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
    const PetscInt b = m.cell_vertex_ptr[c], e = m.cell_vertex_ptr[c + 1];
    elements.insert(elements.end(),
                    {volume_group, gmsh_cell_type(m.cell_shape[c]), static_cast<long>(e - b)});
    for (PetscInt i = b; i < e; ++i) elements.push_back(m.vertex_gid[m.cell_vertex[i]]);
  }
  std::vector<double> all_nodes;
  std::vector<long> all_elements;
  PetscCall(gather_to_root(m.comm, nodes, MPI_DOUBLE, &all_nodes));
  PetscCall(gather_to_root(m.comm, elements, MPI_LONG, &all_elements));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  std::string error;
  if (rank == 0) {
    std::map<long, const double *> by_gid; // sorted by serial index
    for (std::size_t i = 0; i < all_nodes.size(); i += 4)
      by_gid[static_cast<long>(all_nodes[i])] = &all_nodes[i + 1];
    // elements: boundary faces first (sorted by group), then cells
    long n_elements = 0;
    for (std::size_t i = 0; i < all_elements.size(); i += 3 + all_elements[i + 2]) ++n_elements;
    error = write_file_atomically(path, [&](std::FILE *f) {
      std::fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n%zu\n",
                   m.patch_names.size() + 1);
      for (std::size_t p = 0; p < m.patch_names.size(); ++p)
        std::fprintf(f, "%d %zu \"%s\"\n", m.dim - 1, p + 1, m.patch_names[p].c_str());
      std::fprintf(f, "%d %ld \"%s\"\n$EndPhysicalNames\n$Nodes\n%zu\n", m.dim, volume_group,
                   volume_name.c_str(), by_gid.size());
      for (const auto &[gid, x] : by_gid)
        std::fprintf(f, "%ld %.17g %.17g %.17g\n", gid + 1, x[0], x[1], x[2]);
      std::fprintf(f, "$EndNodes\n$Elements\n%ld\n", n_elements);
      long id = 0;
      for (std::size_t i = 0; i < all_elements.size(); i += 3 + all_elements[i + 2]) {
        // id, type, 2 tags (physical, elementary), nodes
        std::fprintf(f, "%ld %ld 2 %ld %ld", ++id, all_elements[i + 1], all_elements[i],
                     all_elements[i]);
        for (long k = 0; k < all_elements[i + 2]; ++k)
          std::fprintf(f, " %ld", all_elements[i + 3 + k] + 1);
        std::fprintf(f, "\n");
      }
      std::fprintf(f, "$EndElements\n");
    });
  }
  PetscCall(broadcast_string(m.comm, &error));
  PetscCheck(error.empty(), m.comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

} // namespace karman::io
