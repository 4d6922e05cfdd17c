// A parallel numbering of the mesh vertices, for unknowns that live on vertices (mesh
// deformation, shape parameterizations).
//
// Every vertex of the serial mesh is owned by exactly one rank (Mesh::vertex_owned, from the
// DMPlex point SF; create() checks it).  The owned vertices of rank r get the contiguous
// global indices [owned_offset, owned_offset + n_owned), in local vertex order, so a PETSc
// Vec or Mat row block of rank r holds exactly its owned vertices.  Every local vertex (owned,
// or a copy of a vertex owned elsewhere: local cells include two ghost layers) knows the
// global index of its vertex.
//
// A PetscSF with the owned vertices as roots and every local vertex as a leaf moves values:
//   global_to_local      broadcast: every copy receives the owner's value
//   local_to_global_add  reduction: the owner adds the sum over all copies (its own included)
// The two are transposes of each other.  Global Vecs hold `bs` values per owned vertex
// (block size bs, e.g. dim for a displacement), local arrays `bs` values per local vertex.
#pragma once

#include "karman/mesh/mesh.hpp"

#include <petscsf.h>
#include <petscvec.h>

#include <vector>

namespace karman::mesh {

class VertexLayout {
public:
  VertexLayout() = default;
  VertexLayout(const VertexLayout &) = delete;
  VertexLayout &operator=(const VertexLayout &) = delete;
  ~VertexLayout();

  /// Numbers the vertices of `mesh` and builds the SF.  Checks that every serial vertex has
  /// exactly one owner over all ranks.  Collective.
  PetscErrorCode create(const Mesh &mesh);

  MPI_Comm comm() const { return comm_; }
  PetscInt n_local() const { return static_cast<PetscInt>(global_.size()); } ///< local vertices
  PetscInt n_owned() const { return static_cast<PetscInt>(owned_.size()); }  ///< owned vertices
  PetscInt n_global() const { return n_global_; }
  PetscInt owned_offset() const { return offset_; } ///< global index of the first owned vertex
  /// Global index of each local vertex (owned or copy).
  const std::vector<PetscInt> &global_index() const { return global_; }
  /// Local index of each owned vertex, in global order: owned_vertices()[i] has global index
  /// owned_offset() + i.
  const std::vector<PetscInt> &owned_vertices() const { return owned_; }
  /// Roots: owned vertices (global order); leaves: local vertices.  Owned by the layout.
  PetscSF sf() const { return sf_; }

  /// A global Vec with `bs` entries per owned vertex (block size bs), zeroed.  Collective.
  PetscErrorCode create_global_vector(PetscInt bs, Vec *v) const;
  /// Broadcast: (*local)[bs v + k] = global[bs g(v) + k] for every local vertex v, with bs the
  /// block size of `global`.  Resizes *local.  Collective.
  PetscErrorCode global_to_local(Vec global, std::vector<double> *local) const;
  /// Reduction: global[bs g + k] += sum over the local copies v of vertex g on all ranks of
  /// local[bs v + k], with bs the block size of `global` (local.size() = bs n_local()).  Each
  /// copy contributes its value: for a total, either one copy holds it and the others hold 0,
  /// or the copies hold shares.  Collective.
  PetscErrorCode local_to_global_add(const std::vector<double> &local, Vec global) const;

private:
  PetscErrorCode vertex_type(Vec global, std::size_t n_local_entries, PetscInt *bs,
                             MPI_Datatype *unit) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  PetscSF sf_ = nullptr;
  PetscInt n_global_ = 0, offset_ = 0;
  std::vector<PetscInt> global_, owned_;
};

/// (*marked)[v] = 1 for every local vertex v of a boundary face of one of `patches` (every
/// patch if empty), else 0, the same on every copy: the ranks that own the faces' cells mark
/// them, the layout tells every copy.  Collective.
PetscErrorCode mark_boundary_vertices(const Mesh &mesh, const VertexLayout &layout,
                                      const std::vector<int> &patches, std::vector<char> *marked);

} // namespace karman::mesh
