"""PyTorch's node names on composed ops: ``F.elu(x).grad_fn`` reads ``EluBackward0`` although
glassgrad builds elu from ``where`` and ``expm1``.

A composite's outermost node is the inner op's node (``WhereBackward0``); ``named_as`` moves it to
a subclass that carries torch's name, made once per (node class, name) pair. The subclass adds no
slots and no behaviour, so backward, saved tensors and hooks are the inner op's unchanged; only
``name()``, ``type(grad_fn).__name__`` and ``repr`` change. ``next_functions`` stays the inner
graph's (a fused primitive would be needed to give torch's edges as well). Cost per call: one
dict lookup and one ``__class__`` assignment.
"""

from __future__ import annotations

from .graph import AccumulateGrad

_CLASSES: dict = {}  # (node class, torch's name) -> the named subclass


def named_as(result, name: str, *inputs):
    """Give ``result.grad_fn`` PyTorch's node name ``name`` and return ``result``.

    ``inputs`` are the composite's tensor inputs: a result whose node is one of theirs (a
    composite that returned its input, such as ``dropout(x, training=False)``) keeps its name,
    and so does a result without a node. An ``AccumulateGrad`` leaf is never renamed.
    """
    fn = getattr(result, "grad_fn", None)
    if fn is None or type(fn) is AccumulateGrad:
        return result
    for t in inputs:
        if getattr(t, "grad_fn", None) is fn:
            return result
    base = type(fn)
    if base.__name__ == name:
        return result
    base = getattr(base, "_named_base", base)
    key = (base, name)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = _CLASSES[key] = type(name, (base,), {"__slots__": (), "_named_base": base,
                                                    "__module__": base.__module__})
    fn.__class__ = cls
    return result


def with_absent_input(result, dtype):
    """Give ``result.grad_fn`` one more edge ``(None, 0)`` for an optional input the call left
    out (convolution's bias: torch's ConvolutionBackward0 always has three edges), and return
    ``result``. The node's backward returns None for it."""
    fn = getattr(result, "grad_fn", None)
    if fn is None or type(fn) is AccumulateGrad:
        return result
    fn.next_functions = fn.next_functions + ((None, 0),)
    if fn._in_meta is not None:
        fn._in_meta = fn._in_meta + (((0,), dtype),)
    return result
