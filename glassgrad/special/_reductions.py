"""``torch.special.softmax``, ``log_softmax`` and ``logsumexp``: the top-level ops with
torch.special's signatures (``dim`` is required)."""

from __future__ import annotations

from .. import functional as _fn
from ..ops import reduction as _red


def _need_tensor(input, op: str) -> None:
    if not hasattr(input, "_array"):
        kind = type(input)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {name}")


def softmax(input, dim, *, dtype=None):
    """``exp(x) / exp(x).sum(dim)`` along ``dim``, computed in ``dtype`` when given
    (``torch.special.softmax``)."""
    _need_tensor(input, "special_softmax")
    return _fn.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``x - logsumexp(x, dim)`` along ``dim``, computed in ``dtype`` when given
    (``torch.special.log_softmax``)."""
    _need_tensor(input, "special_log_softmax")
    return _fn.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(exp(x).sum(dim))`` without overflow (``torch.special.logsumexp``)."""
    from ..ops._scipy_kernel import with_out

    _need_tensor(input, "special_logsumexp")
    return with_out(_red.logsumexp(input, dim, keepdim), out, "special_logsumexp")
