"""Per-primitive batching when NumPy-level batching of ``forward`` fails (inside ``vmap``).

``Primitive.apply`` calls ``batched_forward`` when a forward raised (a ``VmapFallback`` somewhere
in the exception chain). It tries, in order: a rule for that primitive (``RULES``: dims shifted,
or the batch merged into the sample dim of a convolution); the forward again with ``BatchedXP``,
an ``xp`` whose ``zeros``/``ones``/``empty``/``full`` allocate batched arrays (the pattern
``out = xp.zeros(shape); out[index] = grad``), with unbatched inputs broadcast over the batch
(``out = x.copy(); xp.add.at(out, index, src)``); and last a loop over the batch entries, with a
one-time warning naming the primitive.
"""

from __future__ import annotations

import numpy as np

from ..backend import xp
from ..ops.primitive import VmapFallback
from ._batched_array import BatchedArray, warn_fallback
from ._batched_numpy import _batch_size, _slice, _top_level, align, stack_results

RULES: dict = {}


def is_vmap_error(exc) -> bool:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, VmapFallback):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _levels(objs) -> list:
    """(level, size) of every batch level found in ``objs``, lowest level first."""
    found = {}
    stack = list(objs)
    while stack:
        x = stack.pop()
        t = type(x)
        if t is BatchedArray:
            while type(x) is BatchedArray:
                found[x.level] = x.phys.shape[0]
                x = x.phys
        elif t is tuple or t is list:
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
    return sorted(found.items())


class BatchedXP:
    """NumPy, except that shape-based allocations are batched at every level of the inputs."""

    def __init__(self, levels):
        self._levels = levels

    def __getattr__(self, name):
        return getattr(np, name)

    def _wrap(self, make, shape):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        out = make(tuple(s for _, s in self._levels) + shape)
        for lvl, _ in self._levels:
            out = BatchedArray(out, lvl)
        return out

    def zeros(self, shape, dtype=float, order="C"):
        return self._wrap(lambda s: np.zeros(s, dtype=dtype, order=order), shape)

    def ones(self, shape, dtype=None, order="C"):
        return self._wrap(lambda s: np.ones(s, dtype=dtype, order=order), shape)

    def empty(self, shape, dtype=float, order="C"):
        return self._wrap(lambda s: np.empty(s, dtype=dtype, order=order), shape)

    def full(self, shape, fill_value, dtype=None, order="C"):
        return self._wrap(lambda s: np.full(s, fill_value, dtype=dtype, order=order), shape)


def plain_forward(cls, arrays, attrs):
    """``cls.forward`` on arrays that may still be batched at lower levels."""
    try:
        return cls.forward(xp, *arrays, **attrs)
    except Exception as exc:  # noqa: BLE001 - re-raised unless vmap's
        return batched_forward(cls, arrays, attrs, exc)


def batched_forward(cls, arrays, attrs, exc):
    """``Primitive.apply``'s handler (see the module docstring); re-raises other errors."""
    if not is_vmap_error(exc):
        raise exc
    level = _top_level((arrays, attrs))
    if level == 0:
        raise exc
    # NOTE [Node names] in ops/shape.py: a renamed subclass batches by its base's rule
    rule = next((RULES[c.__name__] for c in cls.__mro__ if c.__name__ in RULES), None)
    if rule is not None:
        out = rule(cls, level, arrays, attrs)
        if out is not NotImplemented:
            return out
    size = _batch_size((arrays, attrs), level)
    lifted = [_lift(a, level, size) for a in arrays]
    try:
        return cls.forward(BatchedXP(_levels((arrays, attrs))), *lifted, **attrs)
    except Exception as again:
        if not is_vmap_error(again):
            raise
    warn_fallback(f"{cls.node_cls.__name__} (glassgrad primitive {cls.__name__})", size)
    outs = [plain_forward(cls, _slice(arrays, level, b), _slice(attrs, level, b))
            for b in range(size)]
    if not outs:
        raise VmapFallback(f"vmap: glassgrad cannot run {cls.__name__} over an empty batch")
    return stack_results(outs, level)


def _lift(a, level, size):
    """An unbatched input array as a (read-only, broadcast) batched one, so that a forward that
    copies it and writes into the copy (``out = x.copy(); xp.add.at(out, ...)``) can batch."""
    if (type(a) is BatchedArray and a.level == level) or not hasattr(a, "shape"):
        return a
    return BatchedArray(np.broadcast_to(a, (size,) + tuple(a.shape)), level)


def _at(x, level):
    return type(x) is BatchedArray and x.level == level


def _shift_dims(cls, level, arrays, attrs):
    """Diagonal / DiagEmbed: a view of the physical array with dims shifted past the batch."""
    (x,) = arrays
    if not _at(x, level) or any(type(v) is BatchedArray for v in attrs.values()):
        return NotImplemented
    size = x.phys.shape[0]
    new = dict(attrs, dim1=attrs["dim1"] + 1, dim2=attrs["dim2"] + 1,
               shape=(size,) + tuple(attrs["shape"]))
    return BatchedArray(plain_forward(cls, [x.phys], new), level)


RULES["Diagonal"] = _shift_dims
RULES["DiagEmbed"] = _shift_dims


def _merge_samples(cls, level, arrays, attrs):
    """Convolutions and pools: the vmapped dim is folded into the sample dim N of the first
    input when every other input (weight, bias) is unbatched; a batched weight folds into the
    channel groups instead (``_merge_groups``)."""
    first, rest = arrays[0], arrays[1:]
    if any(type(a) is BatchedArray for a in rest):
        return _merge_groups(cls, level, arrays, attrs)
    if not _at(first, level) or first.ndim < 1:
        return NotImplemented
    p = first.phys
    merged = p.reshape((p.shape[0] * p.shape[1],) + tuple(p.shape[2:]))
    out = plain_forward(cls, [merged, *rest], attrs)
    return BatchedArray(out.reshape(p.shape[:2] + tuple(out.shape[1:])), level)


def _to_groups(p, size):
    """(B, N, C, *S) -> (N, B*C, *S): the batch becomes the outer part of the channel dim."""
    p = np.moveaxis(p, 0, 1)
    s = p.shape
    return p.reshape((s[0], s[1] * s[2]) + tuple(s[3:]))


def _merge_groups(cls, level, arrays, attrs):
    """A convolution whose weight (or whose both operands) are batched is one grouped
    convolution with ``B * groups`` groups: the batch is folded into the channels."""
    name = cls.__name__
    if name not in ("Convolution", "ConvolutionBackwardInput", "ConvolutionBackwardWeight"):
        return NotImplemented
    if any(type(a) is BatchedArray and a.level != level for a in arrays):
        return NotImplemented
    size = next(a.phys.shape[0] for a in arrays if _at(a, level))
    lifted = [a.phys if _at(a, level) else np.broadcast_to(a, (size,) + a.shape) for a in arrays]
    groups = attrs["groups"] * size
    new = dict(attrs, groups=groups)
    if name == "ConvolutionBackwardWeight":
        x, go = lifted
        out_ch = go.shape[2]
        ws = tuple(attrs["weight_size"])
        new["weight_size"] = (size * ws[0],) + ws[1:]
        out = plain_forward(cls, [_to_groups(x, size), _to_groups(go, size)], new)
        return BatchedArray(out.reshape((size, out_ch) + tuple(out.shape[1:])), level)
    data, weight, *bias = lifted
    w = weight.reshape((size * weight.shape[1],) + tuple(weight.shape[2:]))
    b = [bb.reshape(-1) for bb in bias]
    out = plain_forward(cls, [_to_groups(data, size), w, *b], new)
    n, ch = out.shape[0], out.shape[1] // size
    out = out.reshape((n, size, ch) + tuple(out.shape[2:]))
    return BatchedArray(np.moveaxis(out, 1, 0), level)


RULES["ConvolutionBackwardWeight"] = _merge_groups

for _name in ("Convolution", "ConvolutionTranspose", "ConvolutionBackwardInput", "AvgPool",
              "AvgPoolBackward", "AdaptiveAvgPool", "AdaptiveAvgPoolBackward", "Im2Col", "Col2Im"):
    RULES[_name] = _merge_samples


def _elementwise(cls, level, arrays, attrs):
    """Elementwise primitives whose forward NumPy cannot batch (boolean-mask writes,
    ``np.vectorize``, ``np.array``): the forward on the aligned physical arrays."""
    if any(type(v) is BatchedArray for v in attrs.values()):
        return NotImplemented
    return BatchedArray(plain_forward(cls, align(arrays, level), attrs), level)


for _name in ("Sigmoid", "Erf", "Clone", "Softplus", "Gelu"):
    RULES[_name] = _elementwise
