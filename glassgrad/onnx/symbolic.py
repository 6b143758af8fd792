"""The op table: glassgrad primitive name -> the function that writes its ONNX nodes.

An emitter takes an ``OpCall`` (onnx/tracer.py) and returns the ONNX name of the result, or a
tuple of names (None for an output nothing reads) for a multi-output primitive. Families live
in the ``_ops_*.py`` files beside this one; importing them fills ``OPS``.
"""

from __future__ import annotations

OPS: dict = {}


def register(*names: str):
    """Decorator: the emitter of the primitives ``names``."""

    def deco(fn):
        for name in names:
            OPS[name] = fn
        return fn

    return deco


def simple(onnx_type: str, *names: str, **onnx_attrs) -> None:
    """Primitives that are one ONNX node of the same inputs (``Relu`` -> ``Relu``)."""

    def emit(call):
        return call.g.op(onnx_type, *call.inputs, **onnx_attrs)

    register(*names)(emit)


def table() -> dict:
    """``OPS`` with every family loaded."""
    from . import _ops_math, _ops_nn, _ops_shape  # noqa: F401 - they register their emitters

    return OPS
