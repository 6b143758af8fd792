"""Convolution primitives: ``Convolution``, ``ConvolutionTranspose`` and the two backward kernels
(``ConvolutionBackwardInput``, ``ConvolutionBackwardWeight``), plus ``Im2Col``/``Col2Im``.

NOTE [Convolution layout]: arrays are ``(N, C, *spatial)`` for any number of spatial dims (1, 2,
3); weights are ``(O, C // groups, *kernel)``. ``padding`` is a tuple of ``(lo, hi)`` pairs, one
per spatial dim, so 'same' padding with an even kernel (more on the high side) needs no special
case. The forward is one batched GEMM over a strided window view of the padded input (im2col);
grad-input is the adjoint (GEMM, then col2im: one vectorised add per kernel tap, never a loop
over positions; at stride 1 with enough input channels, a convolution of grad_output instead);
grad-weight is a GEMM contracting positions (per sample, or batch and positions at once).

The three kernels are closed under differentiation, so every order of derivative is again made of
them (double backward for gradient penalties through a conv critic)::

    y  = conv(x, w)            dx = conv_bwd_input(g, w)      dw = conv_bwd_weight(x, g)
    d conv_bwd_input(g, w)  : dg = conv(gg, w)                dw = conv_bwd_weight(gg, g)
    d conv_bwd_weight(x, g) : dx = conv_bwd_input(g, gw)      dg = conv(x, gw)
"""

from __future__ import annotations

import itertools
import math

from ._util import half, widened
from .primitive import Primitive


def out_size(size, kernel, stride, padding, dilation) -> tuple:
    """Output spatial size of a convolution (floor), per dim."""
    return tuple(
        (s + lo + hi - d * (k - 1) - 1) // st + 1
        for s, k, st, (lo, hi), d in zip(size, kernel, stride, padding, dilation)
    )


def fit_padding(size, target, kernel, stride, padding, dilation) -> tuple:
    """``padding`` with ``hi`` lowered (negative crops) so that the output has size ``target``.

    Needed where a transposed conv's ``output_padding`` made its output longer than a forward
    conv maps back: differentiating it convolves that longer tensor to the shorter input."""
    fitted = []
    for s, t, k, st, (lo, hi), d in zip(size, target, kernel, stride, padding, dilation):
        span = s + lo + hi - d * (k - 1) - 1
        fitted.append((lo, hi - max(0, span - (t * st - 1))))
    return tuple(fitted)


def pad(xp, x, padding, value=0):
    """``x`` (N, C, *S) with ``padding`` ((lo, hi), ...) filled with ``value`` (no copy if none);
    a negative ``hi`` crops the end instead (see ``fit_padding``)."""
    if any(hi < 0 for _, hi in padding):
        x = x[(Ellipsis,) + tuple(slice(0, s + min(hi, 0)) for s, (_, hi) in zip(x.shape[2:],
                                                                               padding))]
        padding = tuple((lo, max(hi, 0)) for lo, hi in padding)
    if not any(lo or hi for lo, hi in padding):
        return x
    shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding))
    out = xp.full(shape, value, dtype=x.dtype) if value else xp.zeros(shape, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[2:], padding))] = x
    return out


def windows(xp, x, kernel, stride, dilation, out):
    """Read-only view (N, C, *out, *kernel) of ``x`` (N, C, *S): ``[n, c, o, t] = x[n, c, o*s + t*d]``."""
    st = x.strides
    nd = len(kernel)
    shape = x.shape[:2] + tuple(out) + tuple(kernel)
    strides = (st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd))
               + tuple(st[2 + i] * dilation[i] for i in range(nd)))
    return xp.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)


def im2col(xp, x, kernel, stride, padding, dilation, out, batch_first=True):
    """Contiguous columns of ``x``: (N, C, *kernel, *out), or (C, *kernel, N, *out) when
    ``batch_first`` is False (the layout grad-weight contracts in one GEMM)."""
    view = windows(xp, pad(xp, x, padding), kernel, stride, dilation, out)
    nd = len(kernel)
    outs = tuple(range(2, 2 + nd))
    taps = tuple(range(2 + nd, 2 + 2 * nd))
    order = (0, 1) + taps + outs if batch_first else (1,) + taps + (0,) + outs
    return xp.ascontiguousarray(view.transpose(order))


def col2im(xp, cols, size, kernel, stride, padding, dilation):
    """Adjoint of ``im2col``: sum columns (N, C, *kernel, *out) back into (N, C, *size)."""
    nd = len(kernel)
    out = cols.shape[2 + nd:]
    padded = tuple(s + lo + max(hi, 0) for s, (lo, hi) in zip(size, padding))
    result = xp.zeros(cols.shape[:2] + padded, dtype=cols.dtype)
    if 0 not in out:
        # NOTE: one whole-array add per kernel tap (9 for 3x3), never a loop over positions
        for taps in itertools.product(*(range(k) for k in kernel)):
            dst = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                        for t, d, o, s in zip(taps, dilation, out, stride))
            result[(Ellipsis,) + dst] += cols[(slice(None), slice(None)) + taps]
    if padded != tuple(size):
        crop = tuple(slice(lo, lo + s) for s, (lo, _) in zip(size, padding))
        result = xp.ascontiguousarray(result[(Ellipsis,) + crop])
    return result


def matmul(xp, a, b):
    """``xp.matmul``; 16-bit floats go through float32 (NumPy has no fast half GEMM)."""
    if a.dtype.itemsize == 2:
        return xp.matmul(a.astype(xp.float32), b.astype(xp.float32)).astype(a.dtype)
    return xp.matmul(a, b)


def _conv_forward(xp, x, weight, stride, padding, dilation, groups):
    kernel = weight.shape[2:]
    out = out_size(x.shape[2:], kernel, stride, padding, dilation)
    n, o = x.shape[0], weight.shape[0]
    ck = weight[0].size  # C/G * prod(kernel)
    cols = im2col(xp, x, kernel, stride, padding, dilation, out)
    cols = cols.reshape(n, groups, ck, math.prod(out))
    result = matmul(xp, weight.reshape(groups, o // groups, ck), cols)  # (N, G, O/G, L)
    return result.reshape((n, o) + out)


def _conv_backward_input(xp, grad_output, weight, input_size, stride, padding, dilation, groups):
    full = tuple((d * (k - 1) - lo, d * (k - 1) - hi)
                 for k, d, (lo, hi) in zip(weight.shape[2:], dilation, padding))
    if (all(s == 1 for s in stride) and all(lo >= 0 and hi >= 0 for lo, hi in full)
            and 2 * weight.shape[1] * groups >= weight.shape[0]
            and out_size(grad_output.shape[2:], weight.shape[2:], stride, full, dilation)
            == tuple(input_size)):  # not so with a transposed conv's output_padding
        # NOTE: at stride 1 the adjoint is itself a convolution ("full" padding, flipped kernel,
        # in/out channels swapped per group): one GEMM over a window view of grad_output. It
        # copies O*K values per position where col2im adds C*K (each add ~2x a copy): measured
        # faster when 2*C >= O, slower for few input channels (first layers)
        g, cg = groups, weight.shape[1]
        flipped = weight[(Ellipsis,) + (slice(None, None, -1),) * (weight.ndim - 2)]
        flipped = flipped.reshape((g, weight.shape[0] // g, cg) + weight.shape[2:])
        flipped = xp.ascontiguousarray(flipped.swapaxes(1, 2)).reshape(
            (g * cg, weight.shape[0] // g) + weight.shape[2:])
        return _conv_forward(xp, grad_output, flipped, stride, full, dilation, groups)
    n, o = grad_output.shape[:2]
    out = grad_output.shape[2:]
    kernel = weight.shape[2:]
    ck = weight[0].size
    weight_t = weight.reshape(groups, o // groups, ck).transpose(0, 2, 1)  # (G, C/G*K, O/G)
    cols = matmul(xp, weight_t, grad_output.reshape(n, groups, o // groups, math.prod(out)))
    cols = cols.reshape((n, weight.shape[1] * groups) + kernel + out)
    return col2im(xp, cols, input_size, kernel, stride, padding, dilation)


def _conv_backward_weight(xp, x, grad_output, weight_size, stride, padding, dilation, groups):
    n, o = grad_output.shape[:2]
    out = grad_output.shape[2:]
    kernel = weight_size[2:]
    ck, positions = math.prod(weight_size[1:]), math.prod(out)
    og = o // groups
    if og * ck <= 16 * positions:
        # NOTE: few weights per position: one GEMM per sample on the forward's layout, then a
        # sum over the batch, beats transposing both operands for a single GEMM (measured)
        cols = im2col(xp, x, kernel, stride, padding, dilation, out)
        cols = cols.reshape(n, groups, ck, positions)
        grad = grad_output.reshape(n, groups, og, positions)
        return matmul(xp, grad, cols.swapaxes(2, 3)).sum(axis=0).reshape(weight_size)
    cols = im2col(xp, x, kernel, stride, padding, dilation, out, batch_first=False)
    cols = cols.reshape(groups, ck, n * positions)
    grad = grad_output.reshape(n, groups, og, positions).transpose(1, 2, 0, 3)
    grad = grad.reshape(groups, og, n * positions)  # (G, O/G, N*L): one GEMM over N*L
    return matmul(xp, grad, cols.transpose(0, 2, 1)).reshape(weight_size)


def _add_bias(result, bias):
    if bias:
        result += bias[0].reshape((-1,) + (1,) * (result.ndim - 2))
    return result


def _bias_grad(grad, needs_input_grad):
    if len(needs_input_grad) < 3:
        return ()
    if not needs_input_grad[2]:  # no bias, or one without grad (an edge either way)
        return (None,)
    return (grad.sum(dim=(0,) + tuple(range(2, grad.ndim))),)


class Convolution(Primitive):
    """``conv(x, weight) + bias`` (PyTorch's ``ConvolutionBackward0``); bias is optional."""

    node_name = "ConvolutionBackward0"
    saves = ("x", "weight")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, weight, *bias, stride, padding, dilation, groups):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(Convolution.forward, xp, x, weight, *bias, stride=stride,
                           padding=padding, dilation=dilation, groups=groups)
        return _add_bias(_conv_forward(xp, x, weight, stride, padding, dilation, groups), bias)

    @staticmethod
    def backward(grad, x, weight, *, stride, padding, dilation, groups, needs_input_grad):
        attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
        grad_x = grad_weight = None
        if needs_input_grad[0]:
            grad_x = ConvolutionBackwardInput.apply(grad, weight, input_size=x.shape[2:], **attrs)
        if needs_input_grad[1]:
            grad_weight = ConvolutionBackwardWeight.apply(x, grad, weight_size=weight.shape,
                                                          **attrs)
        return (grad_x, grad_weight) + _bias_grad(grad, needs_input_grad)


class ConvolutionTranspose(Primitive):
    """Transposed convolution ``conv_bwd_input(x, weight) + bias``; weight (C_in, C_out/G, *k)."""

    node_name = "ConvolutionBackward0"
    saves = ("x", "weight")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, weight, *bias, output_size, stride, padding, dilation, groups):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(ConvolutionTranspose.forward, xp, x, weight, *bias,
                           output_size=output_size, stride=stride, padding=padding,
                           dilation=dilation, groups=groups)
        result = _conv_backward_input(xp, x, weight, output_size, stride, padding, dilation,
                                      groups)
        return _add_bias(result, bias)

    @staticmethod
    def backward(grad, x, weight, *, output_size, stride, padding, dilation, groups,
                 needs_input_grad):
        attrs = {"stride": stride, "dilation": dilation, "groups": groups}
        padding = fit_padding(grad.shape[2:], x.shape[2:], weight.shape[2:], stride, padding,
                              dilation)
        grad_x = grad_weight = None
        if needs_input_grad[0]:
            grad_x = Convolution.apply(grad, weight, padding=padding, **attrs)
        if needs_input_grad[1]:
            grad_weight = ConvolutionBackwardWeight.apply(grad, x, weight_size=weight.shape,
                                                          padding=padding, **attrs)
        return (grad_x, grad_weight) + _bias_grad(grad, needs_input_grad)


class ConvolutionBackwardInput(Primitive):
    """Gradient of a convolution w.r.t. its input: a transposed convolution of ``grad_output``."""

    saves = ("grad_output", "weight")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, grad_output, weight, *, input_size, stride, padding, dilation, groups):
        if half(grad_output.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(ConvolutionBackwardInput.forward, xp, grad_output, weight,
                           input_size=input_size, stride=stride, padding=padding,
                           dilation=dilation, groups=groups)
        return _conv_backward_input(xp, grad_output, weight, input_size, stride, padding,
                                    dilation, groups)

    @staticmethod
    def backward(grad, grad_output, weight, *, input_size, stride, padding, dilation, groups,
                 needs_input_grad):
        padding = fit_padding(input_size, grad_output.shape[2:], weight.shape[2:], stride,
                              padding, dilation)
        attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
        grad_grad_output = grad_weight = None
        if needs_input_grad[0]:
            grad_grad_output = Convolution.apply(grad, weight, **attrs)
        if needs_input_grad[1]:
            grad_weight = ConvolutionBackwardWeight.apply(grad, grad_output,
                                                          weight_size=weight.shape, **attrs)
        return grad_grad_output, grad_weight


class ConvolutionBackwardWeight(Primitive):
    """Gradient of a convolution w.r.t. its weight: one GEMM over batch and positions."""

    saves = ("x", "grad_output")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, grad_output, *, weight_size, stride, padding, dilation, groups):
        if half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(ConvolutionBackwardWeight.forward, xp, x, grad_output,
                           weight_size=weight_size, stride=stride, padding=padding,
                           dilation=dilation, groups=groups)
        return _conv_backward_weight(xp, x, grad_output, weight_size, stride, padding, dilation,
                                     groups)

    @staticmethod
    def backward(grad, x, grad_output, *, weight_size, stride, padding, dilation, groups,
                 needs_input_grad):
        padding = fit_padding(x.shape[2:], grad_output.shape[2:], weight_size[2:], stride,
                              padding, dilation)
        attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
        grad_x = grad_grad_output = None
        if needs_input_grad[0]:
            grad_x = ConvolutionBackwardInput.apply(grad_output, grad, input_size=x.shape[2:],
                                                    **attrs)
        if needs_input_grad[1]:
            grad_grad_output = Convolution.apply(x, grad, **attrs)
        return grad_x, grad_grad_output


class Im2Col(Primitive):
    """``unfold``: (N, C, *S) -> (N, C * prod(kernel), L) sliding blocks (``Im2ColBackward0``)."""

    @staticmethod
    def forward(xp, x, *, kernel, stride, padding, dilation, size):
        out = out_size(x.shape[2:], kernel, stride, padding, dilation)
        cols = im2col(xp, x, kernel, stride, padding, dilation, out)
        return cols.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(out))

    @staticmethod
    def backward(grad, *, kernel, stride, padding, dilation, size):
        return (Col2Im.apply(grad, size=size, kernel=kernel, stride=stride, padding=padding,
                             dilation=dilation),)


class Col2Im(Primitive):
    """``fold``: (N, C * prod(kernel), L) -> (N, C, *size), summing overlaps (``Col2ImBackward0``)."""

    @staticmethod
    def forward(xp, cols, *, size, kernel, stride, padding, dilation):
        if half(cols.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
            return widened(Col2Im.forward, xp, cols, size=size, kernel=kernel, stride=stride,
                           padding=padding, dilation=dilation)
        out = out_size(size, kernel, stride, padding, dilation)
        n, ck = cols.shape[:2]
        cols = cols.reshape((n, ck // math.prod(kernel)) + tuple(kernel) + out)
        return col2im(xp, cols, size, kernel, stride, padding, dilation)

    @staticmethod
    def backward(grad, *, size, kernel, stride, padding, dilation):
        return (Im2Col.apply(grad, kernel=kernel, stride=stride, padding=padding,
                             dilation=dilation, size=size),)
