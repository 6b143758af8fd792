"""Elementwise ops, ops with a Python number, matrix products and reductions."""

from __future__ import annotations

import math

import numpy as np

from .symbolic import register, simple

for _name in ("Relu", "Tanh", "Sigmoid", "Exp", "Log", "Sqrt", "Neg", "Abs", "Sin", "Cos",
              "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf",
              "Reciprocal", "Floor", "Ceil", "Sign", "Round", "Softplus", "Mish"):
    simple(_name, _name)
for _onnx, _name in (("Add", "Add"), ("Sub", "Sub"), ("Mul", "Mul"), ("Div", "Div"),
                     ("Pow", "Pow"), ("Max", "Maximum"), ("Min", "Minimum"),
                     ("MatMul", "MatMul"), ("MatMul", "Bmm"), ("MatMul", "Mv"),
                     ("MatMul", "Dot"), ("Identity", "Clone"), ("HardSwish", "Hardswish")):
    simple(_onnx, _name)


def _number(call, value) -> str:
    return call.g.const(value, call.dtype)


@register("AddScalar", "SubScalar", "MulScalar", "DivScalar", "RSubScalar", "AlphaMulScalar")
def _scalar_arith(call):
    name = call.op.__name__
    c = _number(call, call.attrs["other"])
    x = call.inputs[0]
    if name == "RSubScalar":
        return call.g.op("Sub", c, x)
    onnx_type = {"AddScalar": "Add", "SubScalar": "Sub", "DivScalar": "Div"}.get(name, "Mul")
    return call.g.op(onnx_type, x, c)


@register("PowScalar")
def _pow_scalar(call):
    return call.g.op("Pow", call.inputs[0], _number(call, call.attrs["exponent"]))


@register("RPowScalar")
def _rpow_scalar(call):
    return call.g.op("Pow", _number(call, call.attrs["base"]), call.inputs[0])


@register("Rsqrt")
def _rsqrt(call):
    return call.g.op("Reciprocal", call.g.op("Sqrt", call.inputs[0]))


@register("Log1p")
def _log1p(call):
    return call.g.op("Log", call.g.op("Add", call.inputs[0], _number(call, 1)))


@register("Expm1")
def _expm1(call):
    return call.g.op("Sub", call.g.op("Exp", call.inputs[0]), _number(call, 1))


@register("Silu")
def _silu(call):
    x = call.inputs[0]
    return call.g.op("Mul", x, call.g.op("Sigmoid", x))


@register("Gelu")
def _gelu(call):
    x, g = call.inputs[0], call.g
    if g.opset >= 20:
        return g.op("Gelu", x, approximate=call.attrs["approximate"])
    # NOTE: before opset 20, the formulas of nn.GELU's docstring
    if call.attrs["approximate"] == "tanh":
        cube = g.op("Mul", g.op("Mul", x, x), x)
        inner = g.op("Add", x, g.op("Mul", cube, _number(call, 0.044715)))
        t = g.op("Tanh", g.op("Mul", inner, _number(call, math.sqrt(2.0 / math.pi))))
    else:
        t = g.op("Erf", g.op("Mul", x, _number(call, 1.0 / math.sqrt(2.0))))
    half = g.op("Mul", x, _number(call, 0.5))
    return g.op("Mul", half, g.op("Add", t, _number(call, 1.0)))


@register("LeakyRelu")
def _leaky_relu(call):
    return call.g.op("LeakyRelu", call.inputs[0], alpha=float(call.attrs["negative_slope"]))


@register("Clamp")
def _clamp(call):
    lo, hi = call.attrs["min"], call.attrs["max"]
    return call.g.op("Clip", call.inputs[0], "" if lo is None else _number(call, lo),
                     "" if hi is None else _number(call, hi))


@register("Linear")
def _linear(call):
    return call.g.op("Gemm", *call.inputs, transB=1)


@register("Where")
def _where(call):
    return call.g.op("Where", call.array(call.attrs["condition"]), *call.inputs)


def axes_of(call, dims) -> list:
    """A reduction's dims (None or () for all) as non-negative axes."""
    ndim = len(call.shape(0))
    if dims is None or dims == ():
        return list(range(ndim))
    dims = (dims,) if isinstance(dims, int) else dims
    return [d % ndim if ndim else 0 for d in dims]


def reduce(call, onnx_type: str, x: str, dims, keepdim: bool) -> str:
    axes = axes_of(call, dims)
    if not axes:  # a 0-d input: nothing to reduce
        return call.g.op("Identity", x)
    if call.g.opset < 18 and onnx_type != "ReduceSum":  # axes became an input in opset 18
        return call.g.op(onnx_type, x, axes=axes, keepdims=int(bool(keepdim)))
    return call.g.op(onnx_type, x, call.g.ints(axes), keepdims=int(bool(keepdim)))


for _onnx, _names in (("ReduceSum", ("Sum", "SumDim")), ("ReduceMean", ("Mean", "MeanDim")),
                      ("ReduceMax", ("MaxAll", "Amax")), ("ReduceMin", ("MinAll", "Amin")),
                      ("ReduceProd", ("Prod",)), ("ReduceLogSumExp", ("LogSumExp",))):
    def _emit(call, _onnx=_onnx):
        return reduce(call, _onnx, call.inputs[0], call.attrs["dims"], call.attrs["keepdim"])

    register(*_names)(_emit)


@register("Var")
def _var(call):
    """Var is no ONNX op: mean of squared deviations, times n / (n - correction)."""
    x = call.inputs[0]
    axes = axes_of(call, call.attrs["dims"])
    shape = call.shape(0)
    n = int(np.prod([shape[a] for a in axes])) if axes else 1
    centred = call.g.op("Sub", x, reduce(call, "ReduceMean", x, axes, True))
    sq = call.g.op("Mul", centred, centred)
    total = reduce(call, "ReduceSum", sq, axes, call.attrs["keepdim"])
    return call.g.op("Div", total, _number(call, max(n - call.attrs["correction"], 0)))


@register("StdFromVar")
def _std(call):
    return call.g.op("Sqrt", call.inputs[0])


@register("ToCopy")
def _to_copy(call):
    from ._builder import elem_type

    r = call.result
    return call.g.op("Cast", call.inputs[0], to=elem_type(r._array.dtype))


@register("Norm2")
def _norm2(call):
    return reduce(call, "ReduceL2", call.inputs[0], call.attrs["dims"], call.attrs["keepdim"])


@register("NormP")
def _norm_p(call):
    p = call.attrs["p"]
    x = call.inputs[0]
    if p == 1:
        return reduce(call, "ReduceL1", x, call.attrs["dims"], call.attrs["keepdim"])
    if p in (float("inf"), float("-inf")):
        onnx_type = "ReduceMax" if p > 0 else "ReduceMin"
        return reduce(call, onnx_type, call.g.op("Abs", x), call.attrs["dims"],
                      call.attrs["keepdim"])
    powered = call.g.op("Pow", call.g.op("Abs", x), _number(call, p))
    total = reduce(call, "ReduceSum", powered, call.attrs["dims"], call.attrs["keepdim"])
    return call.g.op("Pow", total, _number(call, 1.0 / p))


@register("Cumsum")
def _cumsum(call):
    axis = call.g.initializer(np.asarray(call.attrs["dim"], dtype=np.int64))
    return call.g.op("CumSum", call.inputs[0], axis)


@register("Einsum", "EinsumUnary")
def _einsum(call):
    return call.g.op("Einsum", *call.inputs, equation=call.attrs["equation"])


@register("SortValues", "TopkValues")
def _sorted_values(call):
    """sort and topk keep values at indices found outside the op: ONNX's TopK finds them again
    (largest or smallest first, as the traced result shows)."""
    dim = call.attrs["dim"] % len(call.shape(0))
    out = call.result._array
    k = out.shape[dim]
    if call.op.__name__ == "SortValues":
        largest = k > 1 and bool(np.all(np.diff(out, axis=dim) <= 0))
    else:
        first = np.take(out, [0], axis=dim)
        largest = bool(np.array_equal(first, np.max(call.tensors[0]._array, axis=dim,
                                                    keepdims=True)))
    values, _ = call.g.op("TopK", call.inputs[0], call.g.ints([k]), outputs=2, axis=dim,
                          largest=int(largest), sorted=1)
    return values
