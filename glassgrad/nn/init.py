"""Weight initialisation in place, under ``no_grad`` (``torch.nn.init``).

Distributions, parameters, the arithmetic of the bounds and the order of the draws are
PyTorch's, on torch's random stream (NOTE [Torch's stream] in _generator.py): after the same
``manual_seed`` every function here fills torch's numbers (``orthogonal_`` up to its QR, which
is LAPACK's in both libraries but not bit-identical across LAPACK builds).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, TypeVar

try:  # NOTE: torch.nn.init exports typing_extensions' ParamSpec, a class of its own there
    from typing_extensions import ParamSpec
except ImportError:  # pragma: no cover - typing_extensions is absent
    from typing import ParamSpec

import numpy as np

from .._factories import randperm
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .._user_warning import warn_user


_NonlinearityType = Literal["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                            "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                            "leaky_relu", "selu"]


def _fill(tensor: Tensor, arr) -> Tensor:
    """Write ``arr`` into ``tensor`` in place, without history (init never records)."""
    with no_grad():
        tensor.copy_(Tensor._make(np.asarray(arr, dtype=tensor._array.dtype)))
    return tensor


def calculate_gain(nonlinearity: _NonlinearityType, param=None) -> float:
    """The recommended gain for ``nonlinearity`` (``torch.nn.init.calculate_gain``): 1 for
    linear/conv/sigmoid, 5/3 tanh, sqrt(2) relu, sqrt(2 / (1 + slope^2)) leaky_relu, 3/4 selu."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dims = tensor.dim()
    if dims < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b) (``torch.nn.init.uniform_``)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) (``torch.nn.init.normal_``)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b] (``torch.nn.init.trunc_normal_``): torch
    2.13's rejection sampler, redrawing the whole tensor until every rejected element is
    replaced when [a, b] holds more than 30% of the mass, else uniform proposals accepted by
    ``log(u) <= log_pdf``. UserWarning when mean is more than 2 std outside [a, b]."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warn_user("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                  "The distribution of values may be incorrect.", stacklevel=2)
    from .. import _factories as fac
    from ..ops.elementwise import where

    with no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            lo, hi = (float(tensor._array.dtype.type(v)) for v in (a, b))
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                fresh = fac.empty_like(result).normal_(mean, std, generator=generator)
                result = where(mask, fresh, result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
        candidates, accept = fac.empty_like(tensor), fac.empty_like(tensor)

        def log_pdf_below(c):
            c.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            return accept.uniform_(generator=generator).log_().gt(c)

        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        pending = log_pdf_below(candidates)
        result = tensor
        while pending.any():
            candidates.uniform_(a, b, generator=generator)
            result = where(pending, candidates, result)
            pending = where(pending, log_pdf_below(candidates), pending)
        if result is not tensor:
            tensor.copy_(result)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val`` (``torch.nn.init.constant_``)."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix, for 2-D tensors (``torch.nn.init.eye_``)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta for 3-, 4- or 5-D conv weights: channels pass through unchanged."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    arr = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            arr[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, arr)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # NOTE: torch's order of operations, so the bound rounds the same
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-b, b) with ``b = gain * sqrt(3 / fan)`` (He); ``a`` is the leaky_relu slope."""
    if 0 in tensor.shape:
        warn_user("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # NOTE: torch's order of operations, so the bound rounds the same
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std^2) with ``std = gain / sqrt(fan)`` (He)."""
    if 0 in tensor.shape:
        warn_user("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR of a Gaussian one, scaled by ``gain``; dims beyond
    the first are flattened (``torch.nn.init.orthogonal_``)."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    from .._factories import empty

    flat = empty((rows, cols), dtype=tensor.dtype).normal_(0, 1, generator=generator)._array
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    _fill(tensor, q.reshape(tensor.shape))
    with no_grad():
        return tensor.mul_(gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std^2) with a ``sparsity`` fraction of each column set to zero (2-D only)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
    arr = tensor._array.copy()
    for c in range(cols):  # NOTE: torch draws these permutations from the default generator
        arr[randperm(rows)._array[:zeros], c] = 0
    return _fill(tensor, arr)


_P = ParamSpec("_P")
_R = TypeVar("_R")


# PyTorch's deprecated names without the trailing underscore
def _deprecated(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    old, new = fn.__name__[:-1], fn.__name__

    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        warn_user(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
                  FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = old
    wrapper.__doc__ = f"Deprecated alias of ``{new}`` (``torch.nn.init.{old}``): FutureWarning."
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
