"""Convolutions, pooling, softmax (the nn ops that are primitives)."""

from __future__ import annotations

import numpy as np

from .symbolic import register


def pads(pairs) -> list:
    """glassgrad's ((begin, end), ...) per spatial dim -> ONNX's [begins..., ends...]."""
    return [int(p[0]) for p in pairs] + [int(p[1]) for p in pairs]


@register("Convolution")
def _conv(call):
    a = call.attrs
    return call.g.op("Conv", *call.inputs, strides=list(a["stride"]), pads=pads(a["padding"]),
                     dilations=list(a["dilation"]), group=int(a["groups"]),
                     kernel_shape=list(call.shape(1)[2:]))


@register("ConvolutionTranspose")
def _conv_transpose(call):
    a = call.attrs
    kernel = call.shape(1)[2:]
    extra = []  # output_padding: what output_size adds beyond the windows the input spans
    for n, o, k, s, d, (pb, pe) in zip(call.shape(0)[2:], a["output_size"], kernel, a["stride"],
                                      a["dilation"], a["padding"]):
        extra.append(int(o - ((n - 1) * s - pb - pe + d * (k - 1) + 1)))
    return call.g.op("ConvTranspose", *call.inputs, strides=list(a["stride"]),
                     pads=pads(a["padding"]), dilations=list(a["dilation"]),
                     group=int(a["groups"]), kernel_shape=list(kernel), output_padding=extra)


@register("AvgPool")
def _avg_pool(call):
    a = call.attrs
    kernel, padding, divisor = a["kernel"], a["padding"], a["divisor"]
    padded = any(p != (0, 0) for p in padding)
    symmetric = all(p[0] == p[1] for p in padding)
    if np.ndim(divisor) == 0 and int(divisor) == int(np.prod(kernel)) and (symmetric or not padded):
        include = 1  # every window divides by its full size, padding counted
    elif np.ndim(divisor) and symmetric:
        include = 0  # per-window counts of real elements (count_include_pad=False)
    else:
        raise call.unsupported("divisor_override, or ceil_mode windows that pass the edge")
    return call.g.op("AveragePool", call.inputs[0], kernel_shape=list(kernel),
                     strides=list(a["stride"]), pads=pads(padding), count_include_pad=include)


@register("AdaptiveAvgPool")
def _adaptive_avg_pool(call):
    if all(s == 1 for s in call.out_shape[2:]):
        return call.g.op("GlobalAveragePool", call.inputs[0])
    raise call.unsupported("adaptive average pooling to sizes that do not divide the input")


@register("Softmax")
def _softmax(call):
    return call.g.op("Softmax", call.inputs[0], axis=int(call.attrs["dim"]))


@register("LogSoftmax")
def _log_softmax(call):
    return call.g.op("LogSoftmax", call.inputs[0], axis=int(call.attrs["dim"]))


@register("AdaptiveMaxPool")
def _adaptive_max_pool(call):
    if all(s == 1 for s in call.out_shape[2:]):
        return call.g.op("GlobalMaxPool", call.inputs[0])
    raise call.unsupported("adaptive max pooling to sizes other than 1")
