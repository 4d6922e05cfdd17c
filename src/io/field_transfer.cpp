// Cell fields from a file of another mesh (see include/karman/io/field_transfer.hpp).
#include "karman/io/field_transfer.hpp"

#include "karman/core/parallel.hpp"
#include "karman/io/hdf5_fields.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace karman::io {

namespace {

double distance2(int dim, const Vec3<double> &a, const Vec3<double> &b) {
  double s = 0;
  for (int d = 0; d < dim; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
  return s;
}

// Whole dataset `name` of an open file, read as `type` into *data; dims[1] = 1 for a 1-D
// dataset.  Returns the empty string or what went wrong.
template <typename T>
std::string read_dataset(hid_t file, const std::string &name, hid_t type, std::vector<T> *data,
                         hsize_t dims[2]) {
  hid_t dset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (dset < 0) return "no dataset '" + name + "'";
  hid_t space = H5Dget_space(dset);
  const int rank = H5Sget_simple_extent_ndims(space);
  dims[0] = 0, dims[1] = 1;
  if (rank >= 1 && rank <= 2) H5Sget_simple_extent_dims(space, dims, nullptr);
  H5Sclose(space);
  std::string error;
  if (rank < 1 || rank > 2) {
    error = "dataset '" + name + "' is not a table";
  } else {
    data->resize(dims[0] * dims[1]);
    if (dims[0] * dims[1] > 0 &&
        H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data->data()) < 0)
      error = "reading dataset '" + name + "' failed";
  }
  H5Dclose(dset);
  return error;
}

} // namespace

void PointCloudInterpolator::build(int dim, std::vector<Vec3<double>> points) {
  dim_ = dim;
  points_ = std::move(points);
  Vec3<double> hi;
  for (int d = 0; d < 3; ++d) lo_[d] = hi[d] = 0;
  if (!points_.empty()) lo_ = hi = points_[0];
  for (const auto &p : points_)
    for (int d = 0; d < dim_; ++d) lo_[d] = std::min(lo_[d], p[d]), hi[d] = std::max(hi[d], p[d]);
  double diag2 = 0, volume = 1;
  for (int d = 0; d < dim_; ++d) {
    const double ext = std::max(hi[d] - lo_[d], 1e-300);
    diag2 += ext * ext;
    volume *= ext;
  }
  delta2_ = 1e-12 * diag2;
  // about two points per bucket, buckets as close to cubes as the box allows
  const double side = std::pow(2.0 * volume / std::max<std::size_t>(points_.size(), 1), 1.0 / dim_);
  for (int d = 0; d < 3; ++d) {
    n_[d] = d < dim_ ? std::clamp<long>(static_cast<long>((hi[d] - lo_[d]) / side), 1, 1 << 20) : 1;
    width_[d] = d < dim_ ? std::max(hi[d] - lo_[d], 1e-300) / n_[d] : 1.0;
  }
  const std::size_t nb = static_cast<std::size_t>(n_[0] * n_[1] * n_[2]);
  std::vector<long> bucket(points_.size());
  start_.assign(nb + 1, 0);
  long ijk[3];
  for (std::size_t i = 0; i < points_.size(); ++i)
    ++start_[(bucket[i] = bucket_of(points_[i], ijk)) + 1];
  std::partial_sum(start_.begin(), start_.end(), start_.begin());
  index_.resize(points_.size());
  std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
  for (std::size_t i = 0; i < points_.size(); ++i) index_[fill[bucket[i]]++] = i;
}

long PointCloudInterpolator::bucket_of(const Vec3<double> &x, long ijk[3]) const {
  for (int d = 0; d < 3; ++d)
    ijk[d] = d < dim_ ? std::clamp<long>(static_cast<long>(std::floor((x[d] - lo_[d]) / width_[d])),
                                         0, n_[d] - 1)
                      : 0;
  return (ijk[2] * n_[1] + ijk[1]) * n_[0] + ijk[0];
}

std::vector<std::size_t> PointCloudInterpolator::nearest(const Vec3<double> &x,
                                                         std::size_t k) const {
  k = std::min(k, points_.size());
  std::vector<std::pair<double, std::size_t>> found; // (squared distance, index), sorted
  long home[3];
  bucket_of(x, home);
  // x may lie outside the grid: the distance from x to the home bucket
  double outside2 = 0;
  for (int d = 0; d < dim_; ++d) {
    const double a = lo_[d] + home[d] * width_[d], b = a + width_[d];
    const double e = x[d] < a ? a - x[d] : (x[d] > b ? x[d] - b : 0.0);
    outside2 += e * e;
  }
  double wmin = width_[0];
  for (int d = 1; d < dim_; ++d) wmin = std::min(wmin, width_[d]);
  const long max_ring = std::max({n_[0], n_[1], n_[2]});
  for (long r = 0; r <= max_ring; ++r) {
    // the buckets at Chebyshev distance r from the home bucket
    const long r1 = dim_ == 3 ? r : 0;
    for (long k3 = -r1; k3 <= r1; ++k3)
      for (long k2 = -r; k2 <= r; ++k2)
        for (long k1 = -r; k1 <= r; ++k1) {
          if (std::max({std::labs(k1), std::labs(k2), std::labs(k3)}) != r) continue;
          const long i = home[0] + k1, j = home[1] + k2, l = home[2] + k3;
          if (i < 0 || j < 0 || l < 0 || i >= n_[0] || j >= n_[1] || l >= n_[2]) continue;
          const std::size_t b = static_cast<std::size_t>((l * n_[1] + j) * n_[0] + i);
          for (std::size_t q = start_[b]; q < start_[b + 1]; ++q)
            found.emplace_back(distance2(dim_, x, points_[index_[q]]), index_[q]);
        }
    if (found.size() >= k) {
      std::nth_element(found.begin(), found.begin() + (k - 1), found.end());
      found.resize(std::max(k, std::size_t(1)));
      // every point of ring r + 1 or beyond is at least r wmin away within the grid, plus
      // the gap of x to the grid in the other directions
      if (found[k - 1].first <= r * r * wmin * wmin + outside2 || r == max_ring) break;
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < std::min(k, found.size()); ++i) idx.push_back(found[i].second);
  return idx;
}

double PointCloudInterpolator::evaluate(const Vec3<double> &x, const std::vector<double> &values,
                                        int ncomp, double *out) const {
  const std::size_t k = dim_ == 3 ? 10 : 6;
  const std::vector<std::size_t> idx = nearest(x, k);
  const int n = dim_ + 1; // unknowns a, b_1..b_dim
  double m[4][4] = {}, rhs[4][kMaxComponents] = {};
  for (std::size_t j : idx) {
    double row[4] = {1, 0, 0, 0};
    for (int d = 0; d < dim_; ++d) row[1 + d] = points_[j][d] - x[d];
    const double w = 1.0 / (distance2(dim_, x, points_[j]) + delta2_);
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) m[a][b] += w * row[a] * row[b];
      for (int c = 0; c < ncomp; ++c) rhs[a][c] += w * row[a] * values[j * ncomp + c];
    }
  }
  // Gaussian elimination with partial pivoting; a (near) singular system -> nearest value
  double scale = 0;
  for (int a = 0; a < n; ++a) scale = std::max(scale, std::abs(m[a][a]));
  bool singular = idx.size() < static_cast<std::size_t>(n);
  for (int col = 0; col < n && !singular; ++col) {
    int piv = col;
    for (int a = col + 1; a < n; ++a)
      if (std::abs(m[a][col]) > std::abs(m[piv][col])) piv = a;
    if (!(std::abs(m[piv][col]) > 1e-12 * scale)) {
      singular = true;
      break;
    }
    std::swap(m[col], m[piv]);
    std::swap(rhs[col], rhs[piv]);
    for (int a = col + 1; a < n; ++a) {
      const double f = m[a][col] / m[col][col];
      for (int b = col; b < n; ++b) m[a][b] -= f * m[col][b];
      for (int c = 0; c < ncomp; ++c) rhs[a][c] -= f * rhs[col][c];
    }
  }
  if (singular) {
    for (int c = 0; c < ncomp; ++c) out[c] = idx.empty() ? 0.0 : values[idx[0] * ncomp + c];
  } else {
    for (int c = 0; c < ncomp; ++c) {
      double sol[4] = {};
      for (int a = n - 1; a >= 0; --a) {
        double s = rhs[a][c];
        for (int b = a + 1; b < n; ++b) s -= m[a][b] * sol[b];
        sol[a] = s / m[a][a];
      }
      out[c] = sol[0];
    }
  }
  return idx.empty() ? std::numeric_limits<double>::infinity()
                     : std::sqrt(distance2(dim_, x, points_[idx[0]]));
}

namespace {

// The source of a transfer: its cell centroids [cells][3] and per field [cells][ncomp]
struct SourceCells {
  long long n_cells = 0;
  std::vector<double> centroids;
  std::vector<std::vector<double>> data;
  std::vector<int> ncomp;
};

// The cell centroids (vertex averages) of the karman-fields file's mesh; an error message or ""
std::string read_centroids(hid_t file, SourceCells *s) {
  std::vector<double> vertices;
  std::vector<int> cells;
  hsize_t vd[2], cd[2];
  std::string error = read_dataset(file, "/mesh/vertices", H5T_NATIVE_DOUBLE, &vertices, vd);
  if (error.empty()) error = read_dataset(file, "/mesh/cells", H5T_NATIVE_INT, &cells, cd);
  if (error.empty() && (vd[1] != 3 || cd[1] != kMaxCellVertices))
    error = "/mesh/vertices or /mesh/cells has the wrong shape (not a karman-fields file)";
  const long long n_cells = error.empty() ? static_cast<long long>(cd[0]) : 0;
  s->n_cells = n_cells;
  std::vector<double> &centroids = s->centroids;
  centroids.assign(n_cells * 3, 0.0);
  for (long long c = 0; c < n_cells && error.empty(); ++c) {
    int count = 0;
    for (int k = 0; k < kMaxCellVertices; ++k) {
      const int v = cells[c * kMaxCellVertices + k];
      if (v < 0) continue;
      if (static_cast<hsize_t>(v) >= vd[0]) {
        error = "/mesh/cells row " + std::to_string(c) + " names vertex " + std::to_string(v) +
                " of " + std::to_string(vd[0]);
        break;
      }
      for (int d = 0; d < 3; ++d) centroids[3 * c + d] += vertices[3 * v + d];
      ++count;
    }
    for (int d = 0; d < 3; ++d) centroids[3 * c + d] /= std::max(count, 1);
  }
  return error;
}

// Reads the source (rank 0): the centroids, then the named fields; an error message or ""
std::string read_source(const std::string &path, const std::vector<std::string> &names,
                        SourceCells *s) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return path + ": cannot open HDF5 file";
  std::string error = read_centroids(file, s);
  for (std::size_t f = 0; f < names.size() && error.empty(); ++f) {
    hsize_t fd[2];
    error = read_dataset(file, "/fields/" + names[f], H5T_NATIVE_DOUBLE, &s->data[f], fd);
    if (error.empty() && static_cast<long long>(fd[0]) != s->n_cells)
      error = "field '" + names[f] + "' has " + std::to_string(fd[0]) + " rows, the mesh " +
              std::to_string(s->n_cells) + " cells";
    s->ncomp[f] = static_cast<int>(fd[1]);
  }
  H5Fclose(file);
  if (!error.empty() && error.rfind(path, 0) != 0) error = path + ": " + error;
  return error;
}

// Rank 0 reads the source, every rank gets it.  Collective.
PetscErrorCode read_source_h5(MPI_Comm comm, const std::string &path,
                              const std::vector<std::string> &names, SourceCells *s) {
  PetscFunctionBeginUser;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error;
  s->data.assign(names.size(), {});
  s->ncomp.assign(names.size(), 0);
  if (rank == 0) error = read_source(path, names, s);
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_READ, "%s", error.c_str());
  PetscCallMPI(MPI_Bcast(&s->n_cells, 1, MPI_LONG_LONG, 0, comm));
  PetscCallMPI(MPI_Bcast(s->ncomp.data(), static_cast<int>(s->ncomp.size()), MPI_INT, 0, comm));
  s->centroids.resize(s->n_cells * 3);
  PetscCallMPI(
      MPI_Bcast(s->centroids.data(), static_cast<int>(s->centroids.size()), MPI_DOUBLE, 0, comm));
  for (std::size_t f = 0; f < names.size(); ++f) {
    s->data[f].resize(s->n_cells * s->ncomp[f]);
    PetscCallMPI(
        MPI_Bcast(s->data[f].data(), static_cast<int>(s->data[f].size()), MPI_DOUBLE, 0, comm));
  }
  PetscCheck(s->n_cells > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: the source mesh has no cells",
             path.c_str());
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode transfer_cell_fields_h5(MPI_Comm comm, int dim, const std::string &path,
                                       const std::vector<std::string> &names,
                                       const std::vector<Vec3<double>> &targets,
                                       const std::vector<double> &target_size,
                                       std::vector<Field> *fields, PetscInt *source_cells,
                                       double *max_gap) {
  PetscFunctionBeginUser;
  // rank 0 reads the source centroids and fields: [cells][dim] then per field [cells][ncomp]
  SourceCells source;
  PetscCall(read_source_h5(comm, path, names, &source));
  const long long n_cells = source.n_cells;
  const std::vector<int> &ncomp = source.ncomp;
  const std::vector<double> &centroids = source.centroids;
  std::vector<Vec3<double>> points(n_cells);
  for (long long c = 0; c < n_cells; ++c)
    points[c] = Vec3<double>(centroids[3 * c], centroids[3 * c + 1], centroids[3 * c + 2]);
  PointCloudInterpolator interp;
  interp.build(dim, std::move(points));
  fields->assign(names.size(), Field{});
  for (std::size_t f = 0; f < names.size(); ++f) {
    (*fields)[f].name = names[f];
    (*fields)[f].ncomp = ncomp[f];
    (*fields)[f].values.assign(targets.size() * ncomp[f], 0.0);
  }
  // all fields side by side, so that each target is located once
  const int total = std::accumulate(ncomp.begin(), ncomp.end(), 0);
  PetscCheck(total <= PointCloudInterpolator::kMaxComponents, comm, PETSC_ERR_SUP,
             "%s: %d field components, at most %d can be transferred", path.c_str(), total,
             PointCloudInterpolator::kMaxComponents);
  std::vector<double> joined(n_cells * total);
  for (long long c = 0, off = 0; c < n_cells; ++c)
    for (std::size_t f = 0; f < names.size(); ++f)
      for (int k = 0; k < ncomp[f]; ++k) joined[off++] = source.data[f][c * ncomp[f] + k];
  double gap = 0, out[PointCloudInterpolator::kMaxComponents];
  for (std::size_t i = 0; i < targets.size(); ++i) {
    gap = std::max(gap, interp.evaluate(targets[i], joined, total, out) / target_size[i]);
    for (std::size_t f = 0, off = 0; f < names.size(); ++f)
      for (int k = 0; k < ncomp[f]; ++k) (*fields)[f].values[i * ncomp[f] + k] = out[off++];
  }
  PetscCallMPI(MPI_Allreduce(&gap, max_gap, 1, MPI_DOUBLE, MPI_MAX, comm));
  *source_cells = static_cast<PetscInt>(n_cells);
  PetscFunctionReturn(0);
}

} // namespace karman::io
