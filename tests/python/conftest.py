"""Shared set-up of the Python tests (run by tests/python/run_pytest.sh, which first runs the
command line on the same cases):
  KARMAN_SOURCE_DIR   the source tree (cases)
  KARMAN_TEST_WORK    the test's work folder: mesh cache, the CLI's outputs
      cli_steady/gradient.json                       `karman adjoint` of STEADY_OVERRIDES
      cli_unsteady/gradient.json, control_gradient.csv  `karman adjoint` of the unsteady case
      cli_design/verify.json                         `karman verify` of tests/data/naca0012-design.yaml
"""
import os

import numpy as np
import pytest

import karman

SRC = os.environ.get("KARMAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.environ.get("KARMAN_TEST_WORK", os.path.join(os.getcwd(), "python-test-work"))
STEADY_CASE = os.path.join(SRC, "cases", "dfg-2d1", "case.yaml")
UNSTEADY_CASE = os.path.join(WORK, "unsteady.yaml")


def steady_overrides():
    return {"mesh.level": 0, "mesh.cache_dir": os.path.join(WORK, "cache")}


def unsteady_overrides():
    return {"mesh.cache_dir": os.path.join(WORK, "cache")}


def agree(a, b, rel, scale):
    """a equals b to `rel` relative, or to the round-off of a sum of terms of size `scale`
    (1e-13 scale) for values that nearly vanish (dJ/d(outlet pressure) ~ 1e-14; the last
    level of a per-step control gradient, whose parallel LU solves differ in the last bits)."""
    return abs(a - b) <= rel * abs(b) + 1e-13 * scale


@pytest.fixture(scope="session")
def steady():
    sim = karman.Simulation(karman.Case.load(STEADY_CASE, steady_overrides()))
    sim.solve()
    return sim


@pytest.fixture(scope="session")
def unsteady():
    if not os.path.exists(UNSTEADY_CASE):
        pytest.skip(f"{UNSTEADY_CASE} missing (written by run_pytest.sh)")
    sim = karman.Simulation(karman.Case.load(UNSTEADY_CASE, unsteady_overrides()))
    sim.solve()
    return sim
