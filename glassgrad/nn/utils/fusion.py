"""Folding an eval-mode batch norm into the convolution or linear layer before it
(``torch.nn.utils.fusion``): ``bn(conv(x)) == fused_conv(x)`` with the running statistics and
the affine parameters folded into the weight and bias. Used before export and for inference."""

from __future__ import annotations

import copy

from ..._factories import ones_like, zeros_like
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer, bn) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _fused(w: Tensor, b: Tensor, w_dtype, b_dtype, w_requires_grad: bool,
           b_requires_grad: bool) -> tuple[Parameter, Parameter]:
    return (Parameter(w.to(dtype=w_dtype), w_requires_grad),
            Parameter(b.to(dtype=b_dtype), b_requires_grad))


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` whose output equals ``bn(conv(x))`` for eval-mode ``bn``
    (``torch.nn.utils.fusion.fuse_conv_bn_eval``); ``transpose`` for a ConvTranspose (output
    channels on dim 1 of its weight). AssertionError when either is in training mode or ``bn``
    tracks no running statistics."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """``(weight, bias)`` Parameters of the convolution fused with a batch norm of running
    mean ``bn_rm``, variance ``bn_rv``, ``bn_eps`` and affine ``bn_w``/``bn_b`` (None: 1 and 0)
    (``torch.nn.utils.fusion.fuse_conv_bn_weights``); dtypes are the convolution's, and the
    results require grad as ``conv_w`` / ``conv_b`` do (a missing bias: not)."""
    b_dtype = conv_w.dtype if conv_b is None else conv_b.dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = (bn_rv + bn_eps).rsqrt()
    per_channel = [1, -1] if transpose else [-1, 1]
    scale = (bn_w * inv_std).reshape(per_channel + [1] * (conv_w.dim() - 2))
    return _fused(conv_w * scale, (conv_b - bn_rm) * inv_std * bn_w + bn_b, conv_w.dtype, b_dtype,
                  conv_w.requires_grad, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose output equals ``bn(linear(x))`` for eval-mode ``bn`` with
    ``num_features`` equal to ``out_features`` or 1 (``torch.nn.utils.fusion.
    fuse_linear_bn_eval``). AssertionError otherwise, or in training mode."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    # bn normalises the channel dim, which must broadcast against linear's output features
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    _check_eval(linear, bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """``(weight, bias)`` Parameters of the linear layer fused with a batch norm
    (``torch.nn.utils.fusion.fuse_linear_bn_weights``); dtypes are the linear layer's."""
    b_dtype = linear_w.dtype if linear_b is None else linear_b.dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    return _fused(linear_w * scale.unsqueeze(-1).to(dtype=linear_w.dtype),
                  (linear_b - bn_rm) * scale + bn_b, linear_w.dtype, b_dtype,
                  linear_w.requires_grad, linear_b.requires_grad)
