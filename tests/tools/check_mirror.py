#!/usr/bin/env python3
"""Checks that the tests mirror the sources (STYLE.md 1, ARCHITECTURE.md "Tests"): every
src/<layer>/<name>.cpp has tests/unit/test_<name>.cpp, listed in tests/CMakeLists.txt's
karman_tests, unless EXEMPT (no test file of its own, by design) or PENDING (its test file is
still to be written) below names it with the reason: where it is tested instead.  Prints every
source without its test file (and every stale exemption: a test file exists or the source is
gone) and exits 1 if there is one.
usage: check_mirror.py SOURCE_DIR"""
import os
import re
import sys

# src/<layer>/<name>.cpp -> why it has no tests/unit/test_<name>.cpp (one line each)
EXEMPT = {
    # the commands: run by the karman executable in tests/cli/*.sh (ARCHITECTURE.md "Tests")
    "src/cli/cmd_mesh.cpp": "karman mesh: tests/cli/mesh_summary.sh, bad_input.sh",
    "src/cli/cmd_run.cpp": "karman run: tests/cli/dfg_run.sh, couette.sh, restart.sh, shedding.sh, "
                           "scalar_restart.sh, slurm_requeue.sh, bad_input.sh",
    "src/cli/cmd_adapt.cpp": "karman adapt: tests/cli/adapt.sh, bad_input.sh",
    "src/cli/cmd_adjoint.cpp": "karman adjoint: tests/cli/adjoint.sh, unsteady_adjoint.sh, "
                               "bad_input.sh",
    "src/cli/cmd_verify.cpp": "karman verify: tests/cli/adjoint.sh, verify_design.sh, "
                              "control_verify.sh, optimize_multipoint.sh",
    "src/cli/cmd_optimize.cpp": "karman optimize, shape campaigns: tests/cli/optimize.sh, "
                                "optimize_kill.sh",
    "src/cli/cmd_optimize_control.cpp": "karman optimize, control campaigns: tests/cli/"
                                        "control_identify.sh, control_optimize.sh, "
                                        "slurm_requeue.sh",
    "src/cli/cmd_optimize_multipoint.cpp": "karman optimize, multipoint campaigns: tests/cli/"
                                           "optimize_multipoint.sh",
    "src/cli/campaign_output.cpp": "the history files and summaries of both campaigns: tests/cli/"
                                   "optimize.sh, optimize_kill.sh, control_optimize.sh",
    "src/cli/main.cpp": "the executable's main (dispatch, --help, error exit): every tests/cli "
                        "script, bad arguments in tests/cli/bad_input.sh",
}

# sources whose own test file is still to be written: tested indirectly, where named (listed by the
# check on every run, so that the list shrinks; a source leaves it with its test file)
PENDING = {}


def test_sources(root):
    """The test files listed in the karman_tests target of tests/CMakeLists.txt."""
    with open(os.path.join(root, "tests", "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"add_executable\(karman_tests(.*?)\)", text, re.S)
    return set(re.findall(r"unit/(test_[a-z0-9_]+)\.cpp", m.group(1) if m else ""))


def main():
    root = sys.argv[1]
    listed = test_sources(root)
    problems, sources = [], set()
    for dirpath, _, names in os.walk(os.path.join(root, "src")):
        for name in sorted(names):
            if not name.endswith(".cpp"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            sources.add(rel)
            test = "test_" + name[:-4]
            has_file = os.path.exists(os.path.join(root, "tests", "unit", test + ".cpp"))
            reason = EXEMPT.get(rel) or PENDING.get(rel)
            if reason:
                if has_file:
                    problems.append(f"{rel}: exempt ({reason}), but tests/unit/{test}.cpp "
                                    "exists: remove the exemption")
                continue
            if not has_file:
                problems.append(f"{rel}: no tests/unit/{test}.cpp")
            elif test not in listed:
                problems.append(f"{rel}: tests/unit/{test}.cpp is not in karman_tests "
                                "(tests/CMakeLists.txt)")
    for rel in sorted((set(EXEMPT) | set(PENDING)) - sources):
        problems.append(f"{rel}: exempt, but there is no such source: remove the exemption")
    for rel in sorted(PENDING):
        print(f"pending: {rel} (indirectly: {PENDING[rel]})")
    for p in sorted(problems):
        print(p)
    print(f"check_mirror: {len(sources)} sources, {len(EXEMPT)} exempt, {len(PENDING)} pending, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
