// Parallel vertex numbering (see include/karman/mesh/vertex_layout.hpp).
//
// Construction: (1) owned vertices are counted and numbered contiguously per rank; (2) a
// rendezvous SF by serial index (roots: the serial vertices in blocks of PetscLayout's split)
// checks that each serial vertex has exactly one owner and sends the owner's global index to
// every copy; (3) the layout's SF is built from those global indices (PetscSFSetGraphLayout).
#include "karman/mesh/vertex_layout.hpp"

#include <type_traits>

namespace karman::mesh {
namespace {

static_assert(std::is_same<PetscScalar, double>::value, "karman needs a real PETSc build");

// An SF from `n_leaves` leaves to the global indices `targets` of a layout with `n_local_roots`
// roots on this rank (PETSC_DECIDE: an even split of n_global).
PetscErrorCode create_sf(MPI_Comm comm, PetscInt n_local_roots, PetscInt n_global,
                         const std::vector<PetscInt> &targets, PetscSF *sf) {
  PetscFunctionBeginUser;
  PetscLayout layout;
  PetscCall(PetscLayoutCreate(comm, &layout));
  PetscCall(PetscLayoutSetLocalSize(layout, n_local_roots));
  PetscCall(PetscLayoutSetSize(layout, n_global));
  PetscCall(PetscLayoutSetUp(layout));
  PetscCall(PetscSFCreate(comm, sf));
  PetscCall(PetscSFSetGraphLayout(*sf, layout, static_cast<PetscInt>(targets.size()), nullptr,
                                  PETSC_COPY_VALUES, targets.data()));
  PetscCall(PetscSFSetUp(*sf));
  PetscCall(PetscLayoutDestroy(&layout));
  PetscFunctionReturn(0);
}

} // namespace

VertexLayout::~VertexLayout() {
  if (sf_) PetscSFDestroy(&sf_);
}

PetscErrorCode VertexLayout::create(const Mesh &mesh) {
  PetscFunctionBeginUser;
  if (sf_) PetscCall(PetscSFDestroy(&sf_));
  comm_ = mesh.comm;
  const PetscInt nv = mesh.n_vertices;
  PetscCheck(static_cast<PetscInt>(mesh.vertex_owned.size()) == nv &&
                 static_cast<PetscInt>(mesh.vertex_gid.size()) == nv,
             PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "mesh vertex arrays are not filled");

  // (1) owned vertices, numbered contiguously per rank in local order
  owned_.clear();
  for (PetscInt v = 0; v < nv; ++v)
    if (mesh.vertex_owned[v]) owned_.push_back(v);
  PetscInt n_owned = static_cast<PetscInt>(owned_.size());
  offset_ = 0;
  PetscCallMPI(MPI_Exscan(&n_owned, &offset_, 1, MPIU_INT, MPI_SUM, comm_));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  if (rank == 0) offset_ = 0;
  PetscCallMPI(MPI_Allreduce(&n_owned, &n_global_, 1, MPIU_INT, MPI_SUM, comm_));
  PetscCheck(n_global_ == mesh.n_global_vertices, comm_, PETSC_ERR_PLIB,
             "vertex ownership: %d owned vertices over all ranks, the mesh has %d", (int)n_global_,
             (int)mesh.n_global_vertices);

  // (2) rendezvous by serial index: one owner per vertex, and its global index to every copy
  PetscSF by_gid;
  PetscCall(create_sf(comm_, PETSC_DECIDE, mesh.n_global_vertices, mesh.vertex_gid, &by_gid));
  PetscInt n_roots;
  PetscCall(PetscSFGetGraph(by_gid, &n_roots, nullptr, nullptr, nullptr));
  std::vector<PetscInt> owners(n_roots, 0), root_index(n_roots, -1);
  std::vector<PetscInt> leaf_owned(nv), leaf_index(nv, -1);
  for (PetscInt v = 0; v < nv; ++v) leaf_owned[v] = mesh.vertex_owned[v] ? 1 : 0;
  for (PetscInt i = 0; i < n_owned; ++i) leaf_index[owned_[i]] = offset_ + i;
  PetscCall(PetscSFReduceBegin(by_gid, MPIU_INT, leaf_owned.data(), owners.data(), MPI_SUM));
  PetscCall(PetscSFReduceEnd(by_gid, MPIU_INT, leaf_owned.data(), owners.data(), MPI_SUM));
  PetscCall(PetscSFReduceBegin(by_gid, MPIU_INT, leaf_index.data(), root_index.data(), MPI_MAX));
  PetscCall(PetscSFReduceEnd(by_gid, MPIU_INT, leaf_index.data(), root_index.data(), MPI_MAX));
  PetscInt bad = 0, any_bad;
  for (PetscInt i = 0; i < n_roots; ++i) bad += owners[i] != 1;
  PetscCallMPI(MPI_Allreduce(&bad, &any_bad, 1, MPIU_INT, MPI_SUM, comm_));
  PetscCheck(any_bad == 0, comm_, PETSC_ERR_PLIB,
             "vertex ownership: %d serial vertices have no owner or several", (int)any_bad);
  global_.assign(nv, -1);
  PetscCall(PetscSFBcastBegin(by_gid, MPIU_INT, root_index.data(), global_.data(), MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(by_gid, MPIU_INT, root_index.data(), global_.data(), MPI_REPLACE));
  PetscCall(PetscSFDestroy(&by_gid));

  // (3) the layout's SF: leaves (local vertices) -> roots (owned vertices, global order)
  PetscCall(create_sf(comm_, n_owned, n_global_, global_, &sf_));
  PetscFunctionReturn(0);
}

PetscErrorCode VertexLayout::create_global_vector(PetscInt bs, Vec *v) const {
  PetscFunctionBeginUser;
  PetscCall(VecCreate(comm_, v));
  PetscCall(VecSetSizes(*v, bs * n_owned(), bs * n_global_));
  PetscCall(VecSetBlockSize(*v, bs));
  PetscCall(VecSetType(*v, VECSTANDARD));
  PetscCall(VecZeroEntries(*v));
  PetscFunctionReturn(0);
}

// The block size bs of `global` after checking its size and that of a local array of
// `n_local_entries` entries, and the MPI type of bs doubles (the caller frees it if bs > 1).
PetscErrorCode VertexLayout::vertex_type(Vec global, std::size_t n_local_entries, PetscInt *bs,
                                         MPI_Datatype *unit) const {
  PetscFunctionBeginUser;
  PetscInt n;
  PetscCall(VecGetBlockSize(global, bs));
  PetscCall(VecGetLocalSize(global, &n));
  PetscCheck(n == *bs * n_owned(), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "vertex vector: %d local entries, expected %d (block size %d)", (int)n,
             (int)(*bs * n_owned()), (int)*bs);
  PetscCheck(static_cast<PetscInt>(n_local_entries) == *bs * n_local(), PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ, "vertex array: %d entries, expected %d (block size %d)",
             (int)n_local_entries, (int)(*bs * n_local()), (int)*bs);
  if (*bs == 1) { // (PETSc 3.18's SF reduces a contiguous type of one double with MPI_ERR_OP)
    *unit = MPI_DOUBLE;
  } else {
    PetscCallMPI(MPI_Type_contiguous(static_cast<int>(*bs), MPI_DOUBLE, unit));
    PetscCallMPI(MPI_Type_commit(unit));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode VertexLayout::global_to_local(Vec global, std::vector<double> *local) const {
  PetscFunctionBeginUser;
  PetscInt bs;
  PetscCall(VecGetBlockSize(global, &bs));
  local->assign(bs * n_local(), 0.0);
  MPI_Datatype unit;
  PetscCall(vertex_type(global, local->size(), &bs, &unit));
  const PetscScalar *a;
  PetscCall(VecGetArrayRead(global, &a));
  PetscCall(PetscSFBcastBegin(sf_, unit, a, local->data(), MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf_, unit, a, local->data(), MPI_REPLACE));
  PetscCall(VecRestoreArrayRead(global, &a));
  if (bs > 1) PetscCallMPI(MPI_Type_free(&unit));
  PetscFunctionReturn(0);
}

PetscErrorCode VertexLayout::local_to_global_add(const std::vector<double> &local,
                                                 Vec global) const {
  PetscFunctionBeginUser;
  PetscInt bs;
  MPI_Datatype unit;
  PetscCall(vertex_type(global, local.size(), &bs, &unit));
  PetscScalar *a;
  PetscCall(VecGetArray(global, &a));
  PetscCall(PetscSFReduceBegin(sf_, unit, local.data(), a, MPI_SUM));
  PetscCall(PetscSFReduceEnd(sf_, unit, local.data(), a, MPI_SUM));
  PetscCall(VecRestoreArray(global, &a));
  if (bs > 1) PetscCallMPI(MPI_Type_free(&unit));
  PetscFunctionReturn(0);
}

PetscErrorCode mark_boundary_vertices(const Mesh &mesh, const VertexLayout &layout,
                                      const std::vector<int> &patches, std::vector<char> *marked) {
  PetscFunctionBeginUser;
  std::vector<int> which = patches;
  if (which.empty())
    for (std::size_t p = 0; p < mesh.patch_names.size(); ++p) which.push_back(static_cast<int>(p));
  std::vector<double> mark(mesh.n_vertices, 0.0);
  for (int p : which) {
    PetscCheck(p >= 0 && p < static_cast<int>(mesh.patch_names.size()), PETSC_COMM_SELF,
               PETSC_ERR_ARG_OUTOFRANGE, "boundary patch %d does not exist", p);
    for (PetscInt f : mesh.boundary_faces(p))
      for (PetscInt i = mesh.face_vertex_ptr[f]; i < mesh.face_vertex_ptr[f + 1]; ++i)
        mark[mesh.face_vertex[i]] = 1.0;
  }
  Vec count;
  PetscCall(layout.create_global_vector(1, &count));
  PetscCall(layout.local_to_global_add(mark, count));
  PetscCall(layout.global_to_local(count, &mark));
  PetscCall(VecDestroy(&count));
  marked->assign(mesh.n_vertices, 0);
  for (PetscInt v = 0; v < mesh.n_vertices; ++v) (*marked)[v] = mark[v] > 0.5;
  PetscFunctionReturn(0);
}

} // namespace karman::mesh
