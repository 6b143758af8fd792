"""The gradient layout contract and ``torch.autograd.enforce_grad_layout_policy``.

NOTE [Gradient layout]: as in PyTorch, a leaf's new ``.grad`` takes the leaf's strides when the
leaf is non-overlapping and dense (a permuted parameter gets a permuted gradient), and is
row-major otherwise. A gradient the engine may steal (nobody else holds it; glassgrad steals only
row-major ones) is kept as it is when it already obeys that layout, or when the policy is off
(``enforce_grad_layout_policy(False)``); otherwise it is copied into the layout. A row-major leaf
costs one flag test. The policy is thread-local, as PyTorch's.
"""

from __future__ import annotations

import threading

import numpy as np

from .grad_mode import _DecoratorContextManager


class _Policy(threading.local):
    enforce = True


_policy = _Policy()


def _dense(arr: np.ndarray) -> bool:
    """Non-overlapping and dense: some order of the dims makes the array contiguous."""
    expected = arr.itemsize
    for stride, size in sorted((abs(s), n) for s, n in zip(arr.strides, arr.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def may_steal(leaf: np.ndarray) -> bool:
    """Whether a stealable (row-major) gradient may become ``leaf``'s ``.grad`` as it is."""
    return leaf.flags.c_contiguous or not _policy.enforce or not _dense(leaf)


def grad_copy(grad: np.ndarray, leaf: np.ndarray) -> np.ndarray:
    """A new array holding ``grad`` in the layout the contract gives ``leaf``'s gradient."""
    if leaf.flags.c_contiguous or not _dense(leaf):
        return grad.copy()
    out = np.empty_like(leaf, dtype=grad.dtype)  # (order "K": the leaf's stride order)
    np.copyto(out, grad)
    return out


def is_grad_layout_enforcement_enabled() -> bool:
    return _policy.enforce


class enforce_grad_layout_policy(_DecoratorContextManager):
    """Whether new gradients of leaves are made to follow the layout contract (NOTE [Gradient
    layout]): ``enable=False`` lets a stealable gradient of another layout become ``.grad`` as
    it is, saving a copy (``torch.autograd.enforce_grad_layout_policy``). A call, a context
    manager or a decorator; thread-local.

    >>> p = glassgrad.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
    >>> with glassgrad.autograd.enforce_grad_layout_policy(False):
    ...     (p * 2).sum().backward()   # p.grad may keep the incoming gradient's strides
    """

    def __init__(self, enable: bool = True) -> None:
        self.prev = _policy.enforce
        self.mode = bool(enable)
        _policy.enforce = self.mode

    def __call__(self, fn):
        _policy.enforce = self.prev  # as a decorator it applies only inside fn
        return super().__call__(fn)

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _policy.enforce = self.prev
