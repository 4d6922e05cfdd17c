// Wall faces as CSV (see include/karman/io/wall_shape.hpp).
#include "karman/io/wall_shape.hpp"

#include "karman/core/parallel.hpp"
#include "karman/io/atomic_file.hpp"

#include <algorithm>
#include <cstdio>

namespace karman::io {

PetscErrorCode write_wall_shape(const mesh::Mesh &m, const std::vector<Vec3<double>> &X,
                                const std::vector<int> &patches, const std::string &path,
                                const std::vector<Vec3<double>> *g) {
  PetscFunctionBeginUser;
  // per face: patch, n, n serial vertex indices, 3 n coordinates (6 n with g)
  const std::size_t per_vertex = g ? 7 : 4;
  std::vector<double> faces;
  for (int p : patches)
    for (PetscInt f : m.boundary_faces(p)) {
      const PetscInt b = m.face_vertex_ptr[f], e = m.face_vertex_ptr[f + 1];
      faces.push_back(p);
      faces.push_back(static_cast<double>(e - b));
      for (PetscInt i = b; i < e; ++i)
        faces.push_back(static_cast<double>(m.vertex_gid[m.face_vertex[i]]));
      for (PetscInt i = b; i < e; ++i) {
        const PetscInt v = m.face_vertex[i];
        faces.insert(faces.end(), {X[v][0], X[v][1], X[v][2]});
        if (g) faces.insert(faces.end(), {(*g)[v][0], (*g)[v][1], (*g)[v][2]});
      }
    }
  std::vector<double> all;
  PetscCall(gather_to_root(m.comm, faces, MPI_DOUBLE, &all));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(m.comm, &rank));
  std::string error;
  if (rank == 0) {
    struct Face {
      int patch;
      std::vector<double> gids; // serial vertex indices, sorted: the key
      const double *x;          // 3 n coordinates (and 3 n values of g)
      int n;
    };
    std::vector<Face> list;
    for (std::size_t i = 0; i < all.size();) {
      const int n = static_cast<int>(all[i + 1]);
      Face f{static_cast<int>(all[i]),
             {all.begin() + i + 2, all.begin() + i + 2 + n},
             &all[i + 2 + n],
             n};
      std::sort(f.gids.begin(), f.gids.end());
      list.push_back(std::move(f));
      i += 2 + per_vertex * static_cast<std::size_t>(n);
    }
    std::sort(list.begin(), list.end(), [](const Face &a, const Face &b) {
      return a.patch != b.patch ? a.patch < b.patch : a.gids < b.gids;
    });
    error = write_file_atomically(path, [&](std::FILE *f) {
      std::fprintf(f, g ? "wall,face,x,y,z,gx,gy,gz\n" : "wall,face,x,y,z\n");
      const int stride = g ? 6 : 3;
      for (std::size_t k = 0; k < list.size(); ++k)
        for (int i = 0; i < list[k].n; ++i) {
          const double *x = list[k].x + stride * i;
          std::fprintf(f, "%s,%zu,%.17g,%.17g,%.17g", m.patch_names[list[k].patch].c_str(), k, x[0],
                       x[1], x[2]);
          if (g) std::fprintf(f, ",%.17g,%.17g,%.17g", x[3], x[4], x[5]);
          std::fprintf(f, "\n");
        }
    });
  }
  PetscCall(broadcast_string(m.comm, &error));
  PetscCheck(error.empty(), m.comm, PETSC_ERR_FILE_WRITE, "%s", error.c_str());
  PetscFunctionReturn(0);
}

} // namespace karman::io
