"""karman from Python, unsteady (coarse cylinder channel, 452 cells, 6 BDF steps, the cylinder
rotating with a per-step rate omega^n read from a file, mean drag): the solve with progress, the
per-step control gradient and the parameter gradients of the unsteady adjoint equal to the
command line's control_gradient.csv and gradient.json (1e-12 relative) and to central finite
differences (1e-6); the per-step control set from Python as an array; gradient() and
objective() without solve(), one forward run each (counted: PETSc's SNESSolve events, one per
time step); solve() a forward-only run (solver.tolerances auto: forward), gradient() refusing
explicit forward tolerances."""
import csv
import json
import os

import numpy as np
import pytest

import karman
from karman import _karman
from conftest import UNSTEADY_CASE, WORK, agree, unsteady_overrides

OMEGA, NU, INLET = "boundaries.cylinder.omega", "fluid.viscosity", "boundaries.inlet.velocity"


def cli_results():
    d = os.path.join(WORK, "cli_unsteady")
    if not os.path.exists(os.path.join(d, "control_gradient.csv")):
        pytest.skip(f"{d}/control_gradient.csv missing (written by run_pytest.sh)")
    with open(os.path.join(d, "gradient.json")) as f:
        j = json.load(f)
    with open(os.path.join(d, "control_gradient.csv")) as f:
        rows = list(csv.DictReader(f))
    return j, np.array([float(r[f"dJ/d({OMEGA})"]) for r in rows])


def test_solve_with_progress(unsteady):
    seen = []
    unsteady.solve(progress=lambda r: seen.append((r["step"], r["time"], r["cd"])))
    n = unsteady.case.steps
    assert [s for s, _, _ in seen] == list(range(1, n + 1))
    h = unsteady.history()
    assert len(h["time"]) == n + 1 and h["time"][0] == 0
    assert np.array_equal(h["cd"][1:], [c for _, _, c in seen])
    assert unsteady.forces()["cd"] == h["cd"][-1]
    omega = unsteady.parameters()[OMEGA]
    assert omega.shape == (n,)


def test_gradient_equals_command_line(unsteady):
    cli, control = cli_results()
    g = unsteady.gradient()
    assert agree(g["J"], cli["objective"]["value"], 1e-12, 0)
    series = g["gradient"][OMEGA]
    scale = np.abs(control).max()
    assert series.shape == control.shape
    # the series as a vector to 1e-12 relative (each entry within 1e-12 of the largest): on 2
    # ranks the partitions of the CLI run and of this process may differ (PT-Scotch), which moves
    # the small entries by a few 1e-13 of the largest
    for k in range(len(control)):
        assert abs(series[k] - control[k]) <= 1e-12 * scale, (k, series[k], control[k])
    big = max(abs(v["gradient"]) for v in cli["gradient"].values())
    for name, v in cli["gradient"].items():
        assert agree(g["gradient"][name], v["gradient"], 1e-12, big), name


def objective_at(sim, name, value):
    sim.set_parameters({name: value})
    sim.solve()
    return sim.objective()


@pytest.mark.parametrize("level", [1, 6])
def test_control_gradient_equals_finite_differences(unsteady, level):
    omega = unsteady.parameters()[OMEGA].copy()
    series = unsteady.gradient()["gradient"][OMEGA]
    g = series[level - 1]
    h = 1e-4
    e = np.zeros_like(omega)
    e[level - 1] = h
    fd = (objective_at(unsteady, OMEGA, omega + e) - objective_at(unsteady, OMEGA, omega - e)) / (2 * h)
    objective_at(unsteady, OMEGA, omega)
    # relative 1e-6, or 1e-6 of the largest entry where the entry nearly vanishes (the last
    # level: 2 % of it), above the difference quotient's round-off (|J| 1e-15 / h ~ 1e-11 here,
    # measured 5.6e-12 on 2 ranks)
    assert abs(g - fd) <= 1e-6 * abs(fd) + 1e-6 * np.abs(series).max(), (level, g, fd)


@pytest.mark.parametrize("name", [NU, INLET])
def test_parameter_gradient_equals_finite_differences(unsteady, name):
    value = unsteady.parameters()[name]
    g = unsteady.gradient()["gradient"][name]
    h = 1e-4 * abs(value)
    fd = (objective_at(unsteady, name, value + h) - objective_at(unsteady, name, value - h)) / (2 * h)
    objective_at(unsteady, name, value)
    assert abs(g - fd) <= 1e-6 * abs(fd), (name, g, fd)


def test_control_from_python(unsteady):
    """An array set from Python is the per-step control: the file's values set from Python (a
    list) give the command line's objective, other values another one; wrong lengths are
    refused."""
    cli, _ = cli_results()
    omega = unsteady.parameters()[OMEGA].copy()
    assert agree(objective_at(unsteady, OMEGA, omega.tolist()), cli["objective"]["value"], 1e-12, 0)
    assert abs(objective_at(unsteady, OMEGA, 2 * omega) - cli["objective"]["value"]) > 1e-6
    objective_at(unsteady, OMEGA, omega)
    with pytest.raises(ValueError, match=f"expected {len(omega)} values .one per time step., got 2"):
        unsteady.set_parameters({OMEGA: [0.1, 0.2]})
    with pytest.raises(karman.Error, match="not a parameter with a value per time step"):
        unsteady.set_parameters({NU: np.ones(len(omega))})
    assert np.array_equal(unsteady.parameters()[OMEGA], omega)


def forward_steps(call):
    """call()'s result and the time steps of the forward runs it made (the SNESSolve events of
    PETSc's main log stage: the backward sweep runs in a stage of its own)."""
    before = _karman.event_count("SNESSolve")
    result = call()
    return result, _karman.event_count("SNESSolve") - before


def test_gradient_without_solve_is_one_forward_run():
    """An unsteady gradient needs no solve() and runs the forward once (with the trajectory);
    objective() too.  solve() keeps no trajectory: a gradient() after it runs its own forward (the
    docstring says so), once."""
    cli, control = cli_results()
    sim = karman.Simulation(karman.Case.load(UNSTEADY_CASE, unsteady_overrides()))
    n = sim.case.steps
    g, steps = forward_steps(sim.gradient)
    assert steps == n, (steps, n)
    assert not sim.solved
    assert agree(g["J"], cli["objective"]["value"], 1e-12, 0)
    scale = np.abs(control).max()
    assert np.all(np.abs(g["gradient"][OMEGA] - control) <= 1e-12 * scale)
    J, steps = forward_steps(sim.objective)
    assert steps == n and J == pytest.approx(g["J"], rel=1e-12)
    _, steps = forward_steps(sim.solve)
    assert steps == n and sim.solved
    _, steps = forward_steps(sim.gradient)
    assert steps == n


def test_solve_is_forward_only():
    """solve() of an unsteady case stops its steps at the time discretization's accuracy
    (solver.tolerances auto: forward, as karman run): fewer Newton iterations than converged
    steps, the drag history the same but for a small algebraic error; with solver.tolerances:
    forward set, gradient() refuses and says why."""
    forward = karman.Simulation(karman.Case.load(UNSTEADY_CASE, unsteady_overrides()))
    converged = karman.Simulation(
        karman.Case.load(UNSTEADY_CASE, {**unsteady_overrides(), "solver.tolerances": "converged"}))
    f, c = forward.solve(), converged.solve()
    assert f["step_tolerances"] == "forward" and c["step_tolerances"] == "converged"
    n = forward.case.steps
    assert f["truncation_stops"] == n - 2 and c["truncation_stops"] == 0, (f, c)
    assert f["newton_iterations"] < c["newton_iterations"], (f, c)
    cd_f, cd_c = forward.history()["cd"], converged.history()["cd"]
    # the first two steps converge fully in both; after them the difference is the algebraic
    # error left by the truncation stop: small against c_D's change per step (6e-4 against 0.06-0.08)
    assert np.abs(cd_f[:3] - cd_c[:3]).max() <= 1e-12 * np.abs(cd_c).max()
    change = np.abs(np.diff(cd_c[2:])).max()
    assert np.abs(cd_f - cd_c).max() <= 2e-2 * change, (np.abs(cd_f - cd_c).max(), change)
    explicit = karman.Simulation(
        karman.Case.load(UNSTEADY_CASE, {**unsteady_overrides(), "solver.tolerances": "forward"}))
    with pytest.raises(karman.Error, match="solver.tolerances is forward: the unsteady adjoint "
                                          "needs converged time steps"):
        explicit.gradient()
