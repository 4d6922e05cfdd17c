"""karman from Python: the C++ solver and its exact discrete adjoint behind a small API.

    import karman
    case = karman.Case.load("cases/dfg-2d1/case.yaml", overrides={"mesh.level": 0})
    sim = karman.Simulation(case)
    sim.solve(progress=print)                 # steady Newton or unsteady BDF steps
    sim.forces()["cd"]                        # c_D, c_L, c_M, delta p, probes
    sim.set_parameters({"fluid.viscosity": 2e-3})
    sim.solve()
    g = sim.gradient()                        # J, dJ/d(every parameter), dJ/dX
    g["gradient"]["fluid.viscosity"]

A steady gradient is taken at the solution of solve().  An unsteady gradient needs no solve():
gradient() is one forward run that stores the trajectory plus one backward sweep, and that
forward run is its own (solve() keeps no trajectory), so call solve() on an unsteady case only
for forces(), history(), fields() or write().

Runs under ``mpirun -n P python3 script.py`` (every rank runs the script; calls are
collective).  PETSc is initialized at import (MPI by PETSc, or by mpi4py if it was imported
first) with the options of the environment variable KARMAN_PETSC_OPTIONS (and PETSC_OPTIONS),
and finalized at exit.  Failures of the library raise karman.Error with the one-line message
of the command line; bad arguments raise KeyError, ValueError or TypeError.
"""
import atexit
import json
import os
import shlex

from . import _karman
from ._karman import Error

__all__ = ["Case", "Simulation", "Error", "rank", "size"]

_karman.initialize(["-no_signal_handler"] + shlex.split(os.environ.get("KARMAN_PETSC_OPTIONS", "")))
atexit.register(_karman.finalize)


def rank():
    """This process's MPI rank (PETSC_COMM_WORLD)."""
    return _karman.rank()


def size():
    """The number of MPI ranks."""
    return _karman.size()


def _yaml(value):
    """A Python value as YAML text (JSON is YAML; NumPy arrays and numbers as lists, floats)."""
    def plain(o):
        if hasattr(o, "tolist"):
            return o.tolist()
        raise TypeError(f"cannot pass a {type(o).__name__} to karman")
    return json.dumps(value, default=plain)


def _texts(objectives):
    """Objective dicts (None: the case's objective) as YAML texts ("" for None)."""
    if isinstance(objectives, (dict, str)) or objectives is None:
        raise TypeError("expected a list of objectives (None or dicts)")
    return ["" if o is None else _yaml(o) for o in objectives]


class Case:
    """A case file, validated, with every default filled in."""

    def __init__(self, native):
        self._native = native

    @staticmethod
    def load(path, overrides=None):
        """Loads `path` with `overrides` {"section.key": value} (as `karman --set`)."""
        items = [f"{k}={_yaml(v)}" for k, v in (overrides or {}).items()]
        return Case(_karman.Case.load(os.fspath(path), items))

    @property
    def config(self):
        """The resolved configuration as a dict (what OUTDIR/case.resolved.yaml holds)."""
        return self._native.config

    @property
    def file(self):
        return self._native.file

    @property
    def unsteady(self):
        return self._native.unsteady

    @property
    def steps(self):
        """Time steps of an unsteady case (time.t_end / time.dt)."""
        return self._native.steps

    def __repr__(self):
        return f"karman.Case({self.file!r})"


class Simulation:
    """The flow of a case: solve, monitors, fields, parameters and adjoint gradients.

    work_dir: where an unsteady adjoint stores its trajectory (a folder every rank sees;
    default: a temporary folder, removed with the simulation).
    """

    def __init__(self, case, work_dir=""):
        if not isinstance(case, Case):
            raise TypeError("Simulation(case): expected a karman.Case (karman.Case.load(path))")
        self.case = case
        self._native = _karman.Simulation(case._native, os.fspath(work_dir))

    def solve(self, progress=None, warm_start=False):
        """Solves the case with the current parameters: steady Newton from the initial state (or
        from the last solution with warm_start), or the unsteady steps to time.t_end.
        progress(dict) is called after every Newton iteration / time step.  A warm start stops
        as soon as the residual meets solver.atol, so after a tiny parameter change it may not
        iterate at all: finite differences want cold starts.  Unsteady steps stop at the
        accuracy of the time discretization (solver.tolerances auto: forward, as karman run);
        gradient() and objective() run their own forward with converged steps.  Raises
        karman.Error if the solve does not converge (the simulation stays usable)."""
        return self._native.solve(progress, warm_start)

    def forces(self):
        """c_D, c_L, their parts, c_M, delta_p and the probes (one row per output probe:
        p, u, v[, w]) of the solution (unsteady: at t_end)."""
        return self._native.forces()

    def history(self):
        """Unsteady: step, time, cd, cl, delta_p and probes (steps x probes x (p, u...)) of
        every time level of the last solve (level 0 included)."""
        return self._native.history()

    def fields(self, gather=True):
        """Cell centres, p and u: gathered on rank 0 in serial cell order (None elsewhere), or
        with gather=False this rank's owned cells (cell_ids: their serial indices)."""
        return self._native.fields(gather)

    def vertices(self):
        """This rank's vertex coordinates X (the rows of gradient()["X"]), serial ids, owned."""
        return self._native.vertices()

    def write(self, directory, name="flow"):
        """Writes the solution as DIR/NAME.pvd (ParaView, walls too) and DIR/NAME.h5."""
        self._native.write(os.fspath(directory), name)

    def parameters(self):
        """Every differentiable parameter: name -> value (an array of one value per time step
        for a parameter that varies in time)."""
        return self._native.parameters()

    def set_parameters(self, values):
        """Sets parameters {name: value}; an array (one value per time step, levels 1..N)
        makes a rotation rate, inlet speed or jet amplitude a per-step control.  A design entry
        "design.NAME" (an array of its variables, within their bounds) deforms the mesh from the
        case's mesh (linear elasticity, as `karman optimize`); a deformation that fails raises
        karman.Error and changes nothing."""
        self._native.set_parameters(dict(values))

    def design(self):
        """The design variables of the case's design: list (shape parameterizations): their
        names, bounds and current values, and the entries {"design.NAME": (offset, count)}.
        Each entry is a parameter of parameters() / set_parameters() / gradient()."""
        return self._native.design()

    def gradient(self, objective=None):
        """The adjoint gradient at the solution of the current parameters.

        objective: None (the case's objective section) or a dict with the keys of an
        objective section, e.g. {"type": "lift", "walls": ["cylinder"]}.
        Returns {"J": value, "gradient": {parameter: dJ/dparameter (array per time step for
        per-step controls)}, "X": dJ/dX (this rank's vertices), "surface": {wall: the surface
        sensitivity on this rank's owned wall vertices: vertex_ids, X, normal (into the fluid),
        area (dual), value = dJ/dX . normal, density = value / area}, ...}.

        Steady: at the solution of solve() (karman.Error without one).  Unsteady: no solve()
        needed: the unsteady adjoint runs the forward once from the initial state with the
        current parameters, storing the trajectory it needs (adjoint.schedule: store-all, or
        revolve's snapshots), then the backward sweep.  That forward run is the gradient's own:
        solve() keeps no trajectory, so solve() followed by gradient() runs the forward twice
        (call solve() only for forces(), history(), fields() or write()).  Its time steps
        converge to the case's solver.rtol, which the unsteady adjoint requires to be at most
        1e-8, whatever tolerances an earlier solve() used."""
        return self.gradients([objective])[0]

    def gradients(self, objectives):
        """gradient() of several objectives at once (a list of None / objective dicts), sharing
        the work: steady, one transposed solve each with the LU factors of the first; unsteady,
        one forward run (no solve() needed) and one backward sweep for all of them."""
        return self._native.gradients(_texts(objectives))

    def objective(self, objective=None):
        """The value of the case's objective (or of `objective`, as in gradient()): steady, at
        the solution of solve(); unsteady, no solve() needed: one forward run (without a
        trajectory) from the initial state with the current parameters."""
        return self.objectives([objective])[0]

    def objectives(self, objectives):
        """objective() of several objectives (unsteady: one forward run for all, no solve()
        needed)."""
        return self._native.objectives(_texts(objectives))

    def _evaluate(self, objectives, gradients):
        """The objective values (and gradient dicts) of `objectives` for the current parameters,
        solving as needed: steady, one solve from the initial state and the adjoints at its
        solution; unsteady, one forward run of the unsteady adjoint (and one backward sweep)
        for all objectives."""
        unsteady = self.case.unsteady
        if not unsteady:
            self.solve()
        if gradients:
            grads = self._native.gradients(_texts(objectives), unsteady)
            return [g["J"] for g in grads], grads
        return list(self._native.objectives(_texts(objectives), unsteady)), []

    @property
    def solved(self):
        """True when the state is the solution of the current parameters."""
        return self._native.solved

    def close(self):
        """Frees the PETSc objects now (otherwise at garbage collection or exit)."""
        self._native.close()
