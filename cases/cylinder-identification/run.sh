#!/usr/bin/env bash
# Reproduces the identification case (README.md): the "experiment", its observations with 1 %
# noise (and without), the identification from 30 % off, the figures.
# usage: bash cases/cylinder-identification/run.sh [NP]   (from the repository root; NP ranks, 2)
set -eu
np=${1:-2}
here=cases/cylinder-identification
out=out/cylinder-identification
. scripts/mpi-env.sh # mpirun as root
karman="mpirun -n $np --oversubscribe build/release/karman"
mkdir -p "$out"
$karman run $here/truth.yaml -o $out/truth > $out/truth.log 2>&1
/usr/bin/python3 $here/make_observations.py $out/truth/forces.csv $out/observations.csv --noise 0.01
/usr/bin/python3 $here/make_observations.py $out/truth/forces.csv $out/observations-clean.csv
$karman optimize $here/case.yaml -o $out/noisy > $out/noisy.log 2>&1
$karman optimize $here/case.yaml -o $out/clean \
  --set objective.observations_file=../../$out/observations-clean.csv > $out/clean.log 2>&1
/usr/bin/python3 $here/plot_identification.py $out
