"""Fractional max pooling (``torch.nn.functional.fractional_max_pool2d/3d``): PyTorch's argument
checks and output sizes here, the window rule and primitives in ``glassgrad/ops/pool_fractional.py``.
"""

from __future__ import annotations

import numbers

from .. import dtypes
from .._factories import rand
from ..backend import xp
from ..ops import pool_fractional as _frac
from ..tensor import Tensor
from ._functional_pool import _finish

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _ints(value, nd: int, name: str, op: str) -> tuple:
    if isinstance(value, numbers.Integral):
        return (int(value),) * nd
    out = tuple(value)
    if len(out) == 1:
        out = out * nd
    if len(out) != nd or not all(isinstance(v, numbers.Integral) for v in out):
        count = "Ints" if nd == 2 else "three Ints"
        raise RuntimeError(f"{op}: {name} must either be a single Int or tuple of {count}")
    return tuple(int(v) for v in out)


def _output_from_ratio(input, output_ratio, nd: int, op: str) -> tuple:
    if nd == 2:
        if not hasattr(output_ratio, "__len__"):
            # NOTE: torch's functional takes len() of the ratio (the module pairs it first)
            raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()\n"
                            f"glassgrad: {op} takes output_ratio as a pair here, e.g. (0.5, 0.5)")
        if len(output_ratio) > 2:
            raise ValueError(
                f"{op} requires output_ratio to either be a single Int or tuple of Ints.")
    ratio = (output_ratio,) * nd if not hasattr(output_ratio, "__len__") else tuple(output_ratio)
    if len(ratio) == 1:
        ratio = ratio * nd
    if len(ratio) < nd:
        raise IndexError(f"tuple index out of range\nglassgrad: {op} needs {nd} output ratios, "
                         f"got {list(ratio)}")
    return tuple(int(s * r) for s, r in zip(input.shape[-nd:], ratio))


def _check_samples(samples, x, nd: int, op: str) -> None:
    if not isinstance(samples, Tensor):
        raise TypeError(f"{op}(): argument 'random_samples' (position 4) must be Tensor, not "
                        f"{type(samples).__name__}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input\n"
                           f"glassgrad: {op} got input {x.dtype}, _random_samples {samples.dtype}")
    if samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")


def _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, return_indices,
                           samples, nd: int):
    op = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if output_size is None:
        output_size = _output_from_ratio(input, output_ratio, nd, op)
    kernel = _ints(kernel_size, nd, "kernel_size", op)
    out = _ints(output_size, nd, "output_size", op)
    if samples is None and input.ndim < nd + 1:  # torch reads the channel count first
        top = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-top}, "
                         f"{top - 1}], but got {-nd - 1})\nglassgrad: {op} takes (N, C, *S) "
                         f"or (C, *S) input with {nd} spatial dims; got {list(input.shape)}")
    kernel_op = op if nd == 2 else op + "_out"  # torch's 3-D checks name its out= kernel
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{kernel_op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    x, batched = (input, True) if input.ndim == nd + 2 else (input.unsqueeze(0), False)
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(
                f"{kernel_op}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but got{list(input.shape)} with dimension {d - (not batched)} being empty.")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{op}(): kernel_size must be greater than zero, but got "
                           f"{list(kernel)}\nglassgrad: torch returns -inf windows here")
    if any(o < 0 for o in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                           f"{list(x.shape[:2]) + list(out)}")
    for word, s, o, k in zip(_WORDS[nd], x.shape[2:], out, kernel):
        # NOTE: torch's 2-D kernel allows the windows to reach the end exactly; its 3-D one not
        if o + k - 1 > s or (nd == 3 and o + k - 1 == s):
            raise RuntimeError(f"{kernel_op}(): pool {word} {k} too large relative to input "
                               f"{word} {s}")
    if x._array.dtype.kind not in "f" and x.dtype != dtypes.bfloat16:
        name = dtypes.type_name(x.dtype)[len("torch."):-len("Tensor")]
        raise NotImplementedError(f"\"{op}_out_frame\" not implemented for '{name}'")
    if samples is None:
        samples = rand(x.shape[0], x.shape[1], nd, dtype=x.dtype)
    else:
        _check_samples(samples, x, nd, op)
    indices = _frac.fractional_max_pool_indices(xp, x._array, kernel, out, samples._array)
    prim = _frac.FractionalMaxPool2D if nd == 2 else _frac.FractionalMaxPool3D
    result = prim.apply(x, indices=indices, size=x.shape, unique=False)
    return _finish(result, indices, batched, return_indices)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, H, W) or (C, H, W) to ``output_size`` (or
    ``int(size * output_ratio)``) with windows of ``kernel_size`` at pseudo-random starts drawn
    from ``_random_samples`` (N, C, 2) in [0, 1), uniform if None, PyTorch's interval rule
    (``torch.nn.functional.fractional_max_pool2d``). The same samples give torch's values and
    int64 flat indices. ValueError without a size or ratio; RuntimeError for a window too large
    for the input or for samples of the wrong shape or dtype."""
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, return_indices,
                                  _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W), samples (N, C, 3)
    (``torch.nn.functional.fractional_max_pool3d``); see ``fractional_max_pool2d``."""
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, return_indices,
                                  _random_samples, 3)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool2d`` returning ``(values, indices)``
    (``torch.nn.functional.fractional_max_pool2d_with_indices``)."""
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, True,
                                  _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool3d`` returning ``(values, indices)``
    (``torch.nn.functional.fractional_max_pool3d_with_indices``)."""
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, True,
                                  _random_samples, 3)
