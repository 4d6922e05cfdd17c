// The surface-normal parameterization: the Helmholtz filter on the wall surface and its transpose
// (see include/karman/design/surface_normal.hpp; src/adjoint/README.md, eq. 26).
#include "karman/design/surface_normal.hpp"

#include <petscksp.h>

#include <algorithm>
#include <array>
#include <string>

namespace karman::design {
namespace {

class SurfaceNormal : public ShapeParameterization {
public:
  ~SurfaceNormal() override {
    KSPDestroy(&ksp);
    MatDestroy(&M);
    MatDestroy(&A);
  }
  Mat M = nullptr, A = nullptr; ///< mass matrix, M + L^2 K (sequential, the same on every rank)
  KSP ksp = nullptr;            ///< LU of A
  std::vector<PetscInt> vertex; ///< moving local vertices
  std::vector<PetscInt> index;  ///< their variable (wall-vertex) index
  std::vector<Vec3<double>> n;  ///< their unit normal out of the body

  PetscErrorCode add_displacement(const double *a, std::vector<Vec3<double>> &d) const override {
    PetscFunctionBeginUser;
    PetscInt size;
    PetscCall(MatGetSize(A, &size, nullptr));
    Vec x, b;
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscScalar *arr;
    PetscCall(VecGetArray(x, &arr));
    std::copy(a, a + size, arr);
    PetscCall(VecRestoreArray(x, &arr));
    PetscCall(MatMult(M, x, b));    // b = M a
    PetscCall(KSPSolve(ksp, b, x)); // s = A^-1 M a
    const PetscScalar *sm;
    PetscCall(VecGetArrayRead(x, &sm));
    for (std::size_t q = 0; q < vertex.size(); ++q) d[vertex[q]] += sm[index[q]] * n[q];
    PetscCall(VecRestoreArrayRead(x, &sm));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscFunctionReturn(0);
  }

  void add_reverse_local(const double *, const std::vector<Vec3<double>> &d_bar,
                         const std::vector<char> &owned, double *a_bar) const override {
    for (std::size_t q = 0; q < vertex.size(); ++q)
      if (owned[vertex[q]]) a_bar[index[q]] += dot(n[q], d_bar[vertex[q]]);
  }

  PetscErrorCode finish_reverse(double *a_bar) const override {
    PetscFunctionBeginUser;
    PetscInt size;
    PetscCall(MatGetSize(A, &size, nullptr));
    Vec g, y;
    PetscCall(MatCreateVecs(A, &g, &y));
    PetscScalar *arr;
    PetscCall(VecGetArray(g, &arr));
    std::copy(a_bar, a_bar + size, arr);
    PetscCall(VecRestoreArray(g, &arr));
    PetscCall(KSPSolveTranspose(ksp, g, y)); // y = A^-T (n . d_bar)
    PetscCall(MatMultTranspose(M, y, g));    // a_bar = M^T y
    PetscCall(VecGetArray(g, &arr));
    std::copy(arr, arr + size, a_bar);
    PetscCall(VecRestoreArray(g, &arr));
    PetscCall(VecDestroy(&g));
    PetscCall(VecDestroy(&y));
    PetscFunctionReturn(0);
  }
};

} // namespace

PetscErrorCode create_surface_normal(const mesh::Mesh &m, const config::DesignConfig &dc,
                                     const WallSurface &surf,
                                     std::unique_ptr<ShapeParameterization> *out) {
  PetscFunctionBeginUser;
  auto sn = std::make_unique<SurfaceNormal>();
  const double L = dc.parameters.real("filter_length"), L2 = L * L;
  const PetscInt size = static_cast<PetscInt>(surf.gid.size());
  // P1 elements: segments (2D), or each face split into triangles from its first vertex (3D)
  std::vector<std::array<int, 3>> elements;
  for (std::size_t f = 0; f + 1 < surf.face_ptr.size(); ++f) {
    const int *v = &surf.face_vertex[surf.face_ptr[f]];
    const int nv = static_cast<int>(surf.face_ptr[f + 1] - surf.face_ptr[f]);
    if (m.dim == 2)
      elements.push_back({v[0], v[1], -1});
    else
      for (int k = 1; k + 1 < nv; ++k) elements.push_back({v[0], v[k], v[k + 1]});
  }
  std::vector<std::vector<PetscInt>> adjacency(size);
  for (const auto &e : elements)
    for (int i : e)
      for (int j : e)
        if (i >= 0 && j >= 0) adjacency[i].push_back(j);
  std::vector<PetscInt> nnz(size);
  for (PetscInt i = 0; i < size; ++i) {
    auto &row = adjacency[i];
    std::sort(row.begin(), row.end());
    nnz[i] = std::unique(row.begin(), row.end()) - row.begin();
  }
  for (Mat *mat : {&sn->M, &sn->A})
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, size, size, 0, nnz.data(), mat));
  for (const auto &e : elements) {
    const int nv = e[2] < 0 ? 2 : 3;
    PetscScalar Me[9], Ae[9];
    if (nv == 2) {
      // segment of length h: M = h/6 [2 1; 1 2], K = 1/h [1 -1; -1 1]
      const double h = norm(surf.x[e[1]] - surf.x[e[0]]);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          Me[2 * i + j] = h / 6.0 * (i == j ? 2.0 : 1.0);
          Ae[2 * i + j] = Me[2 * i + j] + L2 / h * (i == j ? 1.0 : -1.0);
        }
    } else {
      // triangle of area T with edges e_i opposite vertex i: M = T/12 (1 + delta_ij),
      // K_ij = e_i . e_j / (4 T)
      const Vec3<double> &p0 = surf.x[e[0]], &p1 = surf.x[e[1]], &p2 = surf.x[e[2]];
      const Vec3<double> edge[3] = {p2 - p1, p0 - p2, p1 - p0};
      const double T = 0.5 * norm(cross(p1 - p0, p2 - p0));
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          Me[3 * i + j] = T / 12.0 * (i == j ? 2.0 : 1.0);
          Ae[3 * i + j] = Me[3 * i + j] + L2 * dot(edge[i], edge[j]) / (4.0 * T);
        }
    }
    const PetscInt rows[3] = {e[0], e[1], e[2]};
    PetscCall(MatSetValues(sn->M, nv, rows, nv, rows, Me, ADD_VALUES));
    PetscCall(MatSetValues(sn->A, nv, rows, nv, rows, Ae, ADD_VALUES));
  }
  for (Mat mat : {sn->M, sn->A}) {
    PetscCall(MatAssemblyBegin(mat, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(mat, MAT_FINAL_ASSEMBLY));
  }
  // a fixed direct solve (no options prefix): the transposed solve reuses the same factors
  PetscCall(KSPCreate(PETSC_COMM_SELF, &sn->ksp));
  PetscCall(KSPSetType(sn->ksp, KSPPREONLY));
  PC pc;
  PetscCall(KSPGetPC(sn->ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(KSPSetOperators(sn->ksp, sn->A, sn->A));
  PetscCall(KSPSetUp(sn->ksp));
  sn->moved.assign(m.n_vertices, 0);
  for (PetscInt v = 0; v < m.n_vertices; ++v)
    if (surf.of_local[v] >= 0) {
      sn->vertex.push_back(v);
      sn->index.push_back(surf.of_local[v]);
      sn->n.push_back(surf.normal[surf.of_local[v]]);
      sn->moved[v] = 1;
    }
  for (PetscInt g : surf.gid) sn->names.push_back(dc.name + ".v[" + std::to_string(g) + "]");
  *out = std::move(sn);
  PetscFunctionReturn(0);
}

} // namespace karman::design
