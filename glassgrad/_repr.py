"""``repr(tensor)`` in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``."""

from __future__ import annotations

import numpy as np

from . import dtypes


def _float_formatter(arr):
    finite = arr[np.isfinite(arr)] if arr.size else arr
    if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
        width = max(len(f"{v:.0f}.") for v in finite)

        def fmt(v):
            s = f"{v:.0f}." if np.isfinite(v) else str(v)
            return s.rjust(width)

        return fmt
    absf = np.abs(finite[finite != 0]) if finite.size else finite
    sci = absf.size and (absf.max() / absf.min() > 1000 or absf.max() > 1e8 or absf.min() < 1e-4)
    if sci:
        width = max(len(f"{v:.4e}") for v in finite)
        return lambda v: f"{v:.4e}" if np.isfinite(v) else str(v).rjust(width)
    # (no finite value: inf/nan unpadded, as PyTorch prints tensor([inf, nan]))
    width = max(len(f"{v:.4f}") for v in finite) if finite.size else 0

    def fmt(v):
        return (f"{v:.4f}" if np.isfinite(v) else str(v)).rjust(width)

    return fmt


def tensor_repr(t) -> str:
    arr = t._array
    if type(arr) is not np.ndarray and hasattr(arr, "tensor_repr"):
        return arr.tensor_repr(t)  # vmap's batched arrays print as PyTorch's BatchedTensor
    d = dtypes._FROM_NP[arr.dtype]
    show = arr.astype(np.float32) if d is dtypes.bfloat16 else arr
    if d.is_floating_point:
        fmt = {"float_kind": _float_formatter(show.astype(np.float64))}
    elif d is dtypes.bool:
        fmt = {"bool": lambda v: "True" if v else "False"}
    else:
        fmt = None
    body = np.array2string(
        show, separator=", ", prefix="tensor(", formatter=fmt, threshold=1000, edgeitems=3,
        max_line_width=80,
    )
    if arr.size == 0 and arr.ndim > 1:
        body = "[]"
    extra = []
    if arr.size == 0 and arr.ndim != 1:
        extra.append(f"size={tuple(arr.shape)}")
    default = dtypes.get_default_dtype()
    if not (d is default or d is dtypes.int64 or d is dtypes.bool):
        extra.append(f"dtype={d!r}")
    if t.grad_fn is not None:
        extra.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        extra.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extra) + ")"
