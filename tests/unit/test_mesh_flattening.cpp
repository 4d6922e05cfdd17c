// The flattening of the distributed DMPlex (mesh_flattening.cpp), seen through load_mesh: every
// local cell (owned and ghost) has the geometry of the serial cell with its serial number, owned
// and layer-1 cells have all their neighbours locally, ghosts carry their owner's global index;
// 3D cells get their shapes and a VTK vertex order with positive orientation.  Tagged [mpi]: also
// run on 2 ranks, where the distributed mesh is compared with the serial mesh on each rank alone.
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/mesh/mesh_flattening.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace karman;

namespace {

const std::vector<std::string> kChannel = {"inlet", "outlet", "walls", "cylinder"};

} // namespace

TEST_CASE("distributed mesh equals the serial mesh cell by cell", "[mesh][mpi]") {
  mesh::Mesh dist, serial;
  test::load(PETSC_COMM_WORLD, test::dfg_geo(), 0, 2, kChannel, &dist);
  test::load(PETSC_COMM_SELF, test::dfg_geo(), 0, 2, kChannel, &serial);
  geometry::Geometry<double> gd, gs;
  geometry::compute_geometry(dist, dist.coordinates, gd);
  geometry::compute_geometry(serial, serial.coordinates, gs);
  std::map<PetscInt, PetscInt> serial_cell;
  for (PetscInt c = 0; c < serial.n_cells; ++c) serial_cell[serial.cell_gid[c]] = c;
  REQUIRE(dist.n_global_cells == serial.n_cells);
  // every local cell (owned and ghost) has the geometry of the serial cell with its gid
  for (PetscInt c = 0; c < dist.n_cells; ++c) {
    const PetscInt s = serial_cell.at(dist.cell_gid[c]);
    REQUIRE(gd.cell_volume[c] == Approx(gs.cell_volume[s]).epsilon(1e-13));
    REQUIRE(norm(gd.cell_centroid[c] - gs.cell_centroid[s]) < 1e-14);
  }
  // ghost layers: owned and layer-1 cells have all their neighbours locally
  for (PetscInt c = 0; c < dist.n_cells; ++c) {
    if (dist.cell_layer[c] > 1) continue;
    const PetscInt s = serial_cell.at(dist.cell_gid[c]);
    std::set<PetscInt> nd, ns;
    for (PetscInt i = dist.cell_face_ptr[c]; i < dist.cell_face_ptr[c + 1]; ++i) {
      const PetscInt f = dist.cell_face[i];
      REQUIRE(f < dist.n_flux_faces);
      const PetscInt o = dist.face_left[f] == c ? dist.face_right[f] : dist.face_left[f];
      nd.insert(o < 0 ? -1 : dist.cell_gid[o]);
      REQUIRE((o < 0) == (dist.face_patch[f] >= 0));
    }
    for (PetscInt i = serial.cell_face_ptr[s]; i < serial.cell_face_ptr[s + 1]; ++i) {
      const PetscInt f = serial.cell_face[i];
      const PetscInt o = serial.face_left[f] == s ? serial.face_right[f] : serial.face_left[f];
      ns.insert(o < 0 ? -1 : serial.cell_gid[o]);
    }
    REQUIRE(nd == ns);
  }
  // global (PETSc) numbering: ghosts carry their owner's index
  std::vector<PetscInt> owned_pairs;
  for (PetscInt c = 0; c < dist.n_owned_cells; ++c) {
    owned_pairs.push_back(dist.cell_gid[c]);
    owned_pairs.push_back(dist.cell_global[c]);
  }
  int n = static_cast<int>(owned_pairs.size()), size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, PETSC_COMM_WORLD);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<PetscInt> all(displs[size - 1] + counts[size - 1]);
  MPI_Allgatherv(owned_pairs.data(), n, MPIU_INT, all.data(), counts.data(), displs.data(),
                 MPIU_INT, PETSC_COMM_WORLD);
  std::map<PetscInt, PetscInt> global_of;
  for (std::size_t i = 0; i < all.size(); i += 2) global_of[all[i]] = all[i + 1];
  REQUIRE(global_of.size() == static_cast<std::size_t>(dist.n_global_cells));
  for (PetscInt c = 0; c < dist.n_cells; ++c)
    REQUIRE(dist.cell_global[c] == global_of.at(dist.cell_gid[c]));
}

TEST_CASE("3D meshes load: tetrahedra, hexahedra, prisms", "[mesh][mpi]") {
  struct Case {
    const char *geo;
    std::vector<std::string> names;
    mesh::CellShape shape;
  };
  const std::vector<Case> cases = {
      {"box-tet.geo",
       {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"},
       mesh::CellShape::Tetrahedron},
      {"box-hex.geo",
       {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"},
       mesh::CellShape::Hexahedron},
      {"box-prism.geo", {"sides", "zmin", "zmax"}, mesh::CellShape::Prism},
  };
  for (const auto &cs : cases) {
    SECTION(cs.geo) {
      mesh::Mesh m;
      test::load(PETSC_COMM_WORLD, cs.geo, 0, 3, cs.names, &m);
      REQUIRE(m.dim == 3);
      for (PetscInt c = 0; c < m.n_cells; ++c) REQUIRE(m.cell_shape[c] == cs.shape);
      geometry::Geometry<double> g;
      geometry::compute_geometry(m, m.coordinates, g);
      for (std::size_t b = 0; b < m.patch_names.size(); ++b) {
        double s = 0;
        for (PetscInt f : m.patch_faces[b])
          if (m.owned(m.face_left[f])) s += norm(g.face_area[f]);
        MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
        REQUIRE(s == Approx(m.patch_names[b] == "sides" ? 4.0 : 1.0).epsilon(1e-12));
      }
      // VTK vertex order gives positive volumes: check the tetrahedra of the VTK ordering
      for (PetscInt c = 0; c < m.n_owned_cells; ++c) {
        const PetscInt *v = &m.cell_vertex[m.cell_vertex_ptr[c]];
        const auto &X = m.coordinates;
        if (cs.shape == mesh::CellShape::Tetrahedron || cs.shape == mesh::CellShape::Hexahedron) {
          // tet (0,1,2,3) or the hex corner tet (0,1,3,4): positive orientation
          const PetscInt a = v[0], b = v[1],
                         c2 = cs.shape == mesh::CellShape::Hexahedron ? v[3] : v[2],
                         d = cs.shape == mesh::CellShape::Hexahedron ? v[4] : v[3];
          REQUIRE(dot(cross(X[b] - X[a], X[c2] - X[a]), X[d] - X[a]) > 0);
        } else {
          // wedge: base (0,1,2) normal points away from the top face (3,4,5)
          REQUIRE(dot(cross(X[v[1]] - X[v[0]], X[v[2]] - X[v[0]]), X[v[3]] - X[v[0]]) < 0);
        }
      }
    }
  }
}
