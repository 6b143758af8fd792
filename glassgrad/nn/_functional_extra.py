"""``torch.nn.functional``'s remaining layer functions (issue 16, lane grid): ``conv_tbc`` (also
``torch.conv_tbc``), ``gumbel_softmax``, ``upsample_bilinear``, and ``pdist`` (torch's
``F.pdist`` is ``torch.pdist``). Composites: derivatives of every order come from the ops.
"""

from __future__ import annotations


from .._ops_numeric import pdist
from ..ops._names import scalar_type
from .._user_warning import warn_user

__all__ = ["conv_tbc", "gumbel_softmax", "pdist", "upsample_bilinear"]


def conv_tbc(input, weight, bias, pad: int = 0):
    """1-D convolution over time of ``input`` (T, B, C_in) with ``weight`` (K, C_in, C_out) and
    ``bias`` (C_out,), ``pad`` zeros on both ends of T: output (T + 2 pad - K + 1, B, C_out)
    (``torch.conv_tbc``; a negative ``pad`` trims). RuntimeError with torch's messages for
    wrong ranks, channel counts or mixed dtypes.

    Example::

        >>> conv_tbc(glassgrad.randn(5, 2, 3), glassgrad.randn(3, 3, 4), glassgrad.zeros(4)).shape
        glassgrad.Size([3, 2, 4])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    t, b, c = input.shape
    k, c_in, c_out = weight.shape
    if c != c_in:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor\n"
                           f"glassgrad: input {list(input.shape)}, weight {list(weight.shape)}")
    if bias.shape[0] != c_out:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).\n"
                           f"glassgrad: bias {list(bias.shape)}, weight {list(weight.shape)}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{scalar_type(input.dtype)} and {scalar_type(weight.dtype)}")
    pad = int(pad)
    t_out = t + 2 * pad - k + 1
    if t_out < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t_out}: "
                           f"[{t_out}, {b}, {c_out}]")
    from ._functional_layers import pad as _pad

    # NOTE: per tap, only the rows that meet real input, then zero rows added around the
    # product: padding the input instead would multiply zeros by an Inf/NaN weight (NaN) where
    # torch's kernel never reads them
    out = None
    for j in range(k):
        lo, hi = max(0, pad - j), min(t_out, t + pad - j)
        if hi <= lo:
            continue
        part = input[lo + j - pad: hi + j - pad].matmul(weight[j])
        part = _pad(part, (0, 0, 0, 0, lo, t_out - hi))
        out = part if out is None else out + part
    if out is None:  # no tap meets the input: bias only (and a zero gradient for the rest)
        out = (input[:0].sum() + weight[:0].sum()).expand(t_out, b, c_out)  # sums of nothing
    return out + bias


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1):
    """A sample of the Gumbel-softmax distribution over ``dim`` of ``logits`` at temperature
    ``tau`` (``torch.nn.functional.gumbel_softmax``); with ``hard=True`` the one-hot of the
    sample's argmax, whose gradient is the soft sample's (straight through). The Gumbel noise
    is ``-log(Exponential(1))`` from the default generator, the same stream as torch's for the
    same seed. ``eps`` is deprecated and ignored (a warning when changed), as in torch."""
    if eps != 1e-10:
        warn_user("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    from .._factories import empty_like, zeros_like

    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    if logits.dim() == 0:  # NOTE: a 0-d sample is its own one-hot
        y_hard = zeros_like(logits) + 1
    else:
        y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def deprecated_upsample(name: str) -> None:
    """torch's warning for the deprecated ``upsample*`` functions, pointed at the caller's
    caller (the user's line)."""
    warn_user(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
              "instead.", stacklevel=3)


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear',
    align_corners=True)`` with torch's deprecation warning
    (``torch.nn.functional.upsample_bilinear``)."""
    from ._functional_pool import interpolate

    deprecated_upsample("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
