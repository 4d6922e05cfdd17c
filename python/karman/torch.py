"""karman as a differentiable layer of PyTorch.

    from karman.torch import Objectives
    layer = Objectives(sim, ["boundaries.cylinder.omega"], [None, {"type": "lift", "walls": ["cylinder"]}])
    J = layer(omega)            # tensor of the objective values (one per objective)
    J[0].backward()             # omega.grad: the exact discrete adjoint gradient

The parameter tensor is the concatenation of the named parameters' values: one entry for a
scalar parameter (viscosity, inflow, wall velocity, jet amplitude, ...), one entry per time
step for a per-step control (an array parameter of an unsteady case, levels 1..N).  The forward
sets them, solves and evaluates the objectives; the backward solves the adjoint problems at
that solution -- one adjoint per objective whose output gradient is not zero, all from the
same forward solution (steady: one Newton solve, then one transposed linear solve per
objective with the LU factors of the first; unsteady: one forward run that stores the
trajectory and one backward sweep that solves every objective's adjoint at each level with
one Jacobian and preconditioner).  Unsteady cases compute the gradients already in the forward
pass (eager), from the adjoint's forward run, so that a training step costs one forward run
and one backward sweep whatever the number of objectives.  Double precision throughout (the solver's); other dtypes are
converted.
"""
import numpy as np
import torch

from . import Simulation


def _layout(sim, names):
    """(name, offset, size, is_series) for each parameter name, and the total size."""
    values = sim.parameters()
    layout, offset = [], 0
    for name in names:
        if name not in values:
            raise KeyError(f"unknown parameter '{name}' (the case has: {', '.join(values)})")
        v = values[name]
        size = np.size(v) if isinstance(v, np.ndarray) else 1
        layout.append((name, offset, size, isinstance(v, np.ndarray)))
        offset += size
    return layout, offset


def _assign(sim, layout, x):
    sim.set_parameters({name: (x[o:o + n].copy() if series else float(x[o]))
                        for name, o, n, series in layout})


class _KarmanFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, params, layer):
        x = params.detach().cpu().double().numpy().copy()
        layer._check(x)
        _assign(layer.sim, layer.layout, x)
        eager = layer.eager and ctx.needs_input_grad[0]
        values, gradients = layer.sim._evaluate(layer.objectives, gradients=eager)
        ctx.layer, ctx.x = layer, x
        ctx.jacobian = np.array([layer.flatten(g) for g in gradients]) if eager else None
        ctx.params_dtype, ctx.params_device = params.dtype, params.device
        return torch.tensor(values, dtype=params.dtype, device=params.device)

    @staticmethod
    def backward(ctx, grad_output):
        layer, x = ctx.layer, ctx.x
        w = grad_output.detach().cpu().double().numpy()
        if ctx.jacobian is not None:
            grad = w @ ctx.jacobian
            return torch.tensor(grad, dtype=ctx.params_dtype, device=ctx.params_device), None
        _assign(layer.sim, layer.layout, x)  # the forward's parameters (another call may have run)
        wanted = [k for k in range(len(layer.objectives)) if w[k] != 0]
        grad = np.zeros(layer.size)
        if wanted:
            _, gradients = layer.sim._evaluate([layer.objectives[k] for k in wanted], gradients=True)
            for k, g in zip(wanted, gradients):
                grad += w[k] * layer.flatten(g)
        return torch.tensor(grad, dtype=ctx.params_dtype, device=ctx.params_device), None


class Objectives(torch.nn.Module):
    """A torch module: parameter tensor -> objective values, differentiable by the adjoint.

    sim: a karman.Simulation; names: the parameters the tensor holds, in order; objectives:
    a list of None (the case's objective) or objective dicts (as Simulation.gradient).
    eager: compute the gradients in the forward pass when the tensor requires them (default for
    unsteady cases, where the adjoint's own forward run then is the only forward run);
    otherwise the backward pass re-solves at the forward's parameters if needed and runs the
    adjoints there.
    """

    def __init__(self, sim, names, objectives=(None,), eager=None):
        super().__init__()
        self.eager = sim.case.unsteady if eager is None else bool(eager)
        if not isinstance(sim, Simulation):
            raise TypeError("Objectives(sim, ...): expected a karman.Simulation")
        self.sim, self.names, self.objectives = sim, list(names), list(objectives)
        if not self.objectives:
            raise ValueError("Objectives: no objective given")
        self.layout, self.size = _layout(sim, self.names)

    def initial(self):
        """The current values of the parameters as a double tensor (the layout of forward)."""
        values = self.sim.parameters()
        return torch.tensor(np.concatenate([np.atleast_1d(values[n]) for n in self.names]),
                            dtype=torch.float64)

    def flatten(self, gradient):
        """A gradient dict of Simulation.gradient as a vector in the tensor's layout."""
        return np.concatenate([np.atleast_1d(gradient["gradient"][n]) for n in self.names])

    def _check(self, x):
        if x.ndim != 1 or x.size != self.size:
            parts = ", ".join(f"{n} ({s})" for n, _, s, _ in self.layout)
            raise ValueError(f"karman.torch: expected a 1-D tensor of {self.size} values "
                             f"({parts}), got shape {tuple(x.shape)}")
        if not np.all(np.isfinite(x)):
            raise ValueError("karman.torch: the parameter tensor holds NaN or infinite values")

    def forward(self, params):
        return _KarmanFunction.apply(params, self)


def objectives(sim, names, objectives, params):
    """Functional form: Objectives(sim, names, objectives)(params)."""
    return Objectives(sim, names, objectives)(params)
