"""Benchmark workloads: ``name -> (make(lib) -> one-iteration callable, inner repetitions)``."""

from __future__ import annotations

import numpy as np


def scalar_chain(lib, n: int = 1000):
    """Forward + backward of a chain of ``n`` scalar ops: pure per-op overhead."""
    x = lib.tensor(1.0, requires_grad=True)

    def run():
        y = x
        for _ in range(n // 2):
            y = y * 1.0001
            y = y + 0.0001
        y.backward()
        x.grad = None

    return run


def small_mlp_step(lib, batch: int = 64):
    """One training step of a 64-256-128-1 MLP (the demo's discriminator size)."""
    rng = np.random.default_rng(0)
    w1 = lib.tensor(rng.standard_normal((256, 64)) * 0.1, dtype=lib.float32, requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((128, 256)) * 0.1, dtype=lib.float32, requires_grad=True)
    w3 = lib.tensor(rng.standard_normal((1, 128)) * 0.1, dtype=lib.float32, requires_grad=True)
    x = lib.tensor(rng.standard_normal((batch, 64)), dtype=lib.float32)

    def run():
        h = (x @ w1.t()).relu()
        h = (h @ w2.t()).relu()
        loss = (h @ w3.t()).sigmoid().mean()
        loss.backward()
        for w in (w1, w2, w3):
            w.grad = None

    return run


def big_matmul(lib, n: int = 512):
    """Forward + backward of one (n, n) @ (n, n): BLAS-bound."""
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((n, n)), dtype=lib.float32, requires_grad=True)
    b = lib.tensor(rng.standard_normal((n, n)), dtype=lib.float32, requires_grad=True)

    def run():
        (a @ b).sum().backward()
        a.grad = b.grad = None

    return run


def elementwise_large(lib, n: int = 1_000_000):
    """exp, mul, tanh, sum on 1M floats, forward + backward: memory-bandwidth bound."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(n), dtype=lib.float32, requires_grad=True)

    def run():
        (x.exp() * x).tanh().sum().backward()
        x.grad = None

    return run


def double_backward(lib):
    """A gradient penalty: grad of a small MLP's input-gradient norm (create_graph=True)."""
    rng = np.random.default_rng(0)
    w1 = lib.tensor(rng.standard_normal((64, 32)) * 0.1, dtype=lib.float32, requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((1, 64)) * 0.1, dtype=lib.float32, requires_grad=True)
    x = lib.tensor(rng.standard_normal((32, 32)), dtype=lib.float32, requires_grad=True)

    def run():
        out = (x @ w1.t()).tanh() @ w2.t()
        (g,) = lib.autograd.grad(out, x, lib.ones_like(out), create_graph=True)
        ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
        w1.grad = w2.grad = x.grad = None

    return run


WORKLOADS = {
    "scalar chain, 1000 ops, fwd+bwd": (scalar_chain, 1),
    "MLP 64-256-128-1 step, batch 64": (small_mlp_step, 10),
    "matmul 512x512 fwd+bwd": (big_matmul, 3),
    "elementwise 1M fwd+bwd": (elementwise_large, 3),
    "gradient penalty (double bwd)": (double_backward, 10),
}
