"""Composites emitted whole: comparisons, max pooling, the norms, embedding, LSTM
(onnx/_patches.py says how they are installed)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._patches import patch
from .tracer import unsupported

_COMPARE = {"gt": ("Greater", False), "lt": ("Less", False), "ge": ("GreaterOrEqual", False),
            "le": ("LessOrEqual", False), "eq": ("Equal", False), "ne": ("Equal", True)}


def _operand(tracer, value, like) -> str:
    if isinstance(value, Tensor):
        if value._array.dtype != like._array.dtype and tracer.live(value) is None:
            return tracer.g.initializer(value._array.astype(like._array.dtype))
        return tracer.value(value)
    return tracer.g.const(value, like._array.dtype)


def _comparison(onnx_type: str, negate: bool):
    def emit(tracer, args, kwargs, result):
        x, other = args[0], args[1] if len(args) > 1 else kwargs["other"]
        out = tracer.g.op(onnx_type, _operand(tracer, x, x), _operand(tracer, other, x))
        return tracer.g.op("Not", out) if negate else out

    return emit


for _name, (_onnx, _negate) in _COMPARE.items():
    patch("glassgrad.comparison", _name)(_comparison(_onnx, _negate))
    patch("class:glassgrad.tensor.Tensor", f"__{_name}__")(_comparison(_onnx, _negate))
    patch("class:glassgrad.tensor.Tensor", _name)(_comparison(_onnx, _negate))


@patch("glassgrad.nn._functional_pool", "_max_poolnd")
def _max_pool(tracer, args, kwargs, result):
    from ..nn import _functional_pool as P

    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, op = args
    if return_indices or input.ndim != nd + 2:
        raise unsupported(f"{op}_with_indices" if return_indices else op, [input],
                          tracer.g.opset, "return_indices=True, or an unbatched input")
    kernel, stride, pads, dilation, _ = P._pool_geometry(input, kernel_size, stride, padding,
                                                         dilation, ceil_mode, nd, op)
    # NOTE: glassgrad's pads already hold ceil_mode's extra end padding: ceil_mode=0 is exact
    return tracer.g.op("MaxPool", tracer.value(input), kernel_shape=list(kernel),
                       strides=list(stride), dilations=list(dilation),
                       pads=[p[0] for p in pads] + [p[1] for p in pads])


def _eval_mode(args, kwargs) -> bool:
    return not (args[5] if len(args) > 5 else kwargs.get("training", False))


@patch("glassgrad.nn._functional_layers", "_batch_norm", when=_eval_mode)
def _batch_norm(tracer, args, kwargs, result):
    input, mean, var, weight, bias, _, _, eps = args
    c = input.shape[1]
    dt = input._array.dtype
    g = tracer.g
    scale = tracer.value(weight) if weight is not None else g.initializer(np.ones(c, dt))
    shift = tracer.value(bias) if bias is not None else g.initializer(np.zeros(c, dt))
    return g.op("BatchNormalization", tracer.value(input), scale, shift, tracer.value(mean),
                tracer.value(var), epsilon=float(eps))


@patch("glassgrad.nn._functional_layers", "layer_norm")
def _layer_norm(tracer, args, kwargs, result):
    names = ("input", "normalized_shape", "weight", "bias", "eps")
    a = dict(zip(names, args), **kwargs)
    input, shape = a["input"], a["normalized_shape"]
    if tracer.g.opset < 17:
        raise unsupported("layer_norm", [input], tracer.g.opset, "LayerNormalization", 17)
    k = 1 if isinstance(shape, int) else len(tuple(shape))
    trailing = tuple(input.shape[input.ndim - k:])
    dt = input._array.dtype
    g = tracer.g
    weight, bias = a.get("weight"), a.get("bias")
    scale = tracer.value(weight) if weight is not None else g.initializer(np.ones(trailing, dt))
    shift = tracer.value(bias) if bias is not None else g.initializer(np.zeros(trailing, dt))
    return g.op("LayerNormalization", tracer.value(input), scale, shift, axis=-k,
                epsilon=float(a.get("eps", 1e-5)))


@patch("glassgrad.nn._functional_layers", "embedding")
def _embedding(tracer, args, kwargs, result):
    input, weight = args[0], args[1] if len(args) > 1 else kwargs["weight"]
    return tracer.g.op("Gather", tracer.value(weight), tracer.value(input), axis=0)


@patch("glassgrad.nn._functional_activation", "elu")
def _elu(tracer, args, kwargs, result):
    alpha = args[1] if len(args) > 1 else kwargs.get("alpha", 1.0)
    return tracer.g.op("Elu", tracer.value(args[0]), alpha=float(alpha))


@patch("glassgrad.nn._functional_layers", "linear")
def _linear(tracer, args, kwargs, result):
    """Gemm for a matrix input; MatMul and Add otherwise, so leading dims stay dynamic."""
    a = dict(zip(("input", "weight", "bias"), args), **kwargs)
    input, weight, bias = a["input"], a["weight"], a.get("bias")
    g = tracer.g
    x, w = tracer.value(input), tracer.value(weight)
    if input.ndim == 2 and weight.ndim == 2 and bias is not None:
        return g.op("Gemm", x, w, tracer.value(bias), transB=1)
    out = g.op("MatMul", x, g.op("Transpose", w, perm=[1, 0]) if weight.ndim == 2 else w)
    return out if bias is None else g.op("Add", out, tracer.value(bias))


def _dropping(args, kwargs) -> bool:
    a = dict(zip(("input", "p", "training", "batched_ndim", "inplace"), args), **kwargs)
    return a["training"] and a["p"] != 0.0


@patch("glassgrad.nn._functional_dropout", "_feature_dropout", when=_dropping)
def _dropout(tracer, args, kwargs, result):
    """Dropout in train mode: ONNX's Dropout with training_mode, random where it runs (not
    glassgrad's mask of the traced call)."""
    input, p, _, batched_ndim = args[:4]
    if batched_ndim:
        raise unsupported("feature_dropout", [input], tracer.g.opset,
                          "dropout1d/2d/3d in train mode; export in eval mode")
    g = tracer.g
    ratio = g.const(p, input._array.dtype)
    return g.op("Dropout", tracer.value(input), ratio, g.initializer(np.asarray(True)))


@patch("glassgrad.ops.elementwise", "to_dtype")
def _to_dtype(tracer, args, kwargs, result):
    """``x.to(dtype)``: its integer and bool copies are made outside ``Primitive.apply``."""
    from ._builder import elem_type

    if result is args[0]:
        return tracer.live(result)
    return tracer.g.op("Cast", tracer.value(args[0]), to=elem_type(result._array.dtype))


@patch("glassgrad.ops.selection", "_along")
def _max_min_dim(tracer, args, kwargs, result):
    """``max(x, dim)`` / ``min(x, dim)``: values and first indices (the indices are made
    outside ``Primitive.apply``)."""
    input, dim, keepdim, _, name = args[:5]
    g = tracer.g
    x = tracer.value(input)
    if input.ndim == 0:
        return g.op("Identity", x), g.initializer(np.zeros((), np.int64))
    d = dim % input.ndim
    reduce, arg = ("ReduceMax", "ArgMax") if name == "max" else ("ReduceMin", "ArgMin")
    values = (g.op(reduce, x, g.ints([d]), keepdims=int(keepdim)) if g.opset >= 18
              else g.op(reduce, x, axes=[d], keepdims=int(keepdim)))
    return values, g.op(arg, x, axis=d, keepdims=int(keepdim))


def _arg_reduction(onnx_type: str):
    def emit(tracer, args, kwargs, result):
        a = dict(zip(("input", "dim", "keepdim"), args), **kwargs)
        input, dim, keepdim = a["input"], a.get("dim"), bool(a.get("keepdim", False))
        x = tracer.value(input)
        g = tracer.g
        if dim is None:  # over the flattened input
            flat = g.op(onnx_type, g.op("Reshape", x, g.ints([-1])), axis=0, keepdims=0)
            return g.op("Reshape", flat, g.ints([1] * input.ndim)) if keepdim else flat
        return g.op(onnx_type, x, axis=dim % max(input.ndim, 1), keepdims=int(keepdim))

    return emit


patch("glassgrad.ops.selection", "argmax")(_arg_reduction("ArgMax"))
patch("glassgrad.ops.selection", "argmin")(_arg_reduction("ArgMin"))


@patch("glassgrad.nn.modules.attention", "_safe_softmax")
def _attention_softmax(tracer, args, kwargs, result):
    """Attention's softmax (its shift and all-masked-row guard are arrays computed outside
    ``Primitive.apply``): ONNX's Softmax, which gives NaN, not 0, on a row masked entirely."""
    return tracer.g.op("Softmax", tracer.value(args[0]), axis=-1)
