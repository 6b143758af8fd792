"""Autocast: run chosen ops in float16/bfloat16 inside a region (``torch.autocast``,
``torch.amp.custom_fwd``/``custom_bwd``), and the per-op policy the ops consult.

NOTE [Autocast hook]: the ops the policy names check one thread-local flag at their entry::

    if _autocast.on:
        input, weight = autocast_args("linear", input, weight)

With autocast off that is the whole cost. With it on, ``autocast_args`` casts the floating Tensor
arguments with the differentiable ``to`` (so float32 parameters get float32 gradients):

- lower precision (``LOWER``): to the region's dtype (bfloat16 by default on the CPU);
- ``FP32``: float16/bfloat16 up to float32;
- ``PROMOTE``: to the widest floating dtype among the arguments.

float64 tensors are never cast, as in PyTorch. The tables are PyTorch's own lists: ``CPU_POLICY``
was checked op by op against torch 2.13's CPU autocast (tests/test_amp_autocast.py), where
softmax, exp, sum, layer_norm... keep their input dtype; ``CUDA_POLICY`` is PyTorch's CUDA list,
where those run in float32. It is kept for a GPU backend and is unused while every tensor lives
on the CPU. An op that is not listed runs on whatever dtypes it receives, so a composite such as
``einsum`` or ``bilinear`` is autocast through the listed ops it calls, as PyTorch's composites are.

Casts of float32 leaves that require grad (parameters) are cached until the outermost autocast
region exits (``cache_enabled``), so a weight used twice is cast once. Unlike PyTorch, the cache is
keyed by target dtype and grad mode, and a cached cast is dropped when its parameter was
modified in place: a cast made under ``no_grad`` never hands a graph-less weight to a later
forward (PyTorch's cache does).

NOTE: ``glassgrad.amp.autocast`` is the class; this module is reached only by
``from glassgrad.amp.autocast import ...`` (``import glassgrad.amp.autocast as m`` gets the class).
"""

from __future__ import annotations

import collections.abc
import functools
import threading

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import _state as _grad_state
from .._user_warning import warn_user

__all__ = [
    "autocast",
    "autocast_arg",
    "autocast_args",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]

LOWER, FP32, PROMOTE, BANNED = "lower_precision_fp", "fp32", "promote", "banned"


def _table(**groups) -> dict:
    return {op: kind for kind, names in groups.items() for op in names.split()}


# PyTorch's CPU lists (aten/src/ATen/autocast_mode.cpp), under glassgrad's function names where
# they differ: cross_entropy is cross_entropy_loss; reflect/replicate_padNd come from F.pad.
CPU_POLICY = _table(
    lower_precision_fp="conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
    "bmm mm linalg_vecdot baddbmm addmm addbmm linear matmul prelu scaled_dot_product_attention "
    "einsum",  # einsum: not listed, but PyTorch's runs through bmm, which is
    fp32="avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist "
    "trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr "
    "pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d adaptive_max_pool3d "
    "fractional_max_pool2d fractional_max_pool3d reflect_pad1d reflect_pad2d replicate_pad1d "
    "replicate_pad2d replicate_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d "
    "hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss "
    "margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div "
    "multilabel_margin_loss binary_cross_entropy_with_logits",
    promote="stack cat index_copy",
)

# PyTorch's CUDA lists; the fp32_set_opt_dtype ops (softmax, sum, cumsum...) and norm's
# fp32_append_dtype are plain FP32 here: the same result dtype.
CUDA_POLICY = _table(
    lower_precision_fp="conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d "
    "conv_transpose3d prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm "
    "baddbmm bmm chain_matmul linalg_multi_dot lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell "
    "scaled_dot_product_attention",
    fp32="acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
    "softplus layer_norm group_norm frobenius_norm nuclear_norm cosine_similarity "
    "poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div "
    "l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss "
    "soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits "
    "dist pdist cdist renorm logsumexp prod softmax log_softmax cumprod cumsum "
    "linalg_vector_norm linalg_matrix_norm sum norm",
    promote="addcdiv addcmul atan2 bilinear cross dot grid_sampler index_put scatter_add "
    "tensordot stack cat index_copy",
    banned="binary_cross_entropy",
)

POLICIES = {"cpu": CPU_POLICY, "cuda": CUDA_POLICY}
_DEFAULT_DTYPE = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
_SUPPORTED = {"cpu": (dtypes.bfloat16, dtypes.float16), "cuda": (dtypes.bfloat16, dtypes.float16)}
_DEVICE = "cpu"  # NOTE [Backend]: every tensor lives on the CPU until a GPU backend exists


class _State(threading.local):
    """Per-thread autocast state. ``on`` mirrors ``enabled[_DEVICE]``: the one flag ops test."""

    def __init__(self):
        self.on = False
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = dict(_DEFAULT_DTYPE)
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict = {}


state = _State()
_to_dtype = None  # ops.elementwise.to_dtype, bound on first use (ops import this module)


def _cast_tensor(t, target, lower: bool):
    """``t.to(target)`` for a floating, non-float64 Tensor; anything else unchanged."""
    arr = getattr(t, "_array", None)
    if arr is None:
        return t
    src = dtypes._FROM_NP.get(arr.dtype)
    if src is None or src is target or not src.is_floating_point or src is dtypes.float64:
        return t
    global _to_dtype
    if _to_dtype is None:
        from ..ops.elementwise import to_dtype as _to_dtype
    if (lower and src is dtypes.float32 and t._requires_grad and t.grad_fn is None
            and t._base is None and state.cache_enabled):
        key = (id(t), target, _grad_state.enabled)
        hit = state.cache.get(key)
        if hit is not None and hit[1] == t._vc[0]:
            return hit[2]
        out = _to_dtype(t, target)
        state.cache[key] = (t, t._vc[0], out)  # holds t, so its id cannot be reused meanwhile
        return out
    return _to_dtype(t, target)


def autocast_args(op: str, *args) -> tuple:
    """The arguments of ``op`` cast as the autocast policy says (a tuple, in order); call it only
    when ``state.on``. Non-Tensors, ``None`` and float64 Tensors pass through unchanged."""
    kind = POLICIES[_DEVICE].get(op)
    if kind is None:
        return args
    if kind is LOWER:
        target = state.dtype[_DEVICE]
    elif kind is FP32:
        target = dtypes.float32
    elif kind is PROMOTE:
        target = _widest(args)
        if target is None:
            return args
    else:
        raise RuntimeError(_banned_message(op))
    lower = kind is LOWER
    return tuple([_cast_tensor(a, target, lower) for a in args])


def autocast_arg(op: str, x):
    """``autocast_args`` for an op with one Tensor argument: returns it, cast or not."""
    return autocast_args(op, x)[0]


def autocast_excluded(fn, *args, **kwargs):
    """Run ``fn`` with autocast off in this thread, as PyTorch runs a kernel it does not autocast
    (``mv``, ``dot`` on the CPU), even where glassgrad composes it from an op that autocasts."""
    prev = state.on
    state.on = False
    try:
        return fn(*args, **kwargs)
    finally:
        state.on = prev


def _widest(args):
    out = None
    for a in args:
        arr = getattr(a, "_array", None)
        d = dtypes._FROM_NP.get(arr.dtype) if arr is not None else None
        if d is not None and d.is_floating_point:
            out = d if out is None else dtypes.promote_types(out, d)
    return out


def _banned_message(op: str) -> str:
    return (
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
        "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
        "In this case, combine the two layers using "
        "torch.nn.functional.binary_cross_entropy_with_logits\n"
        "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
        f"safe to autocast.\nglassgrad: {op} was called inside a CUDA autocast region."
    )


# --- the state functions of torch.* ------------------------------------------------------------
def _check_device(device_type: str) -> None:
    if device_type not in POLICIES:
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}'\n"
            "glassgrad: autocast supports 'cpu' (and 'cuda' once a GPU backend exists)."
        )


def is_autocast_available(device_type: str) -> bool:
    """True when autocast knows ``device_type`` ('cpu', 'cuda') (``torch.amp.is_autocast_available``)."""
    return device_type in POLICIES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread; no argument means 'cuda', as in
    PyTorch (``torch.is_autocast_enabled``)."""
    device_type = "cuda" if device_type is None else device_type
    _check_device(device_type)
    return state.enabled[device_type]


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` in this thread (``torch.set_autocast_enabled``)."""
    _check_device(device_type)
    state.enabled[device_type] = bool(enabled)
    state.on = state.enabled[_DEVICE]


def get_autocast_dtype(device_type: str) -> dtypes.dtype:
    """The lower-precision dtype autocast uses on ``device_type``: bfloat16 on 'cpu', float16 on
    'cuda' unless changed (``torch.get_autocast_dtype``)."""
    _check_device(device_type)
    return state.dtype[device_type]


def set_autocast_dtype(device_type: str, dtype: dtypes.dtype) -> None:
    """Set the lower-precision dtype of ``device_type`` (``torch.set_autocast_dtype``)."""
    _check_device(device_type)
    state.dtype[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether casts of parameters are cached inside autocast (``torch.is_autocast_cache_enabled``)."""
    return state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn the cache of parameter casts on or off (``torch.set_autocast_cache_enabled``)."""
    state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached parameter casts (``torch.clear_autocast_cache``)."""
    state.cache.clear()


def autocast_increment_nesting() -> int:
    """Count one more entered autocast region; returns the depth (``torch.autocast_...``)."""
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting() -> int:
    """Count one region fewer; returns the depth, 0 when the outermost one exits."""
    state.nesting -= 1
    return state.nesting


class autocast:
    """Context manager and decorator running a region in mixed precision (``torch.autocast``).

    Inside, the ops of the device's policy run in ``dtype`` (matmul, linear, conv...) or in
    float32 (losses...); see the module docstring. ``device_type`` is 'cpu' or 'cuda'; ``dtype``
    defaults to ``get_autocast_dtype(device_type)`` (bfloat16 on the CPU). Regions nest and
    ``enabled=False`` turns autocast off inside one. The state is thread-local.

    Raises ValueError when ``device_type`` is not a str and RuntimeError for an unknown device.
    Warns and disables for a dtype other than float16/bfloat16, and for 'cuda' without CUDA.

    Example::

        >>> with glassgrad.autocast("cpu"):
        ...     y = glassgrad.nn.Linear(4, 2)(glassgrad.randn(3, 4))
        >>> y.dtype
        glassgrad.bfloat16
    """

    def __init__(self, device_type: str, dtype: dtypes.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(  # noqa: TRY004 - PyTorch's exception type
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = state.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda" and not _cuda_available():
                warn_user(
                    "CUDA is not available or torch_xla is imported. Disabling autocast.\n"
                    "glassgrad: there is no GPU backend yet; use glassgrad.autocast('cpu').",
                    stacklevel=2,
                )
                enabled = False
            elif self.fast_dtype not in _SUPPORTED[device_type]:
                name = device_type.upper()
                warn_user(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, _SUPPORTED[device_type]))
                    + f" currently.\nglassgrad: got dtype={self.fast_dtype}.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = bool(enabled)
        self._prev: list = []

    def __enter__(self):
        self._prev.append((state.cache_enabled, state.enabled[self.device],
                           state.dtype[self.device]))
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        state.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        cache_enabled, enabled, dtype = self._prev.pop()
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dtype)
        state.cache_enabled = cache_enabled
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _cuda_available() -> bool:
    from .. import cuda

    return cuda.is_available()


def _cast(value, device_type: str, dtype):
    """Floating, non-float64 Tensors inside ``value`` (nested lists, tuples, dicts) cast to
    ``dtype``; everything else unchanged (``torch.amp.autocast_mode._cast``)."""
    if getattr(value, "_array", None) is not None:
        return _cast_tensor(value, dtype, False) if device_type == _DEVICE else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: dtypes.dtype | None = None):
    """Decorate the ``forward`` of an ``autograd.Function`` for autocast
    (``torch.amp.custom_fwd``): with ``cast_inputs``, inside an autocast region the floating Tensor
    arguments are cast to it and forward runs with autocast off; without, forward runs in the
    current state. Records the state for ``custom_bwd``. ValueError when ``device_type`` is not a
    str."""
    if not isinstance(device_type, str):
        raise ValueError(  # noqa: TRY004 - PyTorch's exception type
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate the ``backward`` of an ``autograd.Function`` so it runs in the autocast state its
    forward ran in (``torch.amp.custom_bwd``). ValueError when ``device_type`` is not a str."""
    if not isinstance(device_type, str):
        raise ValueError(  # noqa: TRY004 - PyTorch's exception type
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
