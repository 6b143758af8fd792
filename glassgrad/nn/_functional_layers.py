"""Layer functions of ``glassgrad.nn.functional``: linear, normalisation, embedding and
distances (``torch.nn.functional``; dropout is in _functional_dropout.py, pad in
_functional_pad.py). Composed from primitives: no derivative code."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..amp.autocast import autocast_args
from ..amp.autocast import state as _autocast
from ..autograd.grad_mode import no_grad
from ..autograd.node_names import named_as
from ..ops._names import scalar_type
from ..ops._util import half, is_tensor
from ..ops.elementwise import rsqrt, where
from ..ops.fused import Linear
from ..ops.fused_norm import BatchNorm
from ..ops.linalg import matmul
from ..ops.reduction import mean, norm
from ..ops.scalar import constant
from ..tensor import Tensor
from ._functional_pad import pad  # noqa: F401 - in this module's __all__ (nn.functional)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: ``(*, in) -> (*, out)`` (``torch.nn.functional.linear``)."""
    if _autocast.on:
        input, weight, bias = autocast_args("linear", input, weight, bias)
    if bias is not None and _fusable(input, weight, bias):  # one op (ops/fused.py)
        if input.ndim == 2:
            return Linear.apply(input, weight, bias)
        n_in, n_out = weight.shape[1], weight.shape[0]
        lead = tuple(input.shape[:-1])
        return Linear.apply(input.reshape(-1, n_in), weight, bias).reshape(*lead, n_out)
    if bias is not None:
        _check_addmm_dtypes(input, weight, bias)
    out = matmul(input, weight.t() if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def _check_addmm_dtypes(input, weight, bias) -> None:
    """PyTorch's linear with a bias is addmm: the bias ("self") and the input ("mat1") must
    have the weight's ("mat2") dtype. (Without a bias, matmul raises its own message.)"""
    w = weight._array.dtype
    for name, t in (("self", bias), ("mat1", input)):
        if t._array.dtype != w:
            raise RuntimeError(
                f"{name} and mat2 must have the same dtype, but got {scalar_type(t.dtype)} and "
                f"{scalar_type(weight.dtype)}\nglassgrad: linear of a {list(input.shape)} "
                f"{input.dtype} input with a {weight.dtype} weight and a {bias.dtype} bias; "
                f"convert the {'bias' if name == 'self' else 'input'} with .to(weight.dtype) (or "
                "the module with .double()/.float())."
            )


def _fusable(input, weight, bias, feature_dim: int = -1) -> bool:
    """The fused ops' conditions: plain float arrays of one dtype; for linear (``feature_dim``
    -1) a 2-D weight matching the features, for batch norm (1) 1-D weight and bias, one per
    channel."""
    x, w, b = input._array, weight._array, bias._array
    if not (type(x) is np.ndarray and type(w) is np.ndarray and type(b) is np.ndarray
            and x.dtype.kind == "f" and x.dtype == w.dtype == b.dtype and x.ndim >= 1):
        return False
    if feature_dim == 1:
        return x.ndim >= 2 and w.shape == b.shape == x.shape[1:2]
    return w.ndim == 2 and x.shape[-1] == w.shape[1] and b.shape == w.shape[:1]


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = x1 @ weight[o] @ x2 + bias[o]`` for ``x1 (*, in1)``, ``x2 (*, in2)``,
    ``weight (out, in1, in2)`` (``torch.nn.functional.bilinear``)."""
    if _autocast.on:
        input1, input2, weight, bias = autocast_args("bilinear", input1, input2, weight, bias)
    out_f, in1, in2 = weight.shape
    if input1.ndim != input2.ndim or not input1.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input sizes do not match weight: input1 {list(input1.shape)}, input2 "
            f"{list(input2.shape)}, weight {list(weight.shape)}"
        )
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out*in2) -> (N, out, in2), then contract in2 with x2
    t = matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(lead + (out_f,))


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _widen(*tensors) -> list:
    """The float16/bfloat16 ones among ``tensors`` (None passes) as float32, differentiably: a
    16-bit normalisation is computed in float32 and its result rounded once to the input's dtype,
    as PyTorch's kernels do, float32 parameters with a 16-bit input included (NOTE [16-bit
    accumulation] in ops/_util.py)."""
    return [t.float() if is_tensor(t) and half(t._array.dtype) else t for t in tensors]


def _half_input(input) -> bool:
    return is_tensor(input) and half(input._array.dtype)


def _check_mixed(op, input, *params) -> None:
    """PyTorch's CPU rule for normalisation parameters of another dtype than the input: only a
    float16/bfloat16 input with float32 parameters (RuntimeError otherwise)."""
    dt = input._array.dtype
    given = [p for p in params if is_tensor(p)]
    if all(p._array.dtype == dt for p in given):
        return
    found = ", ".join(sorted({str(p.dtype) for p in given}))
    hint = (f"\nglassgrad: {op} of a {input.dtype} input with {found} parameters; PyTorch mixes "
            "only a float16/bfloat16 input with float32 parameters. Convert them with "
            ".to(input.dtype).")
    if any(p._array.dtype != np.float32 for p in given):
        raise RuntimeError(
            "mixed dtype (CPU): expect parameter to have scalar type of Float" + hint)
    if not half(dt):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype." + hint)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalise ``(N, C, *)`` per channel with batch statistics (``training``; the running
    statistics are then updated in place with ``momentum`` and the unbiased variance) or with the
    running statistics (``torch.nn.functional.batch_norm``). ValueError for one value per channel
    in training. A 16-bit input gives its own dtype, as in PyTorch."""
    if training and is_tensor(input) and input.ndim >= 2:
        _verify_batch_size(input)
    elif training and is_tensor(input) and input.ndim == 0:  # torch's size check indexes size[0]
        raise IndexError("tuple index out of range\nglassgrad: batch_norm needs an (N, C, *) "
                         f"input; got a 0-d {input.dtype} tensor")
    check_channel_args(input, running_mean=running_mean, running_var=running_var, weight=weight,
                       bias=bias)
    if is_tensor(input) and input.is_floating_point():
        _check_mixed("batch_norm", input, weight, bias, running_mean, running_var)
    if _half_input(input):  # the running statistics keep their dtype: updated in place
        stats = (running_mean, running_var) if training else _widen(running_mean, running_var)
        return _batch_norm(*_widen(input), *stats, *_widen(weight, bias), training, momentum,
                           eps).to(input.dtype)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def check_channel_args(input, **named) -> None:
    """torch's batch_norm check: each per-channel tensor holds C = input.shape[1] values (0 for
    an input of under two dims); torch skips it for an empty input."""
    if not is_tensor(input) or input.numel() == 0:
        return
    c = input.shape[1] if input.ndim >= 2 else 0
    for name, t in named.items():
        if is_tensor(t) and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _verify_batch_size(input) -> None:
    c = input.shape[1]
    if c and input.numel() // c == 1:  # NOTE: an empty batch is allowed, as in PyTorch
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {input.shape}"
        )


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    ndim = input.ndim
    if ndim < 2:
        raise ValueError(f"expected 2D or more input (got {ndim}D input)")
    c = input.shape[1]
    shape = (1, c) + (1,) * (ndim - 2)
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        scale = rsqrt(running_var + eps)
        if weight is not None:
            scale = scale * weight
        shift = -running_mean * scale
        if bias is not None:
            shift = shift + bias
        return named_as(input * scale.reshape(shape) + shift.reshape(shape),
                        "NativeBatchNormBackward0", input)
    dims = (0,) + tuple(range(2, ndim))
    n = input.numel() // c if c else 0
    if n and weight is not None and bias is not None and _fusable(input, weight, bias, 1):
        # one op (NOTE [Fused batch norm] in ops/fused_norm.py); same values as below
        out, batch_mean, batch_var = BatchNorm.apply(input, weight, bias, dims=dims, eps=eps)
    else:
        batch_mean = mean(input, dims, keepdim=True)
        centred = input - batch_mean
        batch_var = mean(centred * centred, dims, keepdim=True)
        out = named_as(_affine(centred * rsqrt(batch_var + eps), weight, bias, shape),
                       "NativeBatchNormBackward0", input)
    if running_mean is not None or running_var is not None:
        if _plain_stats(running_mean, running_var, batch_mean, batch_var):
            _update_running(running_mean, batch_mean._array.reshape(c), momentum)
            var = batch_var._array.reshape(c)
            _update_running(running_var, var * constant(n / (n - 1), var.dtype), momentum)
            return out
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1.0 - momentum).add_(
                    batch_mean.reshape(c).to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = batch_var.reshape(c) * (n / (n - 1))
                running_var.mul_(1.0 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    return out


def _plain_stats(running_mean, running_var, *stats) -> bool:
    """Both running statistics given, as plain NumPy-backed tensors outside any graph (then
    ``_update_running`` applies; else the Tensor ops above, e.g. inside ``vmap``)."""
    if running_mean is None or running_var is None:
        return False
    for t in (running_mean, running_var, *stats):
        if type(t._array) is not np.ndarray:
            return False
    return not (running_mean._requires_grad or running_var._requires_grad)


def _update_running(buf, stat, momentum: float) -> None:
    """``buf.mul_(1 - momentum).add_(stat.to(buf.dtype) * momentum)`` on the arrays (the same
    kernels), without dispatching four Tensor ops per statistic. As PyTorch's batch-norm kernel,
    which updates the running statistics in place, it leaves their version counter unchanged; a
    read-only, inference-mode or diagnosed buffer takes ``Tensor._write`` (its checks, errors)."""
    arr = buf._array
    scaled = stat.astype(arr.dtype, copy=False) * constant(momentum, arr.dtype)
    if buf._vc.__class__ is list and len(buf._vc) == 1 and arr.flags.writeable:
        np.multiply(arr, constant(1.0 - momentum, arr.dtype), out=arr)
        np.add(arr, scaled, out=arr)
        return
    buf._write(arr * constant(1.0 - momentum, arr.dtype), "mulscalar")
    buf._write(buf._array + scaled, "add")


def scale_shift(x, mean, rstd, weight, bias):
    """``(x - mean) * rstd * weight + bias`` in PyTorch's kernel form ``x * a + (bias - mean *
    a)`` with ``a = rstd * weight``: the same rounding, and a non-finite weight gives torch's
    NaN (inf - inf) where the centred form gives +-inf. Arguments broadcast against ``x``."""
    scale = rstd if weight is None else rstd * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    return x * scale + shift


def _normalize_last(x, dims, eps):
    mu = mean(x, dims, keepdim=True)
    centred = x - mu
    return centred * rsqrt(mean(centred * centred, dims, keepdim=True) + eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift elementwise
    (``torch.nn.functional.layer_norm``). RuntimeError when the trailing shape differs."""
    if _autocast.on:
        input, weight, bias = autocast_args("layer_norm", input, weight, bias)
    if not is_tensor(input):
        raise TypeError(f"layer_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    _check_normalized_shape(normalized_shape)
    if input.is_floating_point():
        _check_mixed("layer_norm", input, weight, bias)
    if _half_input(input):
        return layer_norm(*_widen(input), normalized_shape, *_widen(weight, bias), eps).to(
            input.dtype)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
            f"{list(input.shape)}"
        )
    _check_affine_shape(normalized_shape, weight=weight, bias=bias)
    out = _normalize_last(input, tuple(range(input.ndim - k, input.ndim)), eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return named_as(out, "NativeLayerNormBackward0", input)


def _check_affine_shape(normalized_shape, **affine) -> None:
    """torch's check that layer_norm's/rms_norm's weight and bias have ``normalized_shape``."""
    for name, t in affine.items():
        if is_tensor(t) and tuple(t.shape) != tuple(normalized_shape):
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(normalized_shape)}")


def _check_normalized_shape(normalized_shape: tuple) -> None:
    if not normalized_shape:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing dims (``torch.nn.functional.rms_norm``)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(tuple(normalized_shape))
    _check_normalized_shape(tuple(normalized_shape))
    if is_tensor(input) and input.ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.ndim}")
    _check_affine_shape(tuple(normalized_shape), weight=weight)
    if eps is None:
        eps = float(np.finfo(input._array.dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    if _half_input(input):
        return rms_norm(*_widen(input), normalized_shape, *_widen(weight), eps).to(input.dtype)
    out = input * rsqrt(mean(input * input, dims, keepdim=True) + eps)
    out = out if weight is None else out * weight
    return out if out.dtype == input.dtype else out.to(input.dtype)  # PyTorch's type_as(input)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise ``(N, C, *)`` over each of ``num_groups`` channel groups, then per-channel affine
    (``torch.nn.functional.group_norm``)."""
    if _autocast.on:
        input, weight, bias = autocast_args("group_norm", input, weight, bias)
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of "
            f"shape {list(input.shape)} and num_groups={num_groups}"
        )
    # torch's _verify_batch_size on (N * C / G, G, *spatial): one value per group is refused
    per_group = [n * c // num_groups, num_groups] + list(input.shape[2:])
    if math.prod(per_group[:1] + per_group[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"{per_group}")
    if input.is_floating_point():
        _check_mixed("group_norm", input, weight, bias)
    if _half_input(input):
        return group_norm(*_widen(input), num_groups, *_widen(weight, bias), eps).to(input.dtype)
    grouped = input.reshape(n, num_groups, c // num_groups, input.numel() // max(n * c, 1))
    mu = mean(grouped, (2, 3), keepdim=True)
    centred = grouped - mu
    rstd = rsqrt(mean(centred * centred, (2, 3), keepdim=True) + eps)
    shape = (1, num_groups, c // num_groups, 1)
    w, b = (None if t is None else t.reshape(shape) for t in (weight, bias))
    return named_as(scale_shift(grouped, mu, rstd, w, b).reshape(input.shape),
                    "NativeGroupNormBackward0", input)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    """Rows of ``weight (num_embeddings, dim)`` at integer ``input (*)`` -> ``(*, dim)``; the row
    at ``padding_idx`` gets no gradient; ``max_norm`` renormalises used rows in place
    (``torch.nn.functional.embedding``). ``sparse=True`` makes ``weight.grad`` a sparse COO
    tensor; ``scale_grad_by_freq`` divides each row's gradient by its index's count."""
    if not isinstance(input, Tensor) or input._array.dtype.kind not in "iu":
        name = dtypes.type_name(input.dtype) if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {name} instead (while checking arguments for embedding)"
        )
    idx = input._array
    if is_tensor(weight) and weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D\nglassgrad: embedding takes a (num_embeddings, "
                           f"embedding_dim) weight; got shape {list(weight.shape)}")
    num = weight.shape[0]
    # NOTE: torch checks padding_idx in Python before its kernel checks the indices, and lets
    # padding_idx=0 through unchecked
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += num
        if padding_idx and not 0 <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
    if idx.size and not num:
        raise RuntimeError("index_select(): self indexing axis dim should be positive\nglassgrad: "
                           f"embedding's weight {list(weight.shape)} has no rows to select")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, np.unique(idx), max_norm, norm_type)
    if scale_grad_by_freq or sparse:
        from ..ops.embedding_ops import EmbeddingRows

        return EmbeddingRows.apply(weight, indices=idx, padding_idx=padding_idx,
                                   scale_grad_by_freq=scale_grad_by_freq, num_weights=num,
                                   sparse=sparse)
    out = weight[input]
    if padding_idx is not None and weight.requires_grad:
        out = where((input == padding_idx).unsqueeze(-1), weight.detach()[input], out)
    return named_as(out, "EmbeddingBackward0", weight)


def _renorm_rows(weight, rows, max_norm, norm_type) -> None:
    with no_grad():
        sel = weight[rows]
        norms = norm(sel, norm_type, dim=1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = sel * scale


def one_hot(tensor, num_classes: int = -1):
    """``(*)`` int64 class indices -> ``(*, num_classes)`` int64 one-hot
    (``torch.nn.functional.one_hot``); ``-1`` infers ``max + 1``."""
    if tensor._array.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    idx = tensor._array
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(idx.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, idx[..., None], 1, axis=-1)
    return Tensor._make(out)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``x / max(||x||_p, eps)`` along ``dim`` (``torch.nn.functional.normalize``)."""
    denom = norm(input, p, dim, keepdim=True).clamp_min(eps)
    return input / denom


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``, broadcasting
    (``torch.nn.functional.cosine_similarity``); an integer or bool input is promoted to the
    common dtype, which must be floating (RuntimeError otherwise)."""
    common = dtypes.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_type(common)}")
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    if x1.shape != x2.shape:  # NOTE: torch broadcasts before the norms (b (1, 1) counts 3 times)
        from ..ops.shape import broadcast_tensors

        x1, x2 = broadcast_tensors(x1, x2)
    n1 = norm(x1, 2, dim, keepdim=True).clamp_min(eps)
    n2 = norm(x2, 2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """``||x1 - x2 + eps||_p`` over the last dim (``torch.nn.functional.pairwise_distance``)."""
    return norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


__all__ = [
    "batch_norm",
    "bilinear",
    "cosine_similarity",
    "embedding",
    "group_norm",
    "layer_norm",
    "linear",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "rms_norm",
]
