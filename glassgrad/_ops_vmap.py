"""``vmap`` for the lane's composites whose index code is NumPy on plain arrays (mode, cummax,
histograms, scatter_reduce's index checks, put, ...): inside ``vmap`` they run once per batch
entry, differentiably (the batch dim is taken off with RemoveBatchDim, each entry is a select,
the results are stacked and put back with AddBatchDim), with glassgrad's one-time performance
warning. Outside ``vmap`` the cost is one type test per tensor argument."""

from __future__ import annotations

import functools
import sys

from .tensor import Tensor

# NOTE: the module, not glassgrad.tensor (the factory function shadows it in the package)
_tensor_module = sys.modules[Tensor.__module__]


def _tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            yield a


def loops_under_vmap(fn):
    """Decorate ``fn(*tensors_and_values)`` so that, inside ``vmap``, it runs per batch entry."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        batched = _tensor_module._BatchedArray
        if batched is None or not any(type(t._array) is batched for t in _tensors(args, kwargs)):
            return fn(*args, **kwargs)
        return _per_entry(fn, batched, args, kwargs)

    return wrapper


def _per_entry(fn, batched, args, kwargs):
    from .func._batched_array import warn_fallback
    from .func._batching import AddBatchDim, RemoveBatchDim
    from .ops.joins import stack

    top = [t._array for t in _tensors(args, kwargs) if type(t._array) is batched]
    level = max(a.level for a in top)
    size = next(a.phys.shape[0] for a in top if a.level == level)
    warn_fallback(fn.__name__, size)

    def unbatch(a):
        if isinstance(a, Tensor) and type(a._array) is batched \
                and a._array.level == level:
            return RemoveBatchDim.apply(a, level=level, dim=0, size=size)
        return None

    full_args = [unbatch(a) for a in args]
    full_kwargs = {k: unbatch(v) for k, v in kwargs.items()}
    outs = []
    for b in range(size):
        entry_args = [a if f is None else f[b] for a, f in zip(args, full_args)]
        entry_kwargs = {k: v if full_kwargs[k] is None else full_kwargs[k][b]
                        for k, v in kwargs.items()}
        outs.append(fn(*entry_args, **entry_kwargs))

    def combine(parts):
        first = parts[0]
        if isinstance(first, Tensor):
            return AddBatchDim.apply(stack(list(parts), 0), level=level, dim=0, size=size)
        items = [combine([p[k] for p in parts]) for k in range(len(first))]
        return type(first)._make(items) if hasattr(first, "_make") else type(first)(items)

    return combine(outs)
