"""karman from Python with design variables (tests/data/naca0012-design.yaml: NACA 0012 at
Re 200, every kind of shape parameterization at once: FFD, Hicks-Henne, rigid, surface-normal,
radial):
each design entry is a parameter; setting it deforms the mesh (linear elasticity from the
case's mesh, as `karman optimize`); the gradients of drag and lift with respect to every design
variable equal those of `karman verify` (verify.json, the same chain through the deformation's
reverse mode) and fourth-order central differences of re-deformed, re-solved designs (1e-6);
out-of-bounds values and a deformation that inverts cells raise and change nothing."""
import json
import os

import numpy as np
import pytest

import karman
from conftest import SRC, WORK

DESIGN_CASE = os.path.join(SRC, "tests", "data", "naca0012-design.yaml")
LIFT = {"type": "lift", "walls": ["airfoil"]}


def overrides():
    return {"mesh.cache_dir": os.path.join(WORK, "cache")}


@pytest.fixture(scope="module")
def design():
    sim = karman.Simulation(karman.Case.load(DESIGN_CASE, overrides()))
    sim.solve()
    return sim


def test_design_parameters(design):
    d = design.design()
    assert list(d["entries"]) == [
        "design.ffd0", "design.hh0", "design.rigid0", "design.normal0", "design.radial0"]
    values = design.parameters()
    for entry, (offset, count) in d["entries"].items():
        assert values[entry].shape == (count,)
        assert np.array_equal(values[entry], d["values"][offset:offset + count])
    # the initial design of the case (rigid angle 0.02) is applied
    assert values["design.rigid0"][0] == 0.02


def test_design_gradient_equals_command_line(design):
    path = os.path.join(WORK, "cli_design", "verify.json")
    if not os.path.exists(path):
        pytest.skip(f"{path} missing (written by run_pytest.sh)")
    with open(path) as f:
        cli = json.load(f)["design_gradient"]
    d = design.design()
    drag, lift = design.gradients([None, LIFT])
    for g, function in ((drag, "objective"), (lift, "lift")):
        ours = np.concatenate([g["gradient"][e] for e in d["entries"]])
        theirs = np.array([cli[name][function] for name in d["names"]])
        assert ours.shape == theirs.shape == (66,)
        # (the CLI's evaluation warm-starts its Newton solve: the states agree to the solver's
        # tolerance, the gradients to ~1e-13 of the largest)
        assert np.abs(ours - theirs).max() <= 1e-10 * np.abs(theirs).max(), function


@pytest.mark.parametrize("entry,index", [("design.ffd0", 1), ("design.hh0", 2),
                                         ("design.rigid0", 0), ("design.normal0", 17),
                                         ("design.radial0", 1)])
def test_design_gradient_equals_finite_differences(design, entry, index):
    a = design.parameters()[entry].copy()
    g = design.gradients([None, LIFT])
    d = design.design()
    offset, _ = d["entries"][entry]
    h = 1e-3 * (d["upper"][offset + index] - d["lower"][offset + index])

    def values(step):
        b = a.copy()
        b[index] += step
        design.set_parameters({entry: b})
        design.solve()
        return np.array(design.objectives([None, LIFT]))

    fd = (8 * (values(h) - values(-h)) - (values(2 * h) - values(-2 * h))) / (12 * h)
    design.set_parameters({entry: a})
    design.solve()
    for k in range(2):
        adj = g[k]["gradient"][entry][index]
        scale = np.abs(g[k]["gradient"][entry]).max()
        assert abs(adj - fd[k]) <= 1e-6 * scale, (k, adj, fd[k])


def test_bad_design(design, tmp_path_factory):
    before = design.parameters()
    cd = design.forces()["cd"]
    with pytest.raises(ValueError, match=r"'rigid0.dy' = 0.5.* outside its bounds \[-0.02"):
        design.set_parameters({"design.rigid0": [0.02, 0.0, 0.5]})
    with pytest.raises(ValueError, match="expected 3 values"):
        design.set_parameters({"design.ffd0": np.zeros(4)})
    with pytest.raises(KeyError, match="design.ffd0"):
        design.set_parameters({"design.ffd": np.zeros(3)})
    # wide bounds: a rigid move of the airfoil by 4.5 chords (far field radius 5) inverts cells
    with open(DESIGN_CASE) as f:
        text = f.read()
    text = text.replace("lower: [-0.05, -0.02, -0.02], upper: [0.05, 0.02, 0.02]",
                        "lower: [-0.05, -5, -5], upper: [0.05, 5, 5]")
    text = text.replace("file: naca0012.geo", f"file: {os.path.join(SRC, 'tests', 'data')}/naca0012.geo")
    path = os.path.join(WORK, f"wide-bounds-{karman.rank()}.yaml")
    with open(path, "w") as f:
        f.write(text)
    wide = karman.Simulation(karman.Case.load(path, overrides()))
    wide.solve()
    cd_wide = wide.forces()["cd"]
    with pytest.raises(karman.Error, match="mesh deformation failed.*unchanged"):
        wide.set_parameters({"design.rigid0": [0.02, 0.0, 4.5]})
    assert wide.parameters()["design.rigid0"][2] == 0.0
    wide.solve()
    assert wide.forces()["cd"] == pytest.approx(cd_wide, rel=1e-10)
    # nothing changed in the first simulation either
    after = design.parameters()
    for k, v in before.items():
        assert np.array_equal(np.asarray(after[k]), np.asarray(v)), k
    design.solve()
    assert design.forces()["cd"] == pytest.approx(cd, rel=1e-10)
