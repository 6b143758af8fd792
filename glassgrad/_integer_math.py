"""``torch.gcd`` and ``torch.lcm``: integer tensors only, no derivative (integers cannot require
grad), so they are not primitives (DESIGN: ops/ holds only what has a backward)."""

from __future__ import annotations

import numpy as np

from .ops import _scipy_kernel as _k
from .ops import primitive
from .ops._util import promote


def _integer_fn(ufunc, op, doc):
    def fn(input, other, *, out=None):
        _k.tensors(input, other, op)
        a, b = promote(input, other, op)
        dt = a._array.dtype
        if dt.kind not in "iu":
            raise _k.not_implemented(f"{op}_cpu", dt, op)
        return _k.with_out(primitive._make(ufunc(a._array, b._array).astype(dt)), out, op)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = doc
    return fn


gcd = _integer_fn(np.gcd, "gcd", "The greatest common divisor elementwise, non-negative, "
                  "broadcast, integer tensors only (``torch.gcd``); gcd(0, 0) = 0.")
lcm = _integer_fn(np.lcm, "lcm", "The least common multiple elementwise, non-negative, "
                  "broadcast, integer tensors only (``torch.lcm``); lcm with 0 is 0.")
