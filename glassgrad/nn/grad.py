"""``torch.nn.grad``: the gradients of a convolution w.r.t. its input and its weight, as
functions (``conv{1,2,3}d_input``, ``conv{1,2,3}d_weight``). Each differentiates the
convolution itself with ``autograd.grad`` (it is linear in the argument sought, so a zero
stand-in gives the exact gradient), with ``create_graph`` when an argument requires grad, so
these functions are differentiable again."""

from __future__ import annotations

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _conv(nd: int):
    from . import functional as F

    return (F.conv1d, F.conv2d, F.conv3d)[nd - 1]


def _vjp(nd, x, w, wanted, grad_output, stride, padding, dilation, groups):
    from .. import autograd
    from ..autograd.grad_mode import enable_grad

    with enable_grad():
        out = _conv(nd)(x, w, None, stride, padding, dilation, groups)
        create = any(t.requires_grad for t in (x, w, grad_output) if t is not wanted)
        return autograd.grad(out, wanted, grad_output, create_graph=create)[0]


def _grad_fn(nd: int, wrt: str):
    """``conv{nd}d_input`` (``wrt='input'``) or ``conv{nd}d_weight``, torch's signatures."""

    from .._factories import zeros

    def stand_in(size, grad_output):
        return zeros(tuple(size), dtype=grad_output.dtype, requires_grad=True)

    if wrt == "input":
        def conv_grad(input_size, weight, grad_output, stride=1, padding=0, dilation=1,
                      groups=1):
            x = stand_in(input_size, grad_output)
            return _vjp(nd, x, weight, x, grad_output, stride, padding, dilation, groups)
    else:
        def conv_grad(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                      groups=1):
            w = stand_in(weight_size, grad_output)
            return _vjp(nd, input, w, w, grad_output, stride, padding, dilation, groups)

    name = f"conv{nd}d_{wrt}"
    conv_grad.__name__ = conv_grad.__qualname__ = name
    given = "``weight`` and ``grad_output``" if wrt == "input" else "``input`` and ``grad_output``"
    conv_grad.__doc__ = (f"The gradient of ``conv{nd}d`` w.r.t. its {wrt}, of shape "
                         f"``{wrt}_size``, for {given} (``torch.nn.grad.{name}``); the "
                         "convolution's own errors for shapes that do not fit.")
    return conv_grad


conv1d_input, conv2d_input, conv3d_input = (_grad_fn(n, "input") for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_grad_fn(n, "weight") for n in (1, 2, 3))
