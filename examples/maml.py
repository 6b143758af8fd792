"""MAML on sinusoid regression (the article's section 5), three ways.

Each task is y = A sin(x - phase) with A in [0.1, 5], phase in [0, pi], x in [-5, 5]; the model
(an MLP 1-40-40-1) sees K = 10 points of a new task, takes a few SGD steps on them, and is judged on
that task's whole curve. Meta-learning finds the starting weights from which a few steps work.

* ``article``: the article's loop: ``copy.deepcopy(model)``, per-step ``backward``, manual SGD
  update under ``no_grad``, ``zero_grad``. The adapted copy's query gradient goes to the original
  weights, which makes it first-order MAML (no gradient flows through the inner updates).
* ``second-order``: true MAML: fast weights ``p - lr * g`` from ``autograd.grad(...,
  create_graph=True)``, run with ``func.functional_call``; the meta-gradient differentiates through
  the inner steps (Hessian-vector products).
* ``first-order``: the same functional code with ``create_graph=False``: equals the article's loop.

    python examples/maml.py                      # all three modes, < 1 minute
    python examples/maml.py --mode second-order  # one mode
    python examples/maml.py --backend torch      # the same code on PyTorch

Writes to ``--out`` (default runs/maml, runs/maml-torch with ``--backend torch``): adaptation.png (MSE vs adaptation steps for each mode and a
model trained from scratch; one held-out task before and after adaptation) and summary.json.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    HelpFormatter,
    Timer,
    add_backend_arg,
    add_out_arg,
    blas_threads,
    load_backend,
    out_dir,
    resolve_out,
    write_json,
)

MODES = ("article", "second-order", "first-order")


def build_model(torch):
    """The standard MAML sinusoid regressor: (N, 1) -> (N, 1)."""
    nn = torch.nn
    return nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(),
                         nn.Linear(40, 1))


def sample_tasks(rng, n: int, k: int, query: int, dtype=np.float32, with_params=False):
    """``n`` sinusoid tasks as NumPy (x_support (k, 1), y_support, x_query (query, 1), y_query);
    with ``with_params`` also the list of (amplitude, phase)."""
    tasks, params = [], []
    for _ in range(n):
        amplitude, phase = rng.uniform(0.1, 5.0), rng.uniform(0, math.pi)
        xs = rng.uniform(-5, 5, size=(k + query, 1))
        ys = amplitude * np.sin(xs - phase)
        tasks.append(tuple(a.astype(dtype) for a in (xs[:k], ys[:k], xs[k:], ys[k:])))
        params.append((amplitude, phase))
    return (tasks, params) if with_params else tasks


def compute_loss(torch, model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)


def maml_inner_loop(torch, model, task, inner_lr, inner_steps):
    """The article's inner loop, line for line: adapt a deep copy of ``model`` to ``task``."""
    cloned_model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(cloned_model.parameters(), lr=inner_lr)
    x, y = task
    for step in range(inner_steps):
        loss = compute_loss(torch, cloned_model, x, y)
        # NOTE: each step builds a fresh graph, so retain_graph is not needed here; the article
        # keeps it, and it only holds this step's graph until the next step replaces `loss`
        # (with --inner-steps > 1 glassgrad says so in a warning: the bytes kept for nothing).
        loss.backward(retain_graph=True if step < inner_steps - 1 else False)  # noqa: SIM210
        with torch.no_grad():  # the manual SGD update (optimizer.step() is not called)
            for param in cloned_model.parameters():
                if param.grad is not None:
                    param -= inner_lr * param.grad
        optimizer.zero_grad()
    return cloned_model


def meta_step_article(torch, model, meta_opt, tasks, inner_lr, inner_steps) -> float:
    """One meta-update with the article's loop: the adapted copies' query gradients, averaged,
    become the original model's gradients (first-order MAML)."""
    meta_opt.zero_grad()
    total = 0.0
    for xs, ys, xq, yq in tasks:
        adapted = maml_inner_loop(torch, model, (torch.from_numpy(xs), torch.from_numpy(ys)),
                                  inner_lr, inner_steps)
        query_loss = compute_loss(torch, adapted, torch.from_numpy(xq), torch.from_numpy(yq))
        query_loss.backward()
        with torch.no_grad():
            for p, p_adapted in zip(model.parameters(), adapted.parameters()):
                grad = p_adapted.grad / len(tasks)
                p.grad = grad if p.grad is None else p.grad + grad
        total += query_loss.item()
    meta_opt.step()
    return total / len(tasks)


def adapt(torch, model, params, x, y, inner_lr, steps, create_graph):
    """Fast weights after ``steps`` SGD steps on (x, y): ``p - lr * g`` kept as a graph when
    ``create_graph`` (second order), or with the gradient detached (first order)."""
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(torch.func.functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=create_graph)
        if not create_graph:  # first order: the inner gradient is a constant, and we say so
            grads = [g.detach() for g in grads]
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def meta_step_functional(torch, model, meta_opt, tasks, inner_lr, inner_steps,
                         second_order: bool) -> float:
    """One meta-update of MAML through ``func.functional_call``: the mean query loss of the
    adapted fast weights is backpropagated to the original weights."""
    meta_opt.zero_grad()
    params = dict(model.named_parameters())
    losses = []
    for xs, ys, xq, yq in tasks:
        fast = adapt(torch, model, params, torch.from_numpy(xs), torch.from_numpy(ys), inner_lr,
                     inner_steps, create_graph=second_order)
        pred = torch.func.functional_call(model, fast, (torch.from_numpy(xq),))
        losses.append(torch.nn.functional.mse_loss(pred, torch.from_numpy(yq)))
    meta_loss = torch.stack(losses).mean()
    meta_loss.backward()
    meta_opt.step()
    return meta_loss.item()


def meta_step(torch, mode, model, meta_opt, tasks, inner_lr, inner_steps) -> float:
    if mode == "article":
        return meta_step_article(torch, model, meta_opt, tasks, inner_lr, inner_steps)
    return meta_step_functional(torch, model, meta_opt, tasks, inner_lr, inner_steps,
                                second_order=mode == "second-order")


def adaptation_curve(torch, model, tasks, inner_lr, steps) -> np.ndarray:
    """Mean query MSE over ``tasks`` after 0..steps SGD steps on each task's support set."""
    curves = np.zeros((len(tasks), steps + 1))
    for t, (xs, ys, xq, yq) in enumerate(tasks):
        params = {n: p.detach() for n, p in model.named_parameters()}
        xs, ys, xq, yq = (torch.from_numpy(a) for a in (xs, ys, xq, yq))
        for step in range(steps + 1):
            with torch.no_grad():
                pred = torch.func.functional_call(model, params, (xq,))
                curves[t, step] = torch.nn.functional.mse_loss(pred, yq).item()
            if step < steps:
                params = {n: p.requires_grad_(True) for n, p in params.items()}
                params = {n: p.detach() for n, p in
                          adapt(torch, model, params, xs, ys, inner_lr, 1, False).items()}
    return curves.mean(axis=0)


def predict_after(torch, model, task, inner_lr, steps, grid):
    """Predictions on ``grid`` after each number of steps in ``steps`` (for the picture)."""
    xs, ys = torch.from_numpy(task[0]), torch.from_numpy(task[1])
    params = {n: p.detach().requires_grad_(True) for n, p in model.named_parameters()}
    preds, done = {}, 0
    for target in sorted(steps):
        if target > done:
            params = adapt(torch, model, params, xs, ys, inner_lr, target - done, False)
            params = {n: p.detach().requires_grad_(True) for n, p in params.items()}
            done = target
        with torch.no_grad():
            preds[target] = torch.func.functional_call(
                model, params, (torch.from_numpy(grid),)).numpy().ravel()
    return preds


def save_picture(curves, example, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, curve in curves.items():
        style = {"ls": "--", "marker": "s", "ms": 6, "mfc": "none"} if name == "article" else {}
        left.plot(range(len(curve)), curve, **({"marker": "o", "ms": 3} | style),
                  label="article (= first-order)" if name == "article" else name)
    left.set_yscale("log")
    left.set_xlabel("SGD steps on the K support points")
    left.set_ylabel("query MSE (held-out tasks)")
    left.set_title("adaptation curves")
    left.legend(fontsize=8)
    grid, truth, support, preds, name, title = example
    right.plot(grid, truth, "k-", lw=2, label="true task")
    right.plot(support[0], support[1], "k^", ms=7, label=f"K={len(support[0])} support points")
    for steps, pred in preds.items():
        right.plot(grid, pred, "--", label=f"{name}, {steps} step{'s' if steps != 1 else ''}")
    right.set_title(title, fontsize=10)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def train_mode(torch, mode, args, train_rng_seed: int, progress: bool):
    torch.manual_seed(args.seed)
    model = build_model(torch)
    meta_opt = torch.optim.Adam(model.parameters(), lr=args.meta_lr)
    rng = np.random.default_rng(train_rng_seed)
    iterations = range(args.iterations)
    if progress:
        from tqdm import tqdm

        iterations = tqdm(iterations, desc=f"MAML {mode}", unit="it")
    losses = []
    for it in iterations:
        tasks = sample_tasks(rng, args.meta_batch, args.k, args.k)
        losses.append(meta_step(torch, mode, model, meta_opt, tasks, args.inner_lr,
                                args.inner_steps))
        if progress and it % 20 == 0:
            iterations.set_postfix(query_mse=f"{np.mean(losses[-20:]):.3f}")
    return model, losses


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="MAML on sinusoid regression: the article's "
                                     "loop, second-order and first-order MAML.",
                                     formatter_class=HelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--mode", default="all", choices=("all",) + MODES,
                        help="which MAML to train (all: the three, compared)")
    parser.add_argument("--iterations", type=int, default=500, help="meta-updates per mode")
    parser.add_argument("--meta-batch", type=int, default=10, help="tasks per meta-update")
    parser.add_argument("--k", type=int, default=10, help="support points per task (shots)")
    parser.add_argument("--inner-lr", type=float, default=0.01,
                        help="SGD learning rate of the adaptation steps")
    parser.add_argument("--inner-steps", type=int, default=1, help="inner SGD steps in training")
    parser.add_argument("--meta-lr", type=float, default=1e-2,
                        help="Adam lr of the meta-update (the paper: 1e-3 over 70k steps)")
    parser.add_argument("--eval-tasks", type=int, default=100, help="held-out tasks")
    parser.add_argument("--eval-steps", type=int, default=10, help="adaptation steps when judged")
    parser.add_argument("--seed", type=int, default=0, help="seed of the weights and the tasks")
    add_out_arg(parser, "runs/maml")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    resolve_out(args, "runs/maml")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    with blas_threads():
        return run(load_backend(args.backend), args)


def run(torch, args) -> dict:
    out = out_dir(args.out)
    modes = MODES if args.mode == "all" else (args.mode,)
    held_out, truths = sample_tasks(np.random.default_rng(10_000 + args.seed), args.eval_tasks,
                                    args.k, 100, with_params=True)
    summary = {"backend": args.backend, "k": args.k, "inner_lr": args.inner_lr,
               "iterations": args.iterations, "meta_batch": args.meta_batch, "modes": {}}
    curves, models = {}, {}
    for mode in modes:
        timer = Timer()
        model, losses = train_mode(torch, mode, args, args.seed + 1, progress=not args.quiet)
        seconds = timer.elapsed()
        curve = adaptation_curve(torch, model, held_out, args.inner_lr, args.eval_steps)
        curves[mode], models[mode] = curve, model
        summary["modes"][mode] = {
            "seconds": round(seconds, 2),
            "ms_per_meta_step": round(1000 * seconds / len(losses), 2),
            "final_train_query_mse": round(float(np.mean(losses[-20:])), 4),
            "mse_unadapted": round(float(curve[0]), 4),
            "mse_after_1_step": round(float(curve[1]), 4),
            f"mse_after_{args.eval_steps}_steps": round(float(curve[-1]), 4)}
    torch.manual_seed(args.seed)
    scratch = adaptation_curve(torch, build_model(torch), held_out, args.inner_lr, args.eval_steps)
    curves["no meta-learning (random init)"] = scratch
    summary["scratch"] = {"mse_unadapted": round(float(scratch[0]), 4),
                          f"mse_after_{args.eval_steps}_steps": round(float(scratch[-1]), 4)}
    print(f"\nquery MSE on {args.eval_tasks} held-out tasks (K={args.k}, inner lr {args.inner_lr})")
    print(f"{'mode':<32}{'unadapted':>10}{'1 step':>10}{f'{args.eval_steps} steps':>10}"
          f"{'train s':>9}")
    for name, curve in curves.items():
        seconds = summary["modes"].get(name, {}).get("seconds", "")
        print(f"{name:<32}{curve[0]:>10.3f}{curve[1]:>10.3f}{curve[-1]:>10.3f}{seconds:>9}")
    shown = "second-order" if "second-order" in models else modes[0]
    pick = int(np.argmax([amplitude for amplitude, _ in truths]))  # the hardest: largest A
    task, (amplitude, phase) = held_out[pick], truths[pick]
    grid = np.linspace(-5, 5, 200, dtype=task[0].dtype).reshape(-1, 1)
    truth = amplitude * np.sin(grid.ravel() - phase)
    preds = predict_after(torch, models[shown], task, args.inner_lr, (0, 1, args.eval_steps), grid)
    title = f"held-out task with the largest amplitude: {amplitude:.2f} sin(x - {phase:.2f})"
    save_picture(curves, (grid.ravel(), truth, (task[0].ravel(), task[1].ravel()), preds,
                          f"{shown} MAML" if shown != "article" else "article", title),
                 os.path.join(out, "adaptation.png"))
    write_json(os.path.join(out, "summary.json"), summary)
    print(f"-> {out}/adaptation.png, summary.json")
    return summary


if __name__ == "__main__":
    main()
