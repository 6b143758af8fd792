"""Bench row 12 (issue 20): per-sample gradients, ``func.vmap(func.grad(...))`` of an MLP.

The torch.func recipe: the loss of one sample as a function of the parameters (through
``func.functional_call``), its gradient by ``func.grad``, mapped over the batch by ``func.vmap``
with the parameters shared (``in_dims=(None, 0, 0)``). One iteration computes every sample's
gradient of every parameter; its "loss" for the check is the sum of the squares of samples 0,
51, ..., 255's.
"""

from __future__ import annotations

import numpy as np



def per_sample_grads(lib, batch: int = 256):
    """MLP 784-256-256-10 (ReLU), cross-entropy of each of ``batch`` samples: the (batch, ...)
    gradients of all six parameters by ``vmap(grad(loss))``."""
    from benchmarks.workloads import _array, init_from_numpy  # (late: workloads.py imports this module)

    nn, func = lib.nn, lib.func
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    init_from_numpy(lib, model, 0)
    params = {name: p.detach() for name, p in model.named_parameters()}
    rng = np.random.default_rng(1)
    x = _array(lib, rng, (batch, 784), 0.0, 1.0)
    y = lib.from_numpy(rng.integers(0, 10, size=batch).astype(np.int64))

    def sample_loss(p, sample, target):
        logits = func.functional_call(model, p, (sample.unsqueeze(0),))
        return nn.functional.cross_entropy(logits, target.unsqueeze(0))

    grads_of_samples = func.vmap(func.grad(sample_loss), in_dims=(None, 0, 0))

    def step():
        grads = grads_of_samples(params, x, y)
        # NOTE: six samples' gradients for the check: squaring all 256 (51M values in the first
        # layer's) cost as much as computing them
        return float(sum((g[::51] * g[::51]).sum().item() for g in grads.values()))

    return step
