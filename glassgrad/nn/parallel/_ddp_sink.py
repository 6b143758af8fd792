"""The sink DDP puts after a forward's outputs with ``find_unused_parameters=True`` (PyTorch's
``_DDPSink``): an identity whose backward runs first in backward and sees which outputs the loss
used. Parameters reachable only from outputs the loss left out then count as unused for this
iteration, so their bucket finishes without them (PyTorch reaches the same end through undefined
gradients)."""

from __future__ import annotations

import weakref

from ...autograd.function import Function
from . import _ddp_diagnose


class DDPSink(Function):
    @staticmethod
    def forward(ctx, reducer_ref, roots, *tensors):
        ctx.set_materialize_grads(False)
        ctx.reducer_ref, ctx.roots = reducer_ref, roots
        return tuple(t.clone() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        reducer = ctx.reducer_ref()
        if reducer is not None and any(g is None for g in grads):
            used = [root for root, g in zip(ctx.roots, grads) if g is not None]
            reached = _ddp_diagnose.reachable_variables(used)
            reducer.add_unused(i for i, p in enumerate(reducer.params) if id(p) not in reached)
        return (None, None, *grads)


def _flatten(output, found):
    """Output with every tensor that requires grad replaced by its position in ``found``."""
    from ...tensor import Tensor

    if isinstance(output, Tensor):
        if output.requires_grad and output.grad_fn is not None:
            found.append(output)
            return _Slot(len(found) - 1)
        return output
    if isinstance(output, (list, tuple)) and type(output) in (list, tuple):
        return type(output)(_flatten(item, found) for item in output)
    if type(output) is dict:
        return {k: _flatten(v, found) for k, v in output.items()}
    return output


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def _fill(template, values):
    if isinstance(template, _Slot):
        return values[template.index]
    if type(template) in (list, tuple):
        return type(template)(_fill(item, values) for item in template)
    if type(template) is dict:
        return {k: _fill(v, values) for k, v in template.items()}
    return template


def sink(output, reducer):
    """``output`` with its differentiable tensors passed through one ``DDPSink`` node (lists,
    tuples and dicts are looked into; other containers are returned as they are)."""
    found: list = []
    template = _flatten(output, found)
    if not found:
        return output
    passed = DDPSink.apply(weakref.ref(reducer), [t.grad_fn for t in found], *found)
    if not isinstance(passed, tuple):
        passed = (passed,)
    return _fill(template, passed)
