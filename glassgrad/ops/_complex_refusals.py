"""The primitives torch refuses complex input to, refusing it with torch's exception and words.

NOTE [Complex refusals]: NumPy runs most of these on complex arrays and gives a number torch
never gives (``maximum`` and ``sort`` order complex numbers lexicographically, ``relu`` and
``clamp`` compare real parts, ``sign`` is NumPy's z/|z| sign, ``sigmoid`` and ``logsumexp`` drop
the imaginary part); the rest fail deep inside NumPy. ``install`` wraps each one's forward with a
dtype test, so only these ops pay it (and not on their float fast paths, bound earlier to the
plain forward: NOTE [Fast path] in fast_path.py).
"""

from __future__ import annotations

from . import primitive
from ._names import scalar_type

_NI, _RT = NotImplementedError, RuntimeError
_CLAMP = (_NI, "clamp is not supported for complex types")
# class name -> (exception type, torch's message; {t} is torch's ScalarType name)
REFUSALS = {
    "Relu": _CLAMP, "Clamp": _CLAMP, "ClampTensor": _CLAMP, "ClampOneTensor": _CLAMP,
    "ClampMinTensor": _CLAMP, "ClampMaxTensor": _CLAMP,
    "Floor": (_NI, "floor is not supported for complex inputs"),
    "Ceil": (_NI, "ceil is not supported for complex inputs"),
    "Trunc": (_NI, "trunc is not supported for complex inputs"),
    "Round": (_NI, "\"round_vml_cpu\" not implemented for '{t}'"),
    "RoundDecimals": (_NI, "\"round_cpu\" not implemented for '{t}'"),
    "Frac": (_NI, "\"frac_cpu\" not implemented for '{t}'"),
    "Sign": (_NI, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
                  "use torch.sgn instead."),
    "Atan2": (_NI, "\"atan2_cpu\" not implemented for '{t}'"),
    "Remainder": (_NI, "\"remainder_cpu\" not implemented for '{t}'"),
    "Fmod": (_NI, "\"fmod_cpu\" not implemented for '{t}'"),
    "FloorDivide": (_NI, "\"div_floor_cpu\" not implemented for '{t}'"),
    "Erf": (_NI, "\"erf_vml_cpu\" not implemented for '{t}'"),
    "Erfc": (_NI, "\"erfc_vml_cpu\" not implemented for '{t}'"),
    "Erfinv": (_NI, "\"erfinv_cpu\" not implemented for '{t}'"),
    "Maximum": (_RT, "maximum not implemented for complex tensors."),
    "Minimum": (_RT, "minimum not implemented for complex tensors."),
    "MaxAll": (_NI, "\"max_all\" not implemented for '{t}'"),
    "MinAll": (_NI, "\"min_all\" not implemented for '{t}'"),
    "MaxDim": (_RT, "max(): does not support complex input"),
    "MinDim": (_RT, "min(): does not support complex input"),
    "Amax": (_NI, "\"max_values_cpu\" not implemented for '{t}'"),
    "Amin": (_NI, "\"min_values_cpu\" not implemented for '{t}'"),
    "SortValues": (_RT, " Sort does not support complex dtypes on CPU"),
    "TopkValues": (_RT, " topk does not support complex dtypes on CPU"),
    "Softmax": (_NI, "\"softmax_kernel_impl\" not implemented for '{t}'"),
    "LogSoftmax": (_NI, "\"log_softmax_kernel_impl\" not implemented for '{t}'"),
    "MseLoss": (_NI, "\"mse_cpu\" not implemented for '{t}'"),
    "Cumprod": (_NI, "glassgrad: cumprod of complex tensors is not supported yet ('{t}')"),
    "LogCumSumExp": (_NI, "glassgrad: logcumsumexp of complex tensors is not supported yet "
                          "('{t}')"),
    "LogSumExp": (_NI, "glassgrad: logsumexp of complex tensors is not supported yet ('{t}')"),
    "Sigmoid": (_NI, "glassgrad: sigmoid of complex tensors is not supported yet ('{t}'); "
                     "use 1 / (1 + exp(-x))"),
}


def _refusing(cls, kind, message):
    forward = cls.forward

    # NOTE: the first input's dtype is every input's (callers promote: NOTE [Promotion])
    def checked_forward(xp, x, *others, **attrs):
        if x.dtype.kind == "c":
            name = scalar_type(x.dtype)
            raise kind(message.format(t=name) + f"\nglassgrad: {cls.__name__} of a {name} "
                       "tensor.")
        return forward(xp, x, *others, **attrs)

    checked_forward.refuses_complex = True
    return staticmethod(checked_forward)


def install() -> None:
    """Wrap the forwards of ``REFUSALS``' primitives (once: run at import, when glassgrad has
    made them all)."""
    for name, (kind, message) in REFUSALS.items():
        cls = primitive.REGISTRY.get(name)
        # (a subclass with its parent's forward, MinDim of MaxDim, wraps the wrapper: its own
        # words come first)
        own = getattr(cls.__dict__.get("forward"), "__func__", None)
        if cls is not None and not getattr(own, "refuses_complex", False):
            cls.forward = _refusing(cls, kind, message)


install()
