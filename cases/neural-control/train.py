#!/usr/bin/env python3
"""Trains a small neural network omega(t) -- the rotation rate of the cylinder -- through
karman's unsteady adjoint to lower the mean drag (README.md).

    PYTHONPATH=build/release/python /usr/bin/python3 cases/neural-control/train.py -o out/neural-control
    mpirun -n 2 env PYTHONPATH=build/release/python /usr/bin/python3 cases/neural-control/train.py ...

Every iteration: the network gives omega^n = omega_max tanh(net(t^n / T)) for the time levels
n = 1..N; karman.torch.Objectives runs the forward solve and the unsteady adjoint of the case's
objective (mean drag over the window + control cost) and returns dJ/domega^n; autograd carries
it into the network's weights; Adam takes a step.  The network's last layer starts at zero, so
iteration 0 is the uncontrolled flow.  Writes OUT/training.csv, OUT/omega.csv and, with
matplotlib, OUT/training.png, OUT/omega.png, OUT/drag.png; OUT/summary.json.

--direct: the comparison without the network, the direct per-step optimization of the same
control: omega^n = omega_max tanh(theta_n) with one free variable theta_n per time level
(starting at 0: the uncontrolled flow), the same objective, optimizer and step size.
"""
import argparse
import csv
import json
import os
import time

import numpy as np
import torch

import karman
from karman.torch import Objectives

OMEGA = "boundaries.cylinder.omega"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", nargs="?", default=os.path.join(here, "case.yaml"))
    ap.add_argument("-o", "--output", default="out/neural-control")
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--omega-max", type=float, default=2.0)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--direct", action="store_true",
                    help="optimize omega(t^n) per time level directly (no network)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="case overrides, as karman --set (e.g. time.t_end=12)")
    args = ap.parse_args()
    overrides = {}
    for s in args.set:
        k, v = s.split("=", 1)
        overrides[k] = json.loads(v) if v[:1] in "[{0123456789-." else v
    root = karman.rank() == 0
    if root:
        os.makedirs(args.output, exist_ok=True)

    case = karman.Case.load(args.case, overrides)
    sim = karman.Simulation(case, work_dir="")
    cfg = case.config
    n, dt = case.steps, cfg["time"]["dt"]
    beta = cfg["objective"]["control_cost"]
    T = n * dt
    t = torch.arange(1, n + 1, dtype=torch.float64) * dt

    torch.manual_seed(args.seed)
    net = torch.nn.Sequential(torch.nn.Linear(1, args.hidden), torch.nn.Tanh(),
                              torch.nn.Linear(args.hidden, args.hidden), torch.nn.Tanh(),
                              torch.nn.Linear(args.hidden, 1)).double()
    torch.nn.init.zeros_(net[-1].weight)
    torch.nn.init.zeros_(net[-1].bias)
    if args.direct:
        theta = torch.zeros(n, dtype=torch.float64, requires_grad=True)
        omega_of = lambda: args.omega_max * torch.tanh(theta)
        variables = [theta]
    else:
        omega_of = lambda: args.omega_max * torch.tanh(net((t / T).unsqueeze(1))).squeeze(1)
        variables = list(net.parameters())
    layer = Objectives(sim, [OMEGA])
    opt = torch.optim.Adam(variables, lr=args.lr)

    rows, start = [], time.time()
    best = None
    for it in range(args.iterations + 1):
        opt.zero_grad()
        omega = omega_of()
        J = layer(omega)[0]
        cost = beta * dt * float((omega.detach() ** 2).sum())
        row = {"iteration": it, "J": J.item(), "mean_drag": J.item() - cost,
               "control_cost": cost, "max_abs_omega": float(omega.detach().abs().max()),
               "wall_time": time.time() - start}
        rows.append(row)
        if best is None or row["J"] < best[0]["J"]:
            best = (row, omega.detach().numpy().copy())
        if root:
            print(f"iteration {it:3d}  J {row['J']:.6f}  mean drag {row['mean_drag']:.6f}  "
                  f"max|omega| {row['max_abs_omega']:.3f}  {row['wall_time']:.0f} s", flush=True)
        if it == args.iterations:
            break
        J.backward()
        opt.step()

    # the uncontrolled and the best controlled flow, step by step, for the drag plot
    histories = {}
    for label, omega in (("uncontrolled", np.zeros(n)), ("controlled", best[1])):
        sim.set_parameters({OMEGA: omega})
        sim.solve()
        histories[label] = sim.history()
    summary = {"case": case.file, "overrides": overrides, "steps": n, "dt": dt,
               "mode": "direct per-step" if args.direct else "network",
               "variables": sum(v.numel() for v in variables), "lr": args.lr,
               "ranks": karman.size(), "iterations": args.iterations,
               "uncontrolled": rows[0], "best": best[0], "wall_time": time.time() - start}
    if root:
        with open(os.path.join(args.output, "training.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(args.output, "omega.csv"), "w") as f:
            f.write("step,time,omega\n")
            for k in range(n):
                f.write(f"{k + 1},{(k + 1) * dt:.10g},{best[1][k]:.17g}\n")
        with open(os.path.join(args.output, "summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
        print(f"mean drag {rows[0]['mean_drag']:.6f} (uncontrolled) -> {best[0]['mean_drag']:.6f} "
              f"(iteration {best[0]['iteration']}); J {rows[0]['J']:.6f} -> {best[0]['J']:.6f}; "
              f"{summary['wall_time']:.0f} s")
        plot(args.output, rows, t.numpy(), best[1], histories, cfg["objective"]["window"])


def plot(out, rows, t, omega, histories, window):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    it = [r["iteration"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(it, [r["J"] for r in rows], "o-", label="J = mean drag + control cost")
    ax.plot(it, [r["mean_drag"] for r in rows], "s--", label="mean drag")
    ax.set_xlabel("iteration")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "training.png"), dpi=120)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(t, omega, ".-")
    ax.set_xlabel("t")
    ax.set_ylabel("optimized omega(t)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "omega.png"), dpi=120)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for label, h in histories.items():
        ax.plot(h["time"], h["cd"], label=label)
    ax.axvspan(window[0], window[1], color="0.9", zorder=0, label="objective window")
    ax.set_xlabel("t")
    ax.set_ylabel("c_D")
    ax.set_ylim(0, 3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "drag.png"), dpi=120)


if __name__ == "__main__":
    main()
