"""Asserts that `karman verify` output DIR/verify.json passed for PARAMETER: no failures, the
adjoint within 1e-7 relative of the best central difference, the last two shape Taylor rates
>= 1.95.  Prints what it compares.  Used by the CLI tests of verify.
usage: check_verify.py DIR PARAMETER [LABEL]"""
import json
import sys

folder, name = sys.argv[1], sys.argv[2]
label = sys.argv[3] if len(sys.argv) > 3 else folder
v = json.load(open(f"{folder}/verify.json"))
p = v["parameters"][name]
rel = abs(p["adjoint"] - p["best_fd"]) / abs(p["best_fd"])
rates = [s["rate"] for s in v["taylor"]["steps"]][-2:]
print(f"{label}: d C_D / d {name}: adjoint {p['adjoint']:.10e}, FD {p['best_fd']:.10e}, "
      f"rel. diff {rel:.2e}; shape Taylor rates {rates}")
assert v["failures"] == 0 and p["ok"], v["failures"]
assert rel <= 1e-7, rel
assert len(rates) == 2 and min(rates) >= 1.95, rates
