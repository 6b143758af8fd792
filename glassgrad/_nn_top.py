"""torch's top-level nn functions (``torch.batch_norm``, ``torch.layer_norm``, ``torch.dropout``,
``torch.kl_div``, ...; issue 15, lane tnn) with torch's top-level signatures, which differ from
``nn.functional``'s: a ``train`` flag instead of ``training``, ``cudnn_enabled`` flags (accepted,
no meaning on CPU), an int ``reduction`` (0 none, 1 mean, 2 sum), ``embedding(weight, indices)``.
Each forwards to the ``nn.functional`` implementation, so values, gradients and errors are its."""

from __future__ import annotations

import warnings

from .nn import functional as F
from .nn._functional_dropout import _feature_dropout
from .nn._functional_norm import instance_norm_unchecked

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction) -> str:
    if isinstance(reduction, str):
        return reduction
    # NOTE: torch's kernels reduce for 1 (mean) and 2 (sum) and leave any other int unreduced
    return _REDUCTIONS[int(reduction)] if reduction in (1, 2) else "none"


def _tensor_args(op: str, **named) -> None:
    """torch's TypeError for an optional Tensor argument given as something else (an array)."""
    for name, (position, value) in named.items():
        if value is not None and not hasattr(value, "_array"):
            kind = type(value)
            what = kind.__name__ if kind.__module__ == "builtins" else \
                f"{kind.__module__}.{kind.__name__}"
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {what}")


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """``torch.batch_norm``: ``F.batch_norm`` with torch's top-level argument order."""
    from .nn._functional_layers import check_channel_args

    check_channel_args(input, running_mean=running_mean, running_var=running_var, weight=weight,
                       bias=bias)
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    """``torch.instance_norm``: ``F.instance_norm`` with torch's top-level argument order."""
    _tensor_args("instance_norm", weight=(2, weight), bias=(3, bias), running_mean=(4, running_mean),
                 running_var=(5, running_var))
    # NOTE: without F.instance_norm's spatial-size check, which torch's Python layer adds
    return instance_norm_unchecked(input, running_mean, running_var, weight, bias,
                                   use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``torch.layer_norm`` (``F.layer_norm`` plus torch's ignored ``cudnn_enable``)."""
    _tensor_args("layer_norm", weight=(3, weight), bias=(4, bias))
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``torch.group_norm`` (``F.group_norm`` plus torch's ignored ``cudnn_enabled``)."""
    _tensor_args("group_norm", weight=(3, weight), bias=(4, bias))
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``torch.rms_norm`` (``F.rms_norm``)."""
    _tensor_args("rms_norm", weight=(3, weight))
    return F.rms_norm(input, normalized_shape, weight, eps)


def dropout(input, p, train):
    """``torch.dropout(input, p, train)``: ``F.dropout``, same masks after the same seed."""
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    """In-place ``torch.dropout``."""
    return F.dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """``torch.feature_dropout``: one mask value per (N, C) channel of (N, C, ...)."""
    return _feature_dropout(input, p, train, 2)


def feature_dropout_(input, p, train):
    """In-place ``torch.feature_dropout``."""
    return _feature_dropout(input, p, train, 2, inplace=True)


def alpha_dropout(input, p, train):
    """``torch.alpha_dropout(input, p, train)`` (``F.alpha_dropout``)."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """In-place ``torch.alpha_dropout``."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """``torch.feature_alpha_dropout(input, p, train)`` (``F.feature_alpha_dropout``)."""
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """In-place ``torch.feature_alpha_dropout``."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def bilinear(input1, input2, weight, bias=None):
    """``torch.bilinear`` (``F.bilinear``)."""
    return F.bilinear(input1, input2, weight, bias)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """``torch.binary_cross_entropy_with_logits``: int ``reduction``, ``pos_weight`` 4th; shapes
    that differ get torch's broadcast errors (this one has no F's size check)."""
    _tensor_args("binary_cross_entropy_with_logits", input=(1, input), target=(2, target),
                 weight=(3, weight), pos_weight=(4, pos_weight))
    if hasattr(input, "shape") and hasattr(target, "shape") and input.shape != target.shape:
        from .ops._forward_errors import broadcast_shapes

        op = "binary_cross_entropy_with_logits"
        shape = broadcast_shapes(op, input.shape, target.shape)
        small = input.shape if tuple(input.shape) != tuple(shape) else target.shape
        raise RuntimeError(f"output with shape {list(small)} doesn't match the broadcast shape "
                           f"{list(shape)}\nglassgrad: {op} takes input and target of one shape; "
                           f"got {list(input.shape)} and {list(target.shape)}")
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(
        reduction), pos_weight=pos_weight)


def celu(input, alpha=1.0):
    """``torch.celu`` (``F.celu``)."""
    return F.celu(input, alpha)


def celu_(input, alpha=1.0):
    """In-place ``torch.celu``."""
    return F.celu(input, alpha, inplace=True)


def selu(input):
    """``torch.selu`` (``F.selu``)."""
    return F.selu(input)


def selu_(input):
    """In-place ``torch.selu``."""
    return F.selu(input, inplace=True)


def threshold(input, threshold, value):
    """``torch.threshold``: ``value`` where ``input <= threshold`` (``F.threshold``)."""
    return F.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place ``torch.threshold``."""
    return F.threshold(input, threshold, value, inplace=True)


def relu_(input):
    """In-place ``torch.relu``."""
    return F.relu_(input)


def hardshrink(input, lambd=0.5):
    """``torch.hardshrink`` (``F.hardshrink``), also ``Tensor.hardshrink``."""
    return F.hardshrink(input, lambd)


def prelu(input, weight):
    """``torch.prelu`` (``F.prelu``), also ``Tensor.prelu``."""
    return F.prelu(input, weight)


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd``: ``F.pad(mode='constant')`` (negative pads crop)."""
    return F.pad(input, pad, "constant", value)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices)``: rows of ``weight`` (note the order, and
    ``padding_idx=-1`` meaning none, as torch's top level has it)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.cosine_embedding_loss`` (int ``reduction``)."""
    _tensor_args("cosine_embedding_loss", input1=(1, input1), input2=(2, input2),
                 target=(3, target))
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """``torch.hinge_embedding_loss`` (int ``reduction``)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction=1, log_target=False):
    """``torch.kl_div`` (int ``reduction``; 1 is an elementwise mean, as torch's top level, which
    gives no warning about 'batchmean')."""
    _tensor_args("kl_div", input=(1, input), target=(2, target))
    if any(t._array.dtype.kind in "biu" for t in (input, target)):
        raise RuntimeError(f"kl_div: Integral inputs not supported.\nglassgrad: kl_div got "
                           f"{input.dtype} and {target.dtype}; convert them with .float()")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.margin_ranking_loss`` (int ``reduction``)."""
    _tensor_args("margin_ranking_loss", input1=(1, input1), input2=(2, input2),
                 target=(3, target))
    from .nn._functional_loss import _margin_ranking

    return _margin_ranking(input1, input2, target, margin, _reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss``: every argument required, int ``reduction``."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction=1):
    """``torch.triplet_margin_loss`` (int ``reduction``)."""
    _tensor_args("triplet_margin_loss", anchor=(1, anchor), positive=(2, positive),
                 negative=(3, negative))
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """``torch.convolution``: ``conv{1,2,3}d`` or ``conv_transpose{1,2,3}d`` by ``weight``'s dims
    and ``transposed``, every argument required."""
    _tensor_args("convolution", input=(1, input), weight=(2, weight), bias=(3, bias))
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(
            f"convolution: expected a 3-D, 4-D or 5-D weight, but got {list(weight.shape)}"
        )
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "F", "warnings")]


def _attach_methods(tensor_cls) -> None:
    """Tensor.hardshrink and Tensor.prelu, as torch has them."""
    for name in ("hardshrink", "prelu"):
        setattr(tensor_cls, name, globals()[name])
