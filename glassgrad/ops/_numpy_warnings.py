"""NOTE [NumPy warnings]: torch prints no warning for ``log(0)``, ``0 / 0``, ``exp(1000)`` or a
cast of ``inf`` to int; NumPy prints a RuntimeWarning ("divide by zero encountered in log") from
inside glassgrad's kernels, or raises it under ``warnings.simplefilter("error")``. glassgrad keeps
the hot path free of ``np.errstate`` (a context manager per op would cost ~5% of an op) and
silences them where they surface instead:

- printing: one warnings filter, appended at import (so the user's own filters come first),
  ignores RuntimeWarnings attributed to a glassgrad module: NumPy attributes its warning to the
  Python line that called the ufunc, glassgrad's own (a warning glassgrad means to give names
  the user's line with its stacklevel, and still shows);
- raised (the user made RuntimeWarning an error): a forward that raises one is run again under
  ``np.errstate(all="ignore")`` (``primitive._forward_failed``: the error path, so free when no
  warning happens); composites' own array code is wrapped by ``quiet`` where it runs;
- backward: ``backward()`` and ``autograd.grad`` run the engine under one ``np.errstate`` each.
"""

from __future__ import annotations

import warnings

import numpy as np

warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"glassgrad\.", append=True)


def retry_quietly(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with NumPy's floating-point warnings off (the retry of a forward
    that raised a RuntimeWarning turned into an error)."""
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


# NOTE: xp.sum and friends are NumPy's Python wrappers, so NumPy attributes their warnings to
# numpy/_core/fromnumeric.py, which the filter above must not silence (the user's own np.sum
# warns there too); on a plain ndarray the same ufunc method called from here is the same
# computation and its warning names this glassgrad module
def sum_of(xp, x, axis, keepdims, dtype):
    """``xp.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)``."""
    if type(x) is np.ndarray:
        return np.add.reduce(x, axis, dtype, None, keepdims)
    return xp.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)


def prod_of(xp, x, axis, keepdims):
    """``xp.prod(x, axis=axis, keepdims=keepdims)``."""
    if type(x) is np.ndarray:
        return np.multiply.reduce(x, axis, None, None, keepdims)
    return xp.prod(x, axis=axis, keepdims=keepdims)


def cumulative(xp, x, axis, dtype, product: bool):
    """``xp.cumprod`` (``product``) or ``xp.cumsum`` of ``x`` along ``axis`` in ``dtype``."""
    if type(x) is np.ndarray:
        return (np.multiply if product else np.add).accumulate(x, axis, dtype)
    return (xp.cumprod if product else xp.cumsum)(x, axis=axis, dtype=dtype)
