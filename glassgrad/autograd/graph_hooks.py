"""PyTorch's public helpers of ``torch.autograd.graph`` that sit on the recorded graph.

``saved_tensors_hooks`` (with ``disable_saved_tensors_hooks``), ``save_on_cpu``,
``allow_mutation_on_saved_tensors``, ``GradientEdge`` / ``get_gradient_edge`` and
``register_multi_grad_hook``; re-exported from ``glassgrad.autograd.graph``.
"""

from __future__ import annotations

import contextlib
import sys
from typing import NamedTuple

from . import engine
from . import graph as _graph
from .graph import Node, RemovableHandle, _Hooks


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed: ``(node, output_nr)``
    (``torch.autograd.graph.GradientEdge``)."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The ``GradientEdge`` of ``tensor``: its ``grad_fn`` (or a leaf's ``AccumulateGrad``) and
    output number (``torch.autograd.graph.get_gradient_edge``). Raises RuntimeError when the tensor
    does not require grad."""
    if not tensor._requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    if tensor.grad_fn is not None:
        return GradientEdge(tensor.grad_fn, tensor._output_nr)
    return GradientEdge(_graph.grad_accumulator(tensor), 0)


_disabled_message: list = [None]  # disable_saved_tensors_hooks' message while it is active


class saved_tensors_hooks(_graph.saved_tensors_hooks):
    __doc__ = _graph.saved_tensors_hooks.__doc__

    def __enter__(self):
        if _disabled_message[0] is not None:
            raise RuntimeError(_disabled_message[0])
        return super().__enter__()


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Context manager under which entering ``saved_tensors_hooks`` raises RuntimeError with
    ``error_message`` (``torch.autograd.graph.disable_saved_tensors_hooks``); raises it at once
    when hooks are already active."""
    if _Hooks.saved_tensor_hooks:
        raise RuntimeError(error_message)
    prev = _disabled_message[0]
    _disabled_message[0] = error_message
    try:
        yield
    finally:
        _disabled_message[0] = prev


class save_on_cpu(saved_tensors_hooks):
    """Keep tensors saved for backward on the CPU (``torch.autograd.graph.save_on_cpu``). glassgrad
    tensors already live there, so it keeps them as they are (without their history, so the graph
    holds no cycle); ``pin_memory`` and ``device_type`` are accepted and ignored."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t._alias(), lambda t: t)


from ._mutation_on_saved import allow_mutation_on_saved_tensors  # noqa: E402,F401


def _engine_task():
    """(task key, nodes the running backward will execute), or None outside a backward.

    NOTE: read from the engine's ``run`` frame (its locals ``task``, ``needed`` and ``seen``): the
    engine has no graph-task object. The key (a number unique to each backward) holds no
    reference, so it cannot keep a graph alive.
    """
    code = engine.run.__code__
    f = sys._getframe(1)
    while f is not None and f.f_code is not code:
        f = f.f_back
    if f is None:
        return None
    local = f.f_locals
    seen = local.get("seen", set())
    needed = local.get("needed")
    return local.get("task"), (needed if needed is not None else seen)


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward after the gradients of all ``tensors`` that this backward
    computes are ready (``mode="all"``: ``fn(grads)``, None for those not computed), or with the
    first of them (``mode="any"``: ``fn(grad)``) (``torch.autograd.graph.register_multi_grad_hook``).
    Returns a handle whose ``remove()`` unregisters it; ValueError for an unknown mode."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    nodes = [get_gradient_edge(t).node for t in tensors]
    state: list = [None]  # [task key, calls so far, calls expected, grads] of the running backward

    def inner(i):
        def hook(grad):
            task = _engine_task()
            if task is None:
                raise AssertionError("expected this hook to be called inside a backward call")
            key, will_run = task
            entry = state[0]
            first = entry is None or entry[0] != key
            if first:  # the first hook of a new backward (an unfinished one is forgotten)
                entry = state[0] = [key, 0, sum(n in will_run for n in nodes), [None] * len(nodes)]
            entry[1] += 1
            entry[3][i] = grad
            done = entry[1] >= entry[2]
            if done:
                state[0] = None
            if mode == "any":
                if first:
                    fn(grad)
            elif done:
                fn(tuple(entry[3]))
        return hook

    return _MultiHandle([t.register_hook(inner(i)) for i, t in enumerate(tensors)])


class _MultiHandle(RemovableHandle):
    __slots__ = ("_handles",)

    def __init__(self, handles) -> None:
        self._handles = handles
        self._key = handles[0].id if handles else -1
        self._store = {}

    def remove(self) -> None:
        for h in self._handles:
            h.remove()


def increment_version(tensor) -> None:
    """Bump the version counter as an in-place op would
    (``torch.autograd.graph.increment_version``)."""
    tensor._vc[0] += 1
