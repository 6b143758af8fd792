"""``SparseAdam``: Adam for sparse gradients, updating only the rows a step touched
(``torch.optim.SparseAdam``; issue 16, lane embed)."""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, _bump, _evaluate_closure, _to_float, _zeros_like

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Lazy Adam (``torch.optim.SparseAdam``): for a sparse COO gradient ``g`` (negated when
    ``maximize``; coalesced, so each index once) only the entries at ``g``'s indices change, at
    step ``t``::

        m[i] += (1 - beta1) * (g[i] - m[i])           (state["exp_avg"])
        v[i] += (1 - beta2) * (g[i]**2 - v[i])        (state["exp_avg_sq"])
        p[i] -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m[i] / (sqrt(v[i]) + eps)

    Gradients come from ``nn.Embedding(..., sparse=True)`` / ``F.embedding(sparse=True)``.
    Raises ValueError for ``lr`` or ``eps`` not positive, betas outside [0, 1), sparse or complex
    parameters; RuntimeError from ``step`` for a dense gradient, as PyTorch.

    Example::

        >>> emb = glassgrad.nn.Embedding(100, 8, sparse=True)
        >>> opt = glassgrad.optim.SparseAdam(emb.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr: float | Tensor = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        sparse, complex_ = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([index, d_index])
                if p.is_complex():
                    complex_.append([index, d_index])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             "parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        """One update of every parameter whose ``.grad`` is not None; returns the closure's
        loss. RuntimeError "SparseAdam does not support dense gradients" for a dense one."""
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = _to_float(group["lr"]), group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                if not p._grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                state["step"] += 1
                _update(p, p._grad, state, beta1, beta2, lr, eps, group.get("maximize", False))
        return loss


def _update(p, grad, state, beta1, beta2, lr, eps, maximize) -> None:
    grad = grad.coalesce()
    values = grad._values_t._array
    if values.size == 0:
        return
    if maximize:
        values = -values
    where = tuple(grad._indices_t._array)
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    old_avg = exp_avg._array[where]
    avg_update = (values - old_avg) * (1 - beta1)
    exp_avg._array[where] += avg_update
    old_sq = exp_avg_sq._array[where]
    sq_update = (values ** 2 - old_sq) * (1 - beta2)
    exp_avg_sq._array[where] += sq_update
    numer = avg_update + old_avg
    denom = np.sqrt(sq_update + old_sq) + eps
    step = state["step"]
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    p._array[where] += -step_size * (numer / denom)
    for t in (exp_avg, exp_avg_sq, p):
        _bump(t)
