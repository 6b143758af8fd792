"""vmap rules for the special-function primitives: each is elementwise, so a batched call runs
its forward once on the aligned physical arrays (func/_batched_rules.py's ``_elementwise``),
not once per batch entry (scipy.special's ufuncs cannot take a batched array)."""

from __future__ import annotations

from ..func._batched_rules import RULES, _elementwise

ELEMENTWISE = (
    "Lgamma Digamma Polygamma Igamma Igammac Zeta I0 I0e I1 I1e Ndtri LogNdtr Erfcx Entr Sinc "
    "Exp2 Xlog1py Logaddexp Logaddexp2 Hypot Copysign Heaviside Nextafter Fmax Fmin NanToNum Frexp "
    "Erfc Erfinv Logit Xlogy Ldexp Deg2Rad Rad2Deg Mvlgamma"
).split()
for _name in ELEMENTWISE:
    RULES.setdefault(_name, _elementwise)


def constant_forward(fn, *arrays):
    """``fn(*arrays)`` for the functions without a derivative (_nondiff.py), whose kernels are
    not primitives: under vmap, once on the aligned physical arrays (nested levels one by one)."""
    from ..func._batched_array import BatchedArray
    from ..func._batched_numpy import align

    levels = [a.level for a in arrays if type(a) is BatchedArray]
    if not levels:
        return fn(*arrays)
    level = max(levels)
    return BatchedArray(constant_forward(fn, *align(list(arrays), level)), level)
