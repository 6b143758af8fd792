"""Shape ops: reshape, squeeze, transpose, expand, concatenation, indexing and slicing."""

from __future__ import annotations

import numpy as np

from .symbolic import register, simple

INT64_MAX = int(np.iinfo(np.int64).max)
INT64_MIN = int(np.iinfo(np.int64).min)

simple("Identity", "Alias")


def reshape_spec(in_shape, out_shape) -> list:
    """ONNX Reshape's shape for ``in_shape -> out_shape``: 0 (copy the input's dim) where a
    leading dim is kept, -1 for one other dim, so a dynamic batch or sequence axis still
    reshapes; the traced shapes give the same result either way."""
    spec = list(out_shape)
    for i, (a, b) in enumerate(zip(in_shape, out_shape)):
        if a != b:
            break
        spec[i] = 0
    free = [i for i, s in enumerate(spec) if s != 0]
    if free and 0 not in out_shape:
        spec[free[0]] = -1
    return spec


def reshape(call, x: str, in_shape, out_shape) -> str:
    if tuple(in_shape) == tuple(out_shape):
        return call.g.op("Identity", x)
    if len(out_shape) == len(in_shape) + 1 and _is_insert(in_shape, out_shape):
        return call.g.op("Unsqueeze", x, call.g.ints([_is_insert(in_shape, out_shape) - 1]))
    if len(out_shape) + 1 == len(in_shape) and _is_insert(out_shape, in_shape):
        return call.g.op("Squeeze", x, call.g.ints([_is_insert(out_shape, in_shape) - 1]))
    return call.g.op("Reshape", x, call.g.ints(reshape_spec(in_shape, out_shape)))


def _is_insert(short, long) -> int:
    """1 + the position where ``long`` is ``short`` with a size-1 dim inserted, else 0."""
    short, long = tuple(short), tuple(long)
    for i in range(len(long)):
        if long[i] == 1 and long[:i] + long[i + 1:] == short:
            return i + 1
    return 0


@register("Reshape", "Squeeze", "SqueezeDim", "SqueezeDims", "Unsqueeze")
def _reshape(call):
    return reshape(call, call.inputs[0], call.shape(0), call.out_shape)


@register("Transpose", "Permute", "T")
def _transpose(call):
    return call.g.op("Transpose", call.inputs[0], perm=list(call.attrs["dims"]))


@register("Expand")
def _expand(call):
    shape = list(call.attrs["shape"])
    src = call.shape(0)
    for k in range(1, len(src) + 1):  # NOTE: 1 keeps the input's dim: Expand broadcasts
        if src[-k] == shape[-k]:
            shape[-k] = 1
    return call.g.op("Expand", call.inputs[0], call.g.ints(shape))


@register("Cat")
def _cat(call):
    return call.g.op("Concat", *call.inputs, axis=int(call.attrs["dim"]))


@register("Stack")
def _stack(call):
    dim = call.attrs["dim"] % (len(call.shape(0)) + 1)
    axes = call.g.ints([dim])
    return call.g.op("Concat", *[call.g.op("Unsqueeze", x, axes) for x in call.inputs], axis=dim)


@register("Unbind")
def _unbind(call):
    n = call.shape(0)[0]
    if call.g.opset < 18:  # num_outputs arrived in opset 18
        parts = call.g.op("Split", call.inputs[0], call.g.ints([1] * n), outputs=n, axis=0)
    else:
        parts = call.g.op("Split", call.inputs[0], outputs=n, axis=0, num_outputs=n)
    parts = parts if n > 1 else (parts,)
    axes = call.g.ints([0])
    return tuple(call.g.op("Squeeze", p, axes) for p in parts)


@register("Flip")
def _flip(call):
    dims = [d % len(call.shape(0)) for d in call.attrs["dims"]]
    g = call.g
    return g.op("Slice", call.inputs[0], g.ints([-1] * len(dims)), g.ints([INT64_MIN] * len(dims)),
                g.ints(dims), g.ints([-1] * len(dims)))


@register("Repeat")
def _repeat(call):
    sizes = list(call.attrs["sizes"])
    x = call.inputs[0]
    extra = len(sizes) - len(call.shape(0))
    if extra:
        x = call.g.op("Reshape", x, call.g.ints([1] * extra + list(call.shape(0))))
    return call.g.op("Tile", x, call.g.ints(sizes))


@register("Select", "Slice", "SplitPiece", "SplitWithSizesPiece", "UnbindPiece",
          "UnsqueezeIndex", "Index")
def _index(call):
    """A NumPy index (ints, slices, None, Ellipsis, at most one integer array) as Gather,
    Slice and Unsqueeze nodes."""
    index = call.attrs["index"]
    ndim = len(call.shape(0))
    consumes = sum(1 for k in index if k is not None and k is not Ellipsis)
    arrays = [k for k in index if isinstance(k, np.ndarray)]
    if len(arrays) > 1 or any(a.dtype == bool for a in arrays):
        raise call.unsupported("indexing with a mask or with more than one index tensor")
    x, axis = call.inputs[0], 0
    g = call.g
    for k in index:
        if k is Ellipsis:
            axis += ndim - consumes
        elif k is None:
            x = g.op("Unsqueeze", x, g.ints([axis]))
            axis += 1
        elif isinstance(k, slice):
            if k != slice(None):
                start = 0 if k.start is None else int(k.start)
                stop = INT64_MAX if k.stop is None else int(k.stop)
                x = g.op("Slice", x, g.ints([start]), g.ints([stop]), g.ints([axis]),
                         g.ints([1 if k.step is None else int(k.step)]))
            axis += 1
        elif isinstance(k, np.ndarray):
            x = g.op("Gather", x, call.array(k), axis=axis)
            axis += k.ndim
        else:  # an int: Gather with a 0-d index drops the dim
            x = g.op("Gather", x, g.initializer(np.asarray(int(k), dtype=np.int64)), axis=axis)
    return x


@register("Gather")
def _gather(call):
    return call.g.op("GatherElements", call.inputs[0], call.array(call.attrs["index"]),
                     axis=int(call.attrs["dim"]))


@register("MaskedFillScalar")
def _masked_fill_scalar(call):
    value = call.g.const(call.attrs["value"], call.dtype)
    return call.g.op("Where", call.array(call.attrs["mask"]), value, call.inputs[0])


@register("MaskedFillTensor", "MaskedFill")
def _masked_fill_tensor(call):
    return call.g.op("Where", call.array(call.attrs["mask"]), call.inputs[1], call.inputs[0])
