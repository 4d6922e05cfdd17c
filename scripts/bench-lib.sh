# Shell functions shared by the benchmark scripts (sourced, not run).

# spin_up_controlled_cases NAME KARMAN RANKS STEPS OUT: the spin-ups that the controlled cases
# (cylinder-rotary-control, neural-control) start from (initial.file in their case files), STEPS
# steps of their spinup.yaml on RANKS ranks into the folder the case file names; skipped where
# that file exists.  NAME prefixes the messages, OUT/spinup-CASE.log takes each run's log.
spin_up_controlled_cases() {
  local name=$1 karman=$2 ranks=$3 steps=$4 out=$5 c init dt
  for c in cylinder-rotary-control neural-control; do
    init=$(/usr/bin/python3 -c "
import os, yaml
f = yaml.safe_load(open('cases/$c/case.yaml'))['initial']['file']
print(os.path.normpath(os.path.join('cases/$c', f)))")
    [ -f "$init" ] && continue
    dt=$(/usr/bin/python3 -c "import yaml; print(yaml.safe_load(open('cases/$c/spinup.yaml'))['time']['dt'])")
    echo "$name: spin-up of $c into $(dirname "$init")"
    mpirun -n "$ranks" "$karman" run "cases/$c/spinup.yaml" -o "$(dirname "$init")" --set output.vtk=false \
      --set time.t_end="$(/usr/bin/python3 -c "print($dt * $steps)")" --set time.statistics_start=0 \
      > "$out/spinup-$c.log" 2>&1 || { tail -5 "$out/spinup-$c.log"; return 1; }
  done
}
