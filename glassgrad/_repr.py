"""``repr(tensor)`` in PyTorch's format, under ``set_printoptions`` (``torch._tensor_str``).

The layout follows torch's printer step for step: one formatter per tensor chooses integer,
fixed or scientific notation from the nonzero finite values (of the summarized data when the
tensor has more than ``threshold`` elements) and pads every entry to one width; rows wrap at
``linewidth``; summarized dimensions keep ``edgeitems`` entries each side of "..."; suffixes
(``dtype=``, ``grad_fn=``) move to a new line when they would pass ``linewidth``.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .autograd import forward_ad
from .autograd.graph import _Hooks


class _PrintOptions:
    precision = 4
    threshold: float = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set how tensors print (``torch.set_printoptions``): digits after the point
    (``precision``, default 4), the element count above which the middle is summarized
    (``threshold``, 1000), entries kept each side (``edgeitems``, 3), characters per line
    (``linewidth``, 80), a ``profile`` ("default", "short", "full") setting all four, and
    ``sci_mode`` (True/False forces scientific notation on or off; None chooses, and every call
    resets it, as in torch)."""
    if profile in _PROFILES:  # NOTE: torch ignores a profile it does not know
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


class _Formatter:
    def __init__(self, arr: np.ndarray, floating: bool):
        self.floating, self.int_mode, self.sci_mode, self.max_width = floating, True, False, 1
        flat = arr.reshape(-1)
        precision = PRINT_OPTS.precision
        if not floating:
            self.max_width = max([len(self._plain(v)) for v in flat.tolist()], default=1)
            return
        values = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if values.size == 0:
            return
        absolute = np.abs(values)
        low, high = absolute.min(), absolute.max()
        self.int_mode = bool(np.all(values == np.ceil(values)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            texts = [f"{v:.{precision}e}" for v in values.tolist()]
        elif self.int_mode:
            texts = [f"{v:.0f}." for v in values.tolist()]
        else:
            texts = [f"{v:.{precision}f}" for v in values.tolist()]
        self.max_width = max(len(s) for s in texts)

    @staticmethod
    def _plain(value) -> str:
        return str(value)

    def format(self, value) -> str:
        if not self.floating:
            text = self._plain(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return (self.max_width - len(text)) * " " + text


class _ComplexFormatter:
    """torch's pair of formatters for complex data: one chosen from the real parts, one from
    the imaginary parts; an element prints as ``real+imagj`` (the sign from the imaginary part)."""

    def __init__(self, arr: np.ndarray):
        self.real, self.imag = _Formatter(arr.real, True), _Formatter(arr.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        value = complex(value)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"
        return self.real.format(value.real) + sign + imag


def _summarized(arr: np.ndarray) -> np.ndarray:
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate((arr[:edge], arr[-edge:])) if arr.shape[0] > 2 * edge else arr
    if not edge:
        return arr[tuple(slice(0, 0) for _ in arr.shape)]
    rows = list(range(edge)) + list(range(arr.shape[0] - edge, arr.shape[0])) \
        if arr.shape[0] > 2 * edge else range(arr.shape[0])
    return np.stack([_summarized(arr[i]) for i in rows])


def _vector_str(arr, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in arr[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-edge:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(arr, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    if summarize and arr.shape[0] > 2 * edge:
        slices = ([_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                  + [_tensor_str(arr[i], indent + 1, summarize, fmt)
                     for i in range(arr.shape[0] - edge, arr.shape[0])])
    else:
        slices = [_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0])]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(t) -> str:
    arr = t._array
    if type(arr) is not np.ndarray and hasattr(arr, "tensor_repr"):
        return arr.tensor_repr(t)  # vmap's batched arrays print as PyTorch's BatchedTensor
    d = dtypes._FROM_NP[arr.dtype]
    prefix, suffixes = "tensor(", []
    indent = len(prefix)
    default = dtypes.get_default_dtype()
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if not (d is default or d is dtypes.int64 or d is dtypes.bool
                or d is dtypes.default_complex_dtype()):
            suffixes.append(f"dtype={d!r}")
        show = arr.astype(np.float32) if d in (dtypes.bfloat16, dtypes.float16) else arr
        summarize = arr.size > PRINT_OPTS.threshold
        shown = _summarized(show) if summarize else show
        fmt = _ComplexFormatter(shown) if d.is_complex else _Formatter(shown, d.is_floating_point)
        body = _tensor_str(show, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    if _Hooks.forward_ad is not None:  # a dual tensor prints its tangent, as in PyTorch
        tangent = forward_ad.tangent_of(t)
        if tangent is not None:
            suffixes.append(f"tangent={tensor_repr(tangent)}")
    return _add_suffixes(prefix + body, suffixes, indent)
