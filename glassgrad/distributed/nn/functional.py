"""Differentiable collectives (``torch.distributed.nn.functional``).

Each returns new tensors (the inputs are left alone) and records a node whose backward is the
adjoint collective, itself differentiable: the adjoint of an all_reduce SUM (or AVG) is the
same all_reduce of the gradients, of broadcast from ``src`` a reduce to ``src``, of all_gather a
reduce_scatter, of reduce_scatter an all_gather, of reduce to ``dst`` a broadcast from ``dst``.
Every rank must run the backward, as it ran the forward, since backward communicates. MAX, MIN,
PRODUCT and the bitwise ops have no such adjoint: torch's backward reduces the gradients with
the same op, which is not the derivative, so glassgrad refuses their backward
(NotImplementedError) rather than give those numbers.
"""

from __future__ import annotations

from ... import autograd as _autograd
from .. import collectives as _c
from .. import gathers as _g
from ..process_group import _resolve
from ..reduce_op import ReduceOp, _RedOpType, as_red_op_type

__all__ = ["all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter"]

_LINEAR = (_RedOpType.SUM, _RedOpType.AVG)


def _linear_only(op, what: str):
    if as_red_op_type(op) not in _LINEAR:
        raise NotImplementedError(
            f"glassgrad.distributed.nn.functional.{what}: the backward of ReduceOp."
            f"{as_red_op_type(op).name} is not implemented (only SUM and AVG reductions are "
            "linear; torch reduces the gradients with the same op, which is not the derivative)")


class _AllReduce(_autograd.Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = tensor.clone()
        _c.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        _linear_only(ctx.op, "all_reduce")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _Broadcast(_autograd.Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        out = tensor.clone()
        _c.broadcast(out, src=src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_tensor = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if _resolve(ctx.group)._ranks[_resolve(ctx.group).rank()] != ctx.src:
            grad_tensor = grad_tensor * 0  # only src's tensor reached the others
        return None, None, grad_tensor


class _Reduce(_autograd.Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.op, ctx.group = dst, op, group
        out = tensor.clone()
        _c.reduce(out, dst=dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        _linear_only(ctx.op, "reduce")
        grad_tensor = _Broadcast.apply(ctx.dst, ctx.group, grad)
        if as_red_op_type(ctx.op) is _RedOpType.AVG:
            grad_tensor = grad_tensor / _resolve(ctx.group).size()
        return None, None, None, grad_tensor


class _AllGather(_autograd.Function):
    @staticmethod
    def forward(ctx, group, tensor):
        from ... import empty_like

        ctx.group = group
        outs = [empty_like(tensor) for _ in range(_resolve(group).size())]
        _g.all_gather(outs, tensor.contiguous(), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        from ... import empty_like

        return None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, empty_like(grads[0]), *grads)


class _ReduceScatter(_autograd.Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        from ... import empty_like

        ctx.op, ctx.group, ctx.output = op, group, output
        out = empty_like(ctx.output)
        _g.reduce_scatter(out, [t.contiguous() for t in inputs], op=op, group=group)
        ctx.output.detach().copy_(out)  # NOTE: torch fills the output it was given, too
        return out

    @staticmethod
    def backward(ctx, grad):
        _linear_only(ctx.op, "reduce_scatter")
        ctx.output = None
        grads = _AllGather.apply(ctx.group, grad)
        if as_red_op_type(ctx.op) is _RedOpType.AVG:
            size = _resolve(ctx.group).size()
            grads = tuple(g / size for g in grads)
        return (None, None, None, *grads)


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """A new tensor holding ``tensor`` reduced across the group, differentiable
    (``torch.distributed.nn.functional.all_reduce``). Backward all-reduces the gradients
    (SUM/AVG only; other ops refuse their backward)."""
    return _AllReduce.apply(op, group, tensor)


def broadcast(tensor, src: int, group=None):
    """A new tensor holding rank ``src``'s ``tensor``, differentiable
    (``torch.distributed.nn.functional.broadcast``): the gradients of every rank are summed
    into ``src``'s input gradient; the other ranks' input gradients are zero."""
    return _Broadcast.apply(src, group, tensor)


def reduce(tensor, dst: int, op=ReduceOp.SUM, group=None):
    """A new tensor, the reduction across the group on rank ``dst`` (a copy of ``tensor``
    elsewhere), differentiable (``torch.distributed.nn.functional.reduce``): ``dst``'s gradient
    is broadcast to every rank's input (SUM/AVG only)."""
    return _Reduce.apply(dst, op, group, tensor)


def all_gather(tensor, group=None) -> tuple:
    """Every rank's ``tensor``, in rank order, as a tuple of new tensors, differentiable
    (``torch.distributed.nn.functional.all_gather``): backward reduce-scatters (sums) the
    gradients of the gathered pieces back to their ranks."""
    return _AllGather.apply(group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """Reduce ``input_list[i]`` across the ranks and return rank i's piece, differentiable
    (``torch.distributed.nn.functional.reduce_scatter``); the result is also written into
    ``output``, as torch writes it. Backward all-gathers the gradients (SUM/AVG)."""
    return _ReduceScatter.apply(op, group, output, *input_list)
