"""karman.torch: the autograd function from a parameter tensor to objective values passes
torch.autograd.gradcheck (double precision, steady coarse DFG 2D-1: viscosity and inflow ->
drag and lift); its backward equals Simulation.gradient (steady and unsteady per-step control);
a tensor of the wrong length raises."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import karman
from karman.torch import Objectives
from conftest import STEADY_CASE, steady_overrides

NU, INLET, OMEGA = "fluid.viscosity", "boundaries.inlet.velocity", "boundaries.cylinder.omega"
LIFT = {"type": "lift", "walls": ["cylinder"]}


@pytest.fixture(scope="module")
def layer():
    # Newton converged to rtol 1e-13 (|R| ~ 1e-16): with the default 1e-10 (|R| ~ 1e-12) the
    # central difference of c_L with respect to the inflow at the relative step 1e-6 is off by
    # 3.4e-7 (-0.0308178135 against -0.0308174689 at steps 1e-4 ... 1e-5 and by the adjoint), at
    # gradcheck's tolerance 3.2e-7; at 1e-13 by 2e-10
    overrides = {**steady_overrides(), "solver.rtol": 1e-13}
    sim = karman.Simulation(karman.Case.load(STEADY_CASE, overrides))
    return Objectives(sim, [NU, INLET], [None, LIFT])


def test_gradcheck(layer):
    x = layer.initial().requires_grad_(True)
    # the solver's convergence (Newton to |R| ~ 1e-16, the fixture) limits the finite
    # differences of gradcheck: steps of 1e-6 relative to each parameter, checked to 1e-5
    scale = x.detach().abs()
    f = lambda y: layer(y * scale)
    # (nondet_tol: on 2 ranks the parallel LU and the reductions are not bitwise reproducible
    # from one solve to the next; the backward repeats to ~1e-14 of gradients of size ~1)
    assert torch.autograd.gradcheck(f, (torch.ones_like(x, requires_grad=True),), eps=1e-6,
                                    atol=1e-8, rtol=1e-5, nondet_tol=1e-11)


def test_backward_equals_adjoint(layer):
    x = layer.initial().requires_grad_(True)
    J = layer(x)
    (J[0] + 2 * J[1]).backward()
    sim = layer.sim
    sim.solve()
    drag, lift = sim.gradient(), sim.gradient(LIFT)
    # (1e-12, not bitwise: on 2 ranks two solves differ in the last bits)
    assert J[0].item() == pytest.approx(drag["J"], rel=1e-12, abs=0)
    assert J[1].item() == pytest.approx(lift["J"], rel=1e-12, abs=0)
    expected = layer.flatten(drag) + 2 * layer.flatten(lift)
    assert np.allclose(x.grad.numpy(), expected, rtol=1e-12, atol=0)


def test_wrong_length(layer):
    with pytest.raises(ValueError, match="expected a 1-D tensor of 2 values"):
        layer(torch.ones(3, dtype=torch.float64))
    with pytest.raises(KeyError, match="unknown parameter 'nu'"):
        Objectives(layer.sim, ["nu"])


def test_unsteady_control(unsteady):
    layer = Objectives(unsteady, [OMEGA])
    x = layer.initial().requires_grad_(True)
    J = layer(x)
    J.sum().backward()
    unsteady.set_parameters({OMEGA: x.detach().numpy()})
    unsteady.solve()
    g = unsteady.gradient()
    assert J[0].item() == pytest.approx(g["J"], rel=1e-12, abs=0)
    assert np.allclose(x.grad.numpy(), g["gradient"][OMEGA], rtol=1e-10, atol=0)


class _Counting:
    """Wraps a Simulation's native object and counts its gradient calls and objectives."""

    def __init__(self, native):
        self.native, self.calls = native, []

    def gradients(self, objectives, own_forward=False):
        self.calls.append(len(objectives))
        return self.native.gradients(objectives, own_forward)

    def __getattr__(self, name):
        return getattr(self.native, name)


def test_unsteady_objectives_batched(unsteady):
    # two objectives of an unsteady case: one forward run and one backward sweep (a single
    # native gradients call with both), each equal to its own adjoint run
    layer = Objectives(unsteady, [OMEGA, NU], [None, LIFT])
    counting = _Counting(unsteady._native)
    unsteady._native = counting
    try:
        x = layer.initial().requires_grad_(True)
        J = layer(x)
        (J[0] - 3 * J[1]).backward()
        assert counting.calls == [2]
    finally:
        unsteady._native = counting.native
    unsteady.set_parameters({OMEGA: x.detach().numpy()[:-1], NU: x.detach().numpy()[-1]})
    unsteady.solve()
    drag, lift = unsteady.gradient(), unsteady.gradient(LIFT)
    assert J[0].item() == pytest.approx(drag["J"], rel=1e-12, abs=0)
    assert J[1].item() == pytest.approx(lift["J"], rel=1e-12, abs=0)
    expected = layer.flatten(drag) - 3 * layer.flatten(lift)
    scale = np.abs(expected).max()
    # (separate sweeps and one shared sweep: the same to the adjoint's linear tolerance)
    assert np.abs(x.grad.numpy() - expected).max() <= 1e-9 * scale
