// The parallel vertex numbering: one owner per vertex and a bijective global numbering,
// broadcast (every copy receives the owner's value: coordinates round trip), reduction (a sum
// of ones counts the copies; shares add up to the total), all compared by serial index so that
// 1 and 2 ranks ([mpi]) must agree.
#include "karman/core/error.hpp"
#include "karman/mesh/vertex_layout.hpp"
#include "test_helpers.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace karman;

namespace {

// All ranks' values of `local`, concatenated.  Collective.
std::vector<PetscInt> all_gather(const std::vector<PetscInt> &local) {
  int n = static_cast<int>(local.size()), size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, PETSC_COMM_WORLD);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<PetscInt> all(displs[size - 1] + counts[size - 1]);
  MPI_Allgatherv(local.data(), n, MPIU_INT, all.data(), counts.data(), displs.data(), MPIU_INT,
                 PETSC_COMM_WORLD);
  return all;
}

} // namespace

TEST_CASE("vertex layout: numbering, broadcast and reduction", "[mesh][vertex_layout][mpi]") {
  struct Case {
    std::string geo;
    int dim;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      {test::dfg_geo(), 2, {"inlet", "outlet", "walls", "cylinder"}},
      {"box-tet.geo", 3, {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}},
  };
  for (const auto &cs : cases) {
    SECTION(cs.geo) {
      mesh::Mesh m;
      test::load(PETSC_COMM_WORLD, cs.geo, 0, cs.dim, cs.names, &m);
      mesh::VertexLayout layout;
      clear_error();
      REQUIRE(layout.create(m) == 0);
      const PetscInt nv = m.n_vertices;
      REQUIRE(layout.n_local() == nv);

      // one owner per vertex: the owned counts add up, and global indices form a bijection
      PetscInt n_owned = layout.n_owned(), total = 0;
      MPI_Allreduce(&n_owned, &total, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD);
      REQUIRE(total == m.n_global_vertices);
      REQUIRE(layout.n_global() == m.n_global_vertices);
      std::vector<PetscInt> pairs; // (gid, global index) of the owned vertices
      for (PetscInt i = 0; i < n_owned; ++i) {
        const PetscInt v = layout.owned_vertices()[i];
        REQUIRE(m.vertex_owned[v]);
        REQUIRE(layout.global_index()[v] == layout.owned_offset() + i);
        pairs.push_back(m.vertex_gid[v]);
        pairs.push_back(layout.global_index()[v]);
      }
      const std::vector<PetscInt> all = all_gather(pairs);
      std::map<PetscInt, PetscInt> global_of;
      std::set<PetscInt> globals;
      for (std::size_t i = 0; i < all.size(); i += 2) {
        global_of[all[i]] = all[i + 1];
        globals.insert(all[i + 1]);
      }
      REQUIRE(global_of.size() == static_cast<std::size_t>(m.n_global_vertices));
      REQUIRE(globals.size() == static_cast<std::size_t>(m.n_global_vertices));
      REQUIRE(*globals.begin() == 0);
      REQUIRE(*globals.rbegin() == m.n_global_vertices - 1);
      // every copy carries its owner's global index
      for (PetscInt v = 0; v < nv; ++v)
        REQUIRE(layout.global_index()[v] == global_of.at(m.vertex_gid[v]));

      // broadcast: the owners' coordinates reach every copy exactly
      Vec x;
      REQUIRE(layout.create_global_vector(3, &x) == 0);
      PetscScalar *a;
      REQUIRE(VecGetArray(x, &a) == 0);
      for (PetscInt i = 0; i < n_owned; ++i)
        for (int d = 0; d < 3; ++d) a[3 * i + d] = m.coordinates[layout.owned_vertices()[i]][d];
      REQUIRE(VecRestoreArray(x, &a) == 0);
      std::vector<double> local;
      REQUIRE(layout.global_to_local(x, &local) == 0);
      REQUIRE(local.size() == static_cast<std::size_t>(3 * nv));
      for (PetscInt v = 0; v < nv; ++v)
        for (int d = 0; d < 3; ++d) REQUIRE(local[3 * v + d] == m.coordinates[v][d]);
      REQUIRE(VecDestroy(&x) == 0);

      // reduction of ones counts the copies of each vertex over all ranks; it adds to the vector
      std::map<PetscInt, int> copies;
      for (PetscInt g : all_gather(m.vertex_gid)) ++copies[g];
      Vec n;
      REQUIRE(layout.create_global_vector(1, &n) == 0);
      REQUIRE(VecSet(n, 10.0) == 0);
      const PetscErrorCode ierr = layout.local_to_global_add(std::vector<double>(nv, 1.0), n);
      INFO(last_error_message());
      REQUIRE(ierr == 0);
      std::vector<double> count;
      REQUIRE(layout.global_to_local(n, &count) == 0);
      for (PetscInt v = 0; v < nv; ++v) REQUIRE(count[v] == 10.0 + copies.at(m.vertex_gid[v]));

      // shares per copy add up to the total: the same result by serial index on any rank count
      std::vector<double> shares(2 * nv);
      for (PetscInt v = 0; v < nv; ++v)
        for (int k = 0; k < 2; ++k)
          shares[2 * v + k] = test::serial_value(m.vertex_gid[v], k) / (count[v] - 10.0);
      Vec s;
      REQUIRE(layout.create_global_vector(2, &s) == 0);
      REQUIRE(layout.local_to_global_add(shares, s) == 0);
      std::vector<double> sum;
      REQUIRE(layout.global_to_local(s, &sum) == 0);
      for (PetscInt v = 0; v < nv; ++v)
        for (int k = 0; k < 2; ++k)
          REQUIRE(sum[2 * v + k] ==
                  Approx(test::serial_value(m.vertex_gid[v], k)).epsilon(1e-14).margin(1e-14));

      // boundary vertices: the same set by serial index as on one rank alone, on every copy
      std::vector<char> marked, marked_serial;
      REQUIRE(mesh::mark_boundary_vertices(m, layout, {}, &marked) == 0);
      mesh::Mesh serial;
      test::load(PETSC_COMM_SELF, cs.geo, 0, cs.dim, cs.names, &serial);
      mesh::VertexLayout serial_layout;
      REQUIRE(serial_layout.create(serial) == 0);
      REQUIRE(mesh::mark_boundary_vertices(serial, serial_layout, {}, &marked_serial) == 0);
      std::map<PetscInt, char> on_boundary;
      for (PetscInt v = 0; v < serial.n_vertices; ++v)
        on_boundary[serial.vertex_gid[v]] = marked_serial[v];
      for (PetscInt v = 0; v < nv; ++v) REQUIRE(marked[v] == on_boundary.at(m.vertex_gid[v]));
      std::vector<char> first_patch;
      REQUIRE(mesh::mark_boundary_vertices(m, layout, {0}, &first_patch) == 0);
      for (PetscInt v = 0; v < nv; ++v) REQUIRE(first_patch[v] <= marked[v]);

      // wrong sizes are refused
      clear_error();
      REQUIRE(layout.local_to_global_add(std::vector<double>(nv + 1, 1.0), n) != 0);
      REQUIRE_THAT(last_error_message(), Catch::Contains("vertex array"));
      clear_error();
      REQUIRE(VecDestroy(&n) == 0);
      REQUIRE(VecDestroy(&s) == 0);
    }
  }
}
