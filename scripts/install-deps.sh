#!/usr/bin/env bash
# Installs karman's build and run dependencies from Debian's archive.  Idempotent:
# packages already present are skipped, and `apt-get update` runs once, only when
# something is missing.  Runs as root (or through sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config     # compiler and build system
  petsc-dev                            # PETSc 3.18 (DMPlex, SNES, KSP; MUMPS, hypre, PT-Scotch)
  libopenblas0-serial                  # optimized BLAS for MUMPS (3x faster factorizations than the reference BLAS)
  liblapack-dev                        # LAPACK (dgesv, dgeev) for the recycling GMRES's small eigenproblems
  libopenmpi-dev openmpi-bin openssh-client   # MPI (mpirun needs an rsh agent present)
  libhdf5-openmpi-dev                  # parallel HDF5
  libvtk9-dev                          # VTK 9.1: XML writers, ParallelMPI
  catch2                               # unit tests (Catch2 v2)
  libyaml-cpp-dev nlohmann-json3-dev   # case files, JSON summaries
  libnlopt-cxx-dev                     # NLopt 2.7: SLSQP/CCSAQ/MMA for karman optimize
  gmsh                                 # meshing of .geo files
  clang-format                         # the format check (ctest format)
  python3 python3-h5py python3-matplotlib   # post-processing scripts
  pybind11-dev python3-dev python3-numpy python3-mpi4py python3-pytest   # the Python module and its tests
  python3-torch python3-scipy          # karman.torch, the neural-control and identification examples
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /tmp/karman-apt.log 2>&1 ||
  { tail -30 /tmp/karman-apt.log; exit 1; }
echo "install-deps: done"
