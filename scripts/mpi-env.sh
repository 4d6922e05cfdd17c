# Sourced by the scripts: lets mpirun run as root (containers, CI) and oversubscribe
# small machines.  Harmless for normal users.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
