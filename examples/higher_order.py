"""Derivatives of any order, Hessians and Hessian-vector products, checked by finite differences.

The article's section 4.2: ``autograd.grad(y, x, create_graph=True)`` returns a derivative that is
itself a graph, so it can be differentiated again, as often as you like. This example shows

1. the n-th derivative of x**3 at 2 and of tanh on a grid (autograd vs finite differences vs the
   closed form), and how each order's graph grows;
2. the full Hessian of a small network's loss w.r.t. its parameters, one double backward per row,
   against central differences of the gradient;
3. Hessian-vector products by double backward (Pearlmutter's trick) without building the Hessian,
   against ``H @ v`` and finite differences;
4. ``autograd.functional.hessian`` and ``autograd.functional.hvp`` on the network's input.

    python examples/higher_order.py                  # prints the checks, writes two pictures
    python examples/higher_order.py --backend torch  # the same code on PyTorch

Writes to ``--out`` (default runs/higher_order, runs/higher_order-torch with ``--backend torch``): derivatives.png, hessian.png, summary.json.
"""

from __future__ import annotations

import argparse
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


def count_nodes(tensor) -> int:
    """Number of distinct grad_fn nodes reachable from ``tensor`` (0 for a tensor with no graph)."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(fn for fn, _ in node.next_functions)
    return len(seen)


def nth_derivatives(torch, f, x, order: int):
    """[f(x), f'(x), ..., f^(order)(x)] of an elementwise ``f`` by repeated ``autograd.grad``; each
    derivative is a graph (``create_graph=True``) so the next one can be taken."""
    x = x.detach().requires_grad_(True)
    result = [f(x)]
    for _ in range(order):
        prev = result[-1]
        if not prev.requires_grad:  # the derivative stopped depending on x: the rest are zero
            result.append(torch.zeros_like(x))
            continue
        (d,) = torch.autograd.grad(prev.sum(), x, create_graph=True)
        result.append(d)
    return result


def finite_difference(torch, f, x, order: int, h: float = 1e-5):
    """Central difference of the (order-1)-th autograd derivative: checks each order on its own."""
    def lower(t):
        return nth_derivatives(torch, f, t, order - 1)[-1].detach()

    return (lower(x + h) - lower(x - h)) / (2 * h)


def cube_derivatives(torch, order: int) -> list[dict]:
    """The article's x**3 at x = 2, to any order, with node counts of each derivative's graph."""
    x = torch.tensor(2.0, dtype=torch.float64)
    derivs = nth_derivatives(torch, lambda t: t ** 3, x, order)
    exact = [8.0, 12.0, 12.0, 6.0] + [0.0] * max(0, order - 3)
    rows = []
    for n, d in enumerate(derivs):
        fd = float(finite_difference(torch, lambda t: t ** 3, x, n).item()) if n else None
        rows.append({"order": n, "autograd": float(d.item()), "exact": exact[n],
                     "finite_difference": fd, "graph_nodes": count_nodes(d)})
    return rows


def tanh_derivatives(torch, order: int, points: int = 121):
    """tanh and its derivatives on [-3, 3]: autograd vs finite differences (max abs error)."""
    x = torch.linspace(-3, 3, points, dtype=torch.float64)
    derivs = nth_derivatives(torch, torch.tanh, x, order)
    errors = [0.0] + [float((derivs[n].detach() - finite_difference(torch, torch.tanh, x, n))
                            .abs().max().item()) for n in range(1, order + 1)]
    nodes = [count_nodes(d) for d in derivs]
    return x.numpy(), [d.detach().numpy() for d in derivs], errors, nodes


def make_network(torch, hidden: int, seed: int):
    """A smooth 2-hidden-1 tanh MLP in float64 and a small regression batch (X, y)."""
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(2, hidden), torch.nn.Tanh(),
                              torch.nn.Linear(hidden, 1)).double()
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.uniform(-2, 2, size=(32, 2)))
    y = torch.from_numpy(np.sin(x.numpy()[:, :1]) * np.cos(x.numpy()[:, 1:]))
    return net, x, y


def flat_grad(torch, net, x, y, create_graph: bool):
    """The loss gradient w.r.t. all parameters as one flat vector."""
    loss = torch.nn.functional.mse_loss(net(x), y)
    grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=create_graph)
    return torch.cat([g.reshape(-1) for g in grads])


def parameter_hessian(torch, net, x, y, progress: bool = False):
    """(P, P) Hessian of the loss w.r.t. the P parameters: one double backward per row."""
    params = list(net.parameters())
    g = flat_grad(torch, net, x, y, create_graph=True)
    rows = range(g.numel())
    if progress:
        from tqdm import tqdm

        rows = tqdm(rows, desc="Hessian rows", unit="row", leave=False)
    hess, unit = [], torch.eye(g.numel(), dtype=g.dtype)
    for i in rows:
        # row i = e_i^T H: a vector-Jacobian product of the gradient; the graph of g is kept for
        # the next row (retain_graph) and freed by the last one
        row = torch.autograd.grad(g, params, grad_outputs=unit[i], retain_graph=i < g.numel() - 1)
        hess.append(torch.cat([r.reshape(-1) for r in row]))
    return torch.stack(hess)


def _shift_parameters(torch, net, direction, scale: float) -> None:
    with torch.no_grad():
        offset = 0
        for p in net.parameters():
            n = p.numel()
            p.add_(direction[offset:offset + n].reshape(p.shape), alpha=scale)
            offset += n


def gradient_difference(torch, net, x, y, direction, h: float = 1e-5):
    """(g(theta + h d) - g(theta - h d)) / 2h: the finite-difference Hessian times ``direction``."""
    _shift_parameters(torch, net, direction, h)
    plus = flat_grad(torch, net, x, y, create_graph=False)
    _shift_parameters(torch, net, direction, -2 * h)
    minus = flat_grad(torch, net, x, y, create_graph=False)
    _shift_parameters(torch, net, direction, h)
    return (plus - minus) / (2 * h)


def hessian_vector_product(torch, net, x, y, v):
    """H v without forming H: differentiate g . v (Pearlmutter's trick)."""
    g = flat_grad(torch, net, x, y, create_graph=True)
    hv = torch.autograd.grad((g * v).sum(), list(net.parameters()))
    return torch.cat([t.reshape(-1) for t in hv])


def network_checks(torch, hidden: int, seed: int, progress: bool = True) -> dict:
    """Hessian and HVPs of the network's loss, and functional.hessian/hvp on its input."""
    net, x, y = make_network(torch, hidden, seed)
    timer = Timer()
    hess = parameter_hessian(torch, net, x, y, progress)
    hessian_seconds = timer.elapsed()
    n = hess.shape[0]
    fd_hess = torch.stack([gradient_difference(torch, net, x, y, torch.eye(n, dtype=hess.dtype)[j])
                           for j in range(n)], dim=1)
    v = torch.from_numpy(np.random.default_rng(seed + 1).standard_normal(n))
    timer = Timer()
    hv = hessian_vector_product(torch, net, x, y, v)
    hvp_seconds = timer.elapsed()
    point = x[:1].clone()

    def output(inp):
        return net(inp).sum()

    in_hess = torch.autograd.functional.hessian(output, point).reshape(2, 2)
    in_v = torch.tensor([[0.3, -1.2]], dtype=torch.float64)
    _, in_hv = torch.autograd.functional.hvp(output, point, in_v)
    in_fd = torch.stack([_input_gradient_difference(torch, output, point, e)
                         for e in torch.eye(2, dtype=torch.float64)], dim=1)
    return {
        "parameters": n,
        "hessian": hess.detach().numpy(),
        "hessian_vs_finite_difference": float((hess - fd_hess).abs().max().item()),
        "hessian_asymmetry": float((hess - hess.T).abs().max().item()),
        "hvp_vs_hessian_times_v": float((hv - hess @ v).abs().max().item()),
        "hvp_vs_finite_difference": float(
            (hv - gradient_difference(torch, net, x, y, v)).abs().max().item()),
        "hessian_seconds": round(hessian_seconds, 4),
        "hvp_seconds": round(hvp_seconds, 4),
        "input_hessian": in_hess.detach().numpy().tolist(),
        "input_hessian_vs_finite_difference": float((in_hess - in_fd).abs().max().item()),
        "input_hvp_vs_hessian_times_v": float(
            (in_hv.reshape(2) - in_hess @ in_v.reshape(2)).abs().max().item()),
    }


def _input_gradient_difference(torch, fn, point, direction, h: float = 1e-5):
    def grad_at(p):
        p = p.detach().requires_grad_(True)
        return torch.autograd.grad(fn(p), p)[0].reshape(-1)

    return (grad_at(point + h * direction) - grad_at(point - h * direction)) / (2 * h)


def save_pictures(xs, derivs, hess, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for n, d in enumerate(derivs[:5]):
        ax.plot(xs, d / max(1.0, np.abs(d).max()), label=f"order {n}" + (" (scaled)" if
                                                                          np.abs(d).max() > 1
                                                                          else ""))
    ax.set_title("tanh and its derivatives by repeated autograd.grad(create_graph=True)")
    ax.set_xlabel("x")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "derivatives.png"), dpi=90)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5, 4.3))
    lim = np.abs(hess).max()
    im = ax.imshow(hess, cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.set_title("Hessian of the MLP's loss w.r.t. its parameters")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "hessian.png"), dpi=90)
    plt.close(fig)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Derivatives of any order, Hessians and HVPs, "
                                     "checked by finite differences.",
                                     formatter_class=HelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--order", type=int, default=6, help="highest derivative order")
    parser.add_argument("--hidden", type=int, default=6, help="hidden units of the MLP")
    parser.add_argument("--seed", type=int, default=0, help="seed of the MLP's weights and data")
    parser.add_argument("--tol", type=float, default=1e-5, help="finite-difference tolerance")
    add_out_arg(parser, "runs/higher_order")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    resolve_out(args, "runs/higher_order")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    with blas_threads():
        return run(load_backend(args.backend), args)


def run(torch, args) -> dict:
    out = out_dir(args.out)
    print(f"1. d^n/dx^n x**3 at x = 2 ({args.backend})")
    print(f"   {'order':>5} {'autograd':>10} {'exact':>8} {'finite diff':>12} {'graph nodes':>12}")
    cube = cube_derivatives(torch, args.order)
    for r in cube:
        fd = "" if r["finite_difference"] is None else f"{r['finite_difference']:.6f}"
        print(f"   {r['order']:>5} {r['autograd']:>10.4f} {r['exact']:>8.1f} {fd:>12} "
              f"{r['graph_nodes']:>12}")
    first_zero = next((r["order"] for r in cube if r["order"] and not r["graph_nodes"]), None)
    if first_zero is not None:
        print(f"   order {first_zero} is a constant with no grad_fn: the graph ends there and "
              "every higher derivative is 0")
    xs, derivs, tanh_errors, tanh_nodes = tanh_derivatives(torch, min(args.order, 5))
    print("   tanh on [-3, 3], max |autograd - finite difference| per order: "
          + ", ".join(f"{e:.1e}" for e in tanh_errors[1:]))
    print("   tanh: graph nodes of each order's derivative (the graph grows with the order): "
          + ", ".join(str(n) for n in tanh_nodes))
    closed = 1 - np.tanh(xs) ** 2
    print(f"   tanh' vs 1 - tanh^2: {np.abs(derivs[1] - closed).max():.1e}; "
          f"sin^(n) = sin(x + n pi/2) checked below")
    sin_errors = []
    grid = torch.linspace(0, 2 * math.pi, 9, dtype=torch.float64)
    for n, d in enumerate(nth_derivatives(torch, torch.sin, grid, args.order)):
        sin_errors.append(float((d.detach() - torch.sin(grid + n * math.pi / 2)).abs().max()))
    print(f"   sin, orders 0..{args.order}: max error vs closed form {max(sin_errors):.1e}")

    print(f"2-4. Hessian of an MLP 2-{args.hidden}-1 (tanh, float64) loss w.r.t. its parameters")
    net = network_checks(torch, args.hidden, args.seed, progress=not args.quiet)
    print(f"   P = {net['parameters']} parameters: Hessian ({net['parameters']}x"
          f"{net['parameters']}) in {net['hessian_seconds']} s, one HVP in "
          f"{net['hvp_seconds']} s")
    checks = {
        "Hessian vs finite differences of the gradient": net["hessian_vs_finite_difference"],
        "Hessian symmetry |H - H^T|": net["hessian_asymmetry"],
        "HVP (double backward) vs H @ v": net["hvp_vs_hessian_times_v"],
        "HVP vs finite differences": net["hvp_vs_finite_difference"],
        "functional.hessian (input) vs finite differences":
            net["input_hessian_vs_finite_difference"],
        "functional.hvp (input) vs hessian @ v": net["input_hvp_vs_hessian_times_v"],
    }
    fd_ok = True
    for name, err in checks.items():
        ok = err < args.tol
        fd_ok &= ok
        print(f"   {name:<50} max abs diff {err:.1e}  {'ok' if ok else 'FAIL'}")
    cube_ok = all(abs(r["autograd"] - r["exact"]) < 1e-9 for r in cube)
    ok = fd_ok and cube_ok and max(tanh_errors) < args.tol and max(sin_errors) < 1e-9
    save_pictures(xs, derivs, net.pop("hessian"), out)
    summary = {"backend": args.backend, "cube": cube, "tanh_fd_errors": tanh_errors,
               "sin_closed_form_error": max(sin_errors), **net, "all_checks_pass": ok}
    write_json(os.path.join(out, "summary.json"), summary)
    print(f"{'all checks pass' if ok else 'SOME CHECKS FAILED'} -> {out}/derivatives.png, "
          f"hessian.png, summary.json")
    return summary


if __name__ == "__main__":
    main()
