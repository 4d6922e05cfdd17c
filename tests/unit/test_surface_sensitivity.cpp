// Surface sensitivity (src/adjoint/surface_sensitivity.cpp) on the cylinder of the DFG 2D-1
// channel (level 0), for shape gradients chosen so that the answer is known:
//  - the normals are unit vectors into the fluid (nearly radial on a circle), zero off the wall;
//  - the dual areas add up to the wall's length;
//  - Xbar = e (a rigid shift) gives s_v = e . n_v, Xbar = x - c (a dilation) gives about r;
//  - the density is s_v / A_v, a face's density the mean of its vertices'.
#include "karman/adjoint/surface_sensitivity.hpp"
#include "objective_check.hpp"

using namespace karman;

TEST_CASE("surface sensitivity: normals, dual areas, values of known gradients", "[adjoint][mpi]") {
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: drag, walls: [cylinder]}\n", &f);
  const discretization::FlowResidual &res = f.res();
  const mesh::Mesh &m = res.mesh();
  const int cylinder = m.patch_index("cylinder");
  const Vec3<double> centre(0.2, 0.2, 0);
  std::vector<Vec3<double>> Xbar(m.n_vertices);
  for (PetscInt v = 0; v < m.n_vertices; ++v) Xbar[v] = res.coordinates()[v] - centre;
  adjoint::SurfaceSensitivity s;
  REQUIRE(adjoint::surface_sensitivity(res, cylinder, Xbar, &s) == 0);
  std::vector<char> on_wall(m.n_vertices, 0);
  const auto faces = m.boundary_faces(cylinder);
  for (PetscInt face : faces)
    for (PetscInt i = m.face_vertex_ptr[face]; i < m.face_vertex_ptr[face + 1]; ++i)
      on_wall[m.face_vertex[i]] = 1;
  double area = 0, length = 0, sum[2];
  for (PetscInt face : faces) length += norm(res.geometry().face_area[face]);
  for (PetscInt v = 0; v < m.n_vertices; ++v) {
    // vertices of the wall of other ranks' faces are complete as well; off the wall all is zero
    if (norm(s.normal[v]) == 0) {
      CHECK((s.area[v] == 0 && s.value[v] == 0 && s.density[v] == 0));
      continue;
    }
    const Vec3<double> radial = (1.0 / norm(Xbar[v])) * Xbar[v];
    CHECK(norm(s.normal[v]) == Approx(1).epsilon(1e-12));
    CHECK(dot(s.normal[v], radial) > 0.995);
    CHECK(s.value[v] == Approx(dot(Xbar[v], s.normal[v])).epsilon(1e-12));
    CHECK(s.value[v] == Approx(0.05).epsilon(5e-3));
    CHECK(s.density[v] == Approx(s.value[v] / s.area[v]).epsilon(1e-12));
    if (m.vertex_owned[v]) area += s.area[v];
  }
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (on_wall[v]) CHECK(norm(s.normal[v]) > 0);
  double local[2] = {area, length};
  MPI_Allreduce(local, sum, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  CHECK(sum[0] == Approx(sum[1]).epsilon(1e-12));
  CHECK(sum[1] == Approx(2 * M_PI * 0.05).epsilon(1e-2));
  REQUIRE(s.face_density.size() == faces.size());
  for (std::size_t k = 0; k < faces.size(); ++k) {
    const PetscInt b = m.face_vertex_ptr[faces[k]], e = m.face_vertex_ptr[faces[k] + 1];
    CHECK(
        s.face_density[k] ==
        Approx((s.density[m.face_vertex[b]] + s.density[m.face_vertex[b + 1]]) / 2).epsilon(1e-12));
    CHECK(e - b == 2);
  }
  // a rigid shift: s_v = e . n_v
  const Vec3<double> e(0.3, -0.4, 0);
  std::fill(Xbar.begin(), Xbar.end(), e);
  REQUIRE(adjoint::surface_sensitivity(res, cylinder, Xbar, &s) == 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (on_wall[v]) CHECK(s.value[v] == Approx(dot(e, s.normal[v])).epsilon(1e-12));
}
