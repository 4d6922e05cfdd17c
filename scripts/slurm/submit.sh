#!/usr/bin/env bash
# Submits a karman run, adjoint or optimization as a requeueable Slurm job (scripts/slurm/README.md):
#   submit.sh run|adjoint|optimize CASE.yaml OUTDIR --nodes N --ranks P --mem MEM --time TIME
#             [--partition NAME] [--account NAME] [--warning SECONDS] [--dry-run] [-- karman arguments]
# MEM is per node (sbatch --mem, e.g. 64G), TIME a Slurm time limit (e.g. 12:00:00 or 2-00:00:00).
# The job is requeued on preemption or when the time limit is near (--signal=B:USR1@SECONDS, default
# 300) and continues with --restart (scripts/slurm/karman-job.sh); its log is appended to
# OUTDIR/slurm-JOBID.out.  --dry-run prints the sbatch command without submitting it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() { echo "submit.sh: $*" >&2; exit 2; }
[ $# -ge 3 ] || usage
command=$1 case_file=$2 outdir=$3
shift 3
case $command in run | adjoint | optimize) ;; *) die "unknown command '$command' (run, adjoint or optimize)" ;; esac
[ -f "$case_file" ] || die "case file '$case_file' not found"
nodes="" ranks="" mem="" time_limit="" partition="" account="" warning=300 dry=0
while [ $# -gt 0 ]; do
  case $1 in
    --nodes | --ranks | --mem | --time | --partition | --account | --warning)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --nodes) nodes=$2 ;; --ranks) ranks=$2 ;; --mem) mem=$2 ;; --time) time_limit=$2 ;;
        --partition) partition=$2 ;; --account) account=$2 ;; --warning) warning=$2 ;;
      esac
      shift 2 ;;
    --dry-run) dry=1; shift ;;
    --) shift; break ;;
    *) die "unknown option '$1' (karman arguments go after --)" ;;
  esac
done
[ -n "$nodes" ] || die "--nodes is required"
[ -n "$ranks" ] || die "--ranks is required"
[ -n "$mem" ] || die "--mem is required (per node, e.g. 64G)"
[ -n "$time_limit" ] || die "--time is required (e.g. 12:00:00)"
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive integer, got '$nodes'"
[[ $ranks =~ ^[1-9][0-9]*$ ]] || die "--ranks must be a positive integer, got '$ranks'"
[ "$ranks" -ge "$nodes" ] || die "--ranks ($ranks) must be at least --nodes ($nodes)"
[[ $mem =~ ^[0-9]+[KMGT]?$ ]] || die "--mem must be a size such as 64G, got '$mem'"
[[ $time_limit =~ ^([0-9]+-)?[0-9]+(:[0-9]{2}){0,2}$ ]] || die "--time must be a Slurm time such as 12:00:00, got '$time_limit'"
[[ $warning =~ ^[0-9]+$ ]] || die "--warning must be seconds, got '$warning'"
mkdir -p "$outdir"
case_abs=$(cd "$(dirname "$case_file")" && pwd)/$(basename "$case_file")
out_abs=$(cd "$outdir" && pwd)
args=(sbatch --job-name="karman-$command" --nodes="$nodes" --ntasks="$ranks" --mem="$mem"
      --time="$time_limit" --requeue --signal="B:USR1@$warning" --open-mode=append
      --output="$out_abs/slurm-%j.out")
[ -n "$partition" ] && args+=(--partition="$partition")
[ -n "$account" ] && args+=(--account="$account")
args+=("$here/karman-job.sh" "$command" "$case_abs" "$out_abs" "$@")
printf '%q ' "${args[@]}"
echo
[ $dry = 1 ] && exit 0
"${args[@]}"
