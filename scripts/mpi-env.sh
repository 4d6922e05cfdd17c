# Sourced before mpirun (by the scripts, and by hand: `. scripts/mpi-env.sh`): lets mpirun run as
# root (containers, CI), oversubscribe small machines, and keeps Open MPI's waiting ranks from
# busy-waiting on shared nodes.  Harmless for normal users.
#
# Shared nodes: an Open MPI rank that waits for a message polls at 100 % of a core.  When the node
# runs more processes than it has cores (other jobs, or several karman runs on one workstation)
# the polling ranks take the cores from the ranks that compute; with mpi_yield_when_idle a
# waiting rank yields its core (sched_yield) between polls.  Open MPI sets it itself only when one
# job has more ranks than slots, not when jobs share a node.  Here it is set when
#   KARMAN_SHARED_NODE=1, or
#   KARMAN_SHARED_NODE is unset or "auto" and the node's load average over the last minute is at
#   least its number of cores (the cores are busy before these ranks start),
# and never when KARMAN_SHARED_NODE=0 or OMPI_MCA_mpi_yield_when_idle is set already.  Measured on
# a 2-core machine (scripts/bench-shared-node.sh, docs/install.md "Shared nodes"): a 2-rank DFG 2D-1
# level-0 run beside another 2-rank job takes 6.2 instead of 9.1 s (medians of 5).
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ -z "${OMPI_MCA_mpi_yield_when_idle:-}" ]; then
  case "${KARMAN_SHARED_NODE:-auto}" in
    1) export OMPI_MCA_mpi_yield_when_idle=1 ;;
    auto)
      if [ -r /proc/loadavg ] &&
        awk -v cores="$(nproc 2> /dev/null || echo 1)" '{ exit !($1 >= cores) }' /proc/loadavg; then
        export OMPI_MCA_mpi_yield_when_idle=1
      fi
      ;;
  esac
fi
