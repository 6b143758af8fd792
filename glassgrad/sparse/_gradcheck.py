"""``gradcheck`` with sparse inputs (``torch.autograd.gradcheck(fn, (sparse, ...), masked=)``),
installed into autograd/gradcheck.py (which never imports this package).

The analytic Jacobian is what backward gives: one backward per output element, reading each
input's ``.grad`` (a sparse leaf's in torch's layout, NOTE [Sparse gradient layouts] in _ops.py)
as a dense array. The numerical one is float64 central differences: with ``masked=True`` over
the specified values only (their gradient, as the masked semantics of ``torch.sparse.mm``), with
``masked=False`` (torch's default) over every element of the dense shape, an unspecified one
perturbed by adding an entry there; the analytic rows are then the full dense gradient, so a
product whose sparse gradient holds only the pattern fails, as it does on torch.
"""

from __future__ import annotations

import importlib

import numpy as np

from .. import _layout
from ..tensor import Tensor
from ._coo import SparseCOOTensor

__all__ = ["sparse_gradcheck"]

# NOTE: the module, not the function glassgrad.autograd re-exports under the same name
_gradcheck = importlib.import_module("..autograd.gradcheck", __package__)


def _dense_outputs(func, inputs) -> list:
    outs = func(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    for out in outs:
        if getattr(out, "_sparse", False):
            raise ValueError("Sparse output is not supported at gradcheck yet. Please call "
                             "to_dense(masked_grad=...) on the output of fn for gradcheck.")
    return [o for o in outs if isinstance(o, Tensor)]


def _with_entry(sp, where, delta) -> SparseCOOTensor:
    """``sp`` plus ``delta`` at the dense position ``where`` (an extra, summed entry)."""
    idx = np.concatenate([sp._indices_t._array, np.array(where[: sp.sparse_dim()])[:, None]], 1)
    extra = np.zeros((1, *sp._values_t.shape[1:]), sp._values_t._array.dtype)
    extra[(0, *where[sp.sparse_dim():])] = delta
    values = Tensor._make(np.concatenate([sp._values_t._array, extra]))
    out = SparseCOOTensor._build(idx, values, tuple(sp.shape), False)
    return out if sp.layout is _layout.sparse_coo else out.to_sparse_csr()


def _with_value(sp, k, delta) -> SparseCOOTensor:
    """``sp`` with element ``k`` of its flattened values moved by ``delta``."""
    values = sp._values_t._array.copy()
    values.reshape(-1)[k] += delta
    return sp._with_values(Tensor._make(values))


def _positions(x, masked: bool) -> list:
    """One (how to perturb, dense linear index) per element of input ``x``'s dense shape: a
    dense element, a specified sparse value (entry ``k``'s element), an unspecified element
    (``masked``: never perturbed, its numerical row stays 0, as torch's) or any element
    (unmasked: an extra entry there)."""
    if not x._sparse:
        return [("dense", i) for i in range(x.numel())]
    if not masked:
        return [("entry", i) for i in range(x.numel())]
    shape, sparse_dim = tuple(x.shape), x.sparse_dim()
    per = int(np.prod(shape[sparse_dim:], dtype=np.int64))
    where = {}
    first = np.ravel_multi_index(tuple(x._indices_t._array), shape[:sparse_dim]) * per
    for k, base in enumerate(first.tolist()):
        for j in range(per):
            where[base + j] = k * per + j
    return [("value", where[i], i) if i in where else ("none", i) for i in range(x.numel())]


def sparse_gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                     masked=None, **ignored) -> bool:
    """``gradcheck`` when an input is sparse (see the module docstring)."""
    # NOTE: masked: the derivative w.r.t. each specified value, so duplicates are summed first
    inputs = tuple(x.coalesce().detach().requires_grad_(x.requires_grad)
                   if masked and getattr(x, "_sparse", False) and x.layout is _layout.sparse_coo
                   and not x.is_coalesced() else x for x in _gradcheck._as_tuple(inputs))
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    outs = _dense_outputs(func, inputs)
    sizes = [o.numel() for o in outs]
    try:
        for i in diff:
            x = inputs[i]
            positions = _positions(x, bool(masked))
            numerical = np.zeros((len(positions), sum(sizes)))
            for row, pos in enumerate(positions):
                if pos[0] == "none":
                    continue
                plus, minus = (_perturb(x, pos, s * eps) for s in (1, -1))
                flat = [np.concatenate([o.detach().numpy().reshape(-1) for o in _dense_outputs(
                    func, inputs[:i] + (p,) + inputs[i + 1:])]) for p in (plus, minus)]
                numerical[row] = (flat[0] - flat[1]) / (2 * eps)
            analytical = _analytical(func, inputs, x, positions, outs, sizes)
            if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                start = 0
                for oi, n in enumerate(sizes):
                    num, ana = numerical[:, start:start + n], analytical[:, start:start + n]
                    if not np.allclose(ana, num, rtol=rtol, atol=atol):
                        raise _gradcheck.GradcheckError(_gradcheck._mismatch(oi, i, num, ana))
                    start += n
    except _gradcheck.GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _perturb(x, pos, delta):
    if pos[0] == "dense":
        array = x.detach().numpy().copy()
        array.reshape(-1)[pos[1]] += delta
        return Tensor._make(array)
    if pos[0] == "value":
        return _with_value(x, pos[1], delta)
    return _with_entry(x, np.unravel_index(pos[1], tuple(x.shape)), delta)


def _analytical(func, inputs, x, positions, outs, sizes) -> np.ndarray:
    """Rows: ``x``'s perturbed elements; columns: every output element, from one backward each."""
    columns = []
    for oi, n in enumerate(sizes):
        for k in range(n):
            x.grad = None
            outs = _dense_outputs(func, inputs)
            seed = np.zeros(n)
            seed[k] = 1
            if outs[oi].requires_grad:
                outs[oi].backward(Tensor._make(seed.reshape(outs[oi].shape)))
            grad = x.grad
            dense = (np.zeros(int(np.prod(x.shape))) if grad is None else
                     (grad.to_dense() if grad._sparse else grad).detach().numpy().reshape(-1))
            columns.append([dense[pos[-1]] for pos in positions])
    x.grad = None
    return np.array(columns).T.reshape(len(positions), -1)


_gradcheck._SPARSE_CHECK = sparse_gradcheck
