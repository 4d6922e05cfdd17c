#!/usr/bin/env bash
# Slurm job script for karman (submitted by scripts/slurm/submit.sh; see scripts/slurm/README.md):
#   karman-job.sh COMMAND CASE.yaml OUTDIR [karman arguments...]      COMMAND: run | adjoint | optimize
# On every start (the first and each requeue) it decides whether OUTDIR can be continued:
#   run       OUTDIR/checkpoints/*.h5        -> karman run --restart (the last complete checkpoint)
#   adjoint   OUTDIR/adjoint-state.h5        -> karman adjoint --restart (the saved backward sweep)
#   optimize  OUTDIR/optimization-journal.jsonl -> karman optimize --restart (journal replay)
# and otherwise starts afresh.  A finished job leaves OUTDIR/.karman-job-done: a requeued copy of
# it exits at once.  The time-limit warning (sbatch --signal=B:USR1@SECONDS) and SIGTERM
# (preemption, scancel) requeue the job (scontrol requeue) and stop karman: what karman has
# written is crash-safe (atomic checkpoints, journal and adjoint state), so nothing is lost.
# Environment: KARMAN (the executable; default: karman on PATH), KARMAN_LAUNCHER (default
# "srun"; e.g. "mpirun -n 4" outside Slurm, "" to run karman directly).
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "karman-job.sh: usage: karman-job.sh run|adjoint|optimize CASE.yaml OUTDIR [karman arguments...]" >&2
  exit 2
fi
command=$1 case_file=$2 outdir=$3
shift 3
karman=${KARMAN:-karman}
launcher=${KARMAN_LAUNCHER-srun}
log() { echo "karman-job: $(date -u +%FT%TZ) job ${SLURM_JOB_ID:-none} (restart ${SLURM_RESTART_COUNT:-0}): $*"; }

case $command in
  run | adjoint | optimize) ;;
  *) echo "karman-job.sh: unknown command '$command' (expected run, adjoint or optimize)" >&2; exit 2 ;;
esac
[ -f "$case_file" ] || { echo "karman-job.sh: case file '$case_file' not found" >&2; exit 2; }
if [ -e "$outdir/.karman-job-done" ]; then
  log "$outdir/.karman-job-done exists: the $command finished in an earlier run of this job; nothing to do"
  exit 0
fi

restart=()
case $command in
  run) compgen -G "$outdir/checkpoints/*.h5" > /dev/null && restart=(--restart) ;;
  adjoint) [ -s "$outdir/adjoint-state.h5" ] && restart=(--restart) ;;
  optimize) [ -s "$outdir/optimization-journal.jsonl" ] && restart=(--restart) ;;
esac
mkdir -p "$outdir"

child=0
requeue() { # SIGNAL
  log "received $1: requeueing and stopping karman (its files are crash-safe)"
  if [ -n "${SLURM_JOB_ID:-}" ]; then
    scontrol requeue "$SLURM_JOB_ID" || log "scontrol requeue $SLURM_JOB_ID failed"
  fi
  [ "$child" -gt 0 ] && kill -TERM "$child" 2> /dev/null
  wait "$child" 2> /dev/null
  exit 143
}
trap 'requeue USR1' USR1
trap 'requeue TERM' TERM

log "karman $command $case_file -o $outdir ${restart[*]} $*"
# shellcheck disable=SC2086 # the launcher is a command line
$launcher "$karman" "$command" "$case_file" -o "$outdir" "${restart[@]}" "$@" &
child=$!
wait "$child"
status=$?
# a signal interrupts `wait`: the trap has run and exited; here karman itself ended
if [ $status -eq 0 ]; then
  touch "$outdir/.karman-job-done"
  log "finished"
else
  log "karman exited with status $status (not requeued; see the log above)"
fi
exit $status
