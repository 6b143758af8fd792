"""``BatchedArray``: the array a Tensor holds inside ``vmap``, a NumPy duck array with a hidden dim.

NOTE [Batched arrays]: inside ``vmap`` a tensor's ``_array`` is a ``BatchedArray`` whose ``phys``
holds the data with the vmapped dim moved to the front. It reports the *logical* (per-sample)
``shape``, so every op, composite and backward formula runs unchanged on it; NumPy calls on it
come back through ``__array_ufunc__`` / ``__array_function__`` and the methods below, which rewrite
dims (reductions and shape ops shift their axes by one, elementwise operands are aligned, matmul
lifts vectors) and run one NumPy kernel on ``phys``. Autograd records on the logical tensors, so
``grad`` inside ``vmap`` gives per-sample gradients.

Nested ``vmap``: ``phys`` may itself be a ``BatchedArray`` of a lower ``level``; higher levels
always wrap lower ones, so an op handles the highest level among its operands, treating everything
else as unbatched there, and recurses. A NumPy call with no batching rule runs once per batch entry
(a loop, with a one-time warning); NumPy code that needs a real ndarray (``np.asarray``) raises
``VmapFallback``, which makes ``Primitive.apply`` run that op's forward once per batch entry.
"""

from __future__ import annotations


import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.lib.mixins import NDArrayOperatorsMixin

from .. import _warn_always
from ..ops.primitive import VmapFallback
from .._user_warning import warn_user

_warned: set = set()


def warn_fallback(what: str, size: int) -> None:
    """One warning per op that runs as a loop over the batch (PyTorch's wording first)."""
    if what in _warned and not _warn_always.ALWAYS[0]:  # NOTE [Warn always]
        return
    _warned.add(what)
    warn_user(
        f"There is a performance drop because we have not yet implemented the batching rule for "
        f"{what}. Please file us an issue on GitHub so that we can prioritize its implementation.\n"
        f"glassgrad: vmap runs {what} once per batch entry ({size} entries here); results are "
        "exact, only slower.",
        UserWarning,
        stacklevel=4,
    )


class LogicalShape(tuple):
    """A logical shape that remembers the vmap levels of the array it came from (the engine reads
    it from a node's input metadata to sum gradients over levels the input does not have)."""

    levels: tuple = ()


class BatchedArray(NDArrayOperatorsMixin):
    """A NumPy duck array: ``phys`` is ``(B, *shape)``; ``level`` identifies the ``vmap`` call."""

    __slots__ = ("__weakref__", "level", "phys")
    __array_priority__ = 2000

    def __init__(self, phys, level: int):
        self.phys = phys
        self.level = level

    @property
    def __class__(self):
        # NOTE: isinstance(x, np.ndarray) is True, as for any array glassgrad code meets; type()
        # (which NumPy's C code and this package use) still tells a BatchedArray apart
        return np.ndarray

    # --- metadata (logical) ------------------------------------------------------------------
    @property
    def shape(self) -> LogicalShape:
        out = LogicalShape(self.phys.shape[1:])
        out.levels = self.levels
        return out

    @shape.setter
    def shape(self, value) -> None:
        self.phys.shape = self.phys.shape[:1] + tuple(value)

    @property
    def levels(self) -> tuple:
        p = self.phys
        return (self.level,) + (p.levels if type(p) is BatchedArray else ())

    @property
    def batch_size(self) -> int:
        return self.phys.shape[0]

    @property
    def ndim(self) -> int:
        return len(self.phys.shape) - 1

    @property
    def size(self) -> int:
        n = 1
        for s in self.phys.shape[1:]:
            n *= s
        return n

    @property
    def dtype(self):
        return self.phys.dtype

    @property
    def itemsize(self) -> int:
        return self.phys.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.phys.itemsize

    @property
    def flags(self):
        return self.phys.flags

    @property
    def strides(self) -> tuple:
        return tuple(self.phys.strides[1:])

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return self.swapaxes(-1, -2)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.phys.shape[1]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"BatchedArray(lvl={self.level}, bdim=0, value={self.phys!r})"

    def tensor_repr(self, t) -> str:
        """``repr`` of the Tensor ``t`` holding this array, in PyTorch's BatchedTensor format."""
        inner = type(t)._make(self.phys)
        inner.grad_fn, inner._requires_grad = t.grad_fn, t._requires_grad
        body = repr(inner).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self.level}, bdim=0, value=\n    {body}\n)"

    # --- conversions that would need one value for the whole batch --------------------------
    def __array__(self, dtype=None, copy=None):
        raise VmapFallback(
            "vmap: glassgrad cannot turn a batched array into a plain NumPy array "
            f"(logical shape {list(self.shape)}, batch size {self.batch_size}).\nglassgrad: "
            "NumPy code outside a primitive asked for np.asarray() of a tensor inside vmap; run "
            "that code outside vmap, or express it with glassgrad ops."
        )

    def _uniform(self, what: str):
        """The value shared by every batch entry; VmapFallback (PyTorch's message) otherwise."""
        base = self
        while type(base) is BatchedArray:
            base = base.phys
        flat = np.asarray(base).reshape(-1) if base.size else base.reshape(-1)
        if flat.size and np.all(flat == flat[0]):
            return flat[0]
        raise VmapFallback(
            f"vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
            f"flow. We don't support that yet, please shout over at "
            f"https://github.com/pytorch/functorch/issues/257 .\nglassgrad: {what} of a tensor "
            "inside vmap whose batch entries differ; write it with glassgrad.where() instead."
        )

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous.")
        return bool(self._uniform("bool()"))

    def item(self, *args):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._uniform(".item()").item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        return int(self.item())

    def tolist(self):
        raise VmapFallback("vmap: glassgrad cannot call .tolist() on a batched array")

    # --- NumPy protocols -----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ._batched_numpy import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from ._batched_numpy import array_function

        return array_function(func, args, kwargs)

    def __getitem__(self, index):
        from ._batched_index import getitem

        return getitem(self, index)

    def __setitem__(self, index, value) -> None:
        from ._batched_index import setitem

        setitem(self, index, value)

    # --- methods: the ndarray methods glassgrad's ops use --------------------------------------
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return BatchedArray(self.phys.reshape(self.phys.shape[:1] + tuple(shape), order=order),
                            self.level)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        nd = self.ndim
        if not axes:
            axes = tuple(range(nd - 1, -1, -1))
        perm = (0,) + tuple(normalize_axis_index(a, nd) + 1 for a in axes)
        return BatchedArray(self.phys.transpose(perm), self.level)

    def swapaxes(self, axis1, axis2):
        nd = self.ndim
        a1, a2 = normalize_axis_index(axis1, nd) + 1, normalize_axis_index(axis2, nd) + 1
        return BatchedArray(self.phys.swapaxes(a1, a2), self.level)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    flatten = ravel

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return BatchedArray(self.phys.astype(dtype, order=order, casting=casting, copy=copy),
                            self.level)

    def copy(self, order="C"):
        return BatchedArray(self.phys.copy(order=order), self.level)

    def view(self, *args, **kwargs):
        return BatchedArray(self.phys.view(*args, **kwargs), self.level)

    def fill(self, value) -> None:
        self.phys.fill(value)

    def __getattr__(self, name):
        # NOTE: any other ndarray method runs once per batch entry (see warn_fallback)
        if name.startswith("__") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'BatchedArray' object has no attribute '{name}'")
        from ._batched_numpy import loop

        def method(*args, **kwargs):
            return loop(lambda x, *a, **k: getattr(x, name)(*a, **k), (self,) + args, kwargs,
                        f"ndarray.{name}")

        return method


def _add_method(name):
    def method(self, *args, **kwargs):
        return getattr(np, name)(self, *args, **kwargs)

    method.__name__ = name
    setattr(BatchedArray, name, method)


for _name in ("sum", "mean", "var", "std", "prod", "max", "min", "any", "all", "argmax", "argmin",
              "cumsum", "cumprod", "round", "clip", "take", "repeat", "diagonal", "trace",
              "nonzero", "argsort", "searchsorted", "dot", "conj"):
    _add_method(_name)


def levels_of(x) -> tuple:
    """The vmap levels an array carries, outermost (highest) first; () for a plain array."""
    return x.levels if type(x) is BatchedArray else ()


def level_of(x) -> int:
    return x.level if type(x) is BatchedArray else 0


def unwrap(x, level: int):
    """``x.phys`` when ``x`` is batched at ``level`` (batch dim first), else None."""
    if type(x) is BatchedArray and x.level == level:
        return x.phys
    return None


def expand_phys(phys, n: int):
    """Insert ``n`` size-1 dims right after the batch dim of a physical array."""
    if n <= 0:
        return phys
    s = phys.shape
    return phys.reshape(s[:1] + (1,) * n + s[1:])


def logical_ndim(x) -> int:
    if type(x) is BatchedArray:
        return len(x.phys.shape) - 1
    nd = getattr(x, "ndim", None)
    return nd if nd is not None else np.ndim(x)


def add_level(x, level: int, dim: int):
    """``x`` with its dim ``dim`` (non-negative) turned into the batch dim of ``level``, keeping
    higher levels outermost."""
    if type(x) is BatchedArray and x.level > level:
        return BatchedArray(add_level(x.phys, level, dim + 1), x.level)
    return BatchedArray(np.moveaxis(x, dim, 0), level)


def remove_level(x, level: int, dim: int, size: int):
    """Undo ``add_level``: the batch dim of ``level`` becomes dim ``dim`` of the result; an array
    not batched at ``level`` is repeated ``size`` times along ``dim``."""
    if type(x) is BatchedArray and x.level > level:
        return BatchedArray(remove_level(x.phys, level, dim + 1, size), x.level)
    if type(x) is BatchedArray and x.level == level:
        return np.moveaxis(x.phys, 0, dim)
    shape = tuple(x.shape)
    out = np.broadcast_to(np.expand_dims(x, dim), shape[:dim] + (size,) + shape[dim:])
    return out.copy()
