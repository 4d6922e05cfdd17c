# Sourced before mpirun (by the scripts, and by hand: `. scripts/mpi-env.sh`): lets mpirun run as
# root (containers, CI) and oversubscribe small machines; makes waiting ranks yield their core only
# when asked (below).  Harmless for normal users.
#
# Shared nodes: an Open MPI rank that waits for a message polls at 100 % of a core.  With
# mpi_yield_when_idle it calls sched_yield between polls instead, which sounds kinder on a busy node
# but is not: the yielding rank gives its core to whatever runs beside it and gets it back only
# after that process's time slice, at every message.  Measured on a 2-core machine (2026-12-06,
# scripts/bench-shared-node.sh, docs/install.md "Shared nodes"): a 2-rank control campaign beside a
# busy 1-process job took 126 s with yield_when_idle=1 against 5.3 s without, and beside another
# 2-rank job 19.5 against 8.4 s.  So it is set only on request:
#   KARMAN_SHARED_NODE=1   sets OMPI_MCA_mpi_yield_when_idle=1 (a value set before is kept);
#   unset, auto or 0       leaves Open MPI's default (it yields only when a job has more ranks than
#                          slots).
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ -z "${OMPI_MCA_mpi_yield_when_idle:-}" ] && [ "${KARMAN_SHARED_NODE:-auto}" = 1 ]; then
  export OMPI_MCA_mpi_yield_when_idle=1
fi
