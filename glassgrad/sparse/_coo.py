"""``SparseCOOTensor``: a sparse tensor in coordinate format (``layout=torch.sparse_coo``).

NOTE [Sparse operands]: a sparse tensor is a ``Tensor`` (so ``isinstance(x, Tensor)``, ``shape``,
``dtype``, ``dim()``, ``device`` work as in PyTorch) whose data are ``_indices_t`` (int64,
``(sparse_dim, nnz)``) and ``_values_t`` (a Tensor ``(nnz, *dense_shape)``, through which
gradients flow). Its ``_array`` is a ``_SparseArray``: the dense shape and dtype and nothing
else, so a dense op that was not taught sparse tensors cannot compute on garbage: any NumPy use
of it raises ``SparseLayoutError`` (NotImplementedError, PyTorch's "Could not run 'aten::exp' with
arguments from the 'SparseCPU' backend"), which ``Primitive.apply``'s error path names with the
op (ops/_forward_errors.py). The ops that do take sparse operands are methods here and in
``_ops.py``; ``mm``, ``matmul`` and ``sum`` reach them through ``Tensor._sparse``, the one
flag test they make, and ``dense @ sparse`` / ``dense + sparse`` through Python's rule that a
subclass's reflected operator runs first.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

from .. import _layout, dtypes
from ..autograd.grad_mode import _state as _grad_state
from ..tensor import Tensor

__all__ = ["SparseCOOTensor", "SparseLayoutError"]

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PACKAGE = os.path.dirname(_HERE.rstrip(os.sep)) + os.sep
SUPPORTED = (
    "to_dense, coalesce, indices/values, mm/spmm/sparse.mm/matmul/@ with a dense matrix, "
    "dense + sparse, sparse +/- sparse, * by a number or a tensor, / by a number, sum, "
    "sparse.softmax/log_softmax, "
    "transpose, the unary ops that keep 0 (abs, sqrt, tanh, relu, ...), to(dtype/device), "
    "detach, clone"
)


class SparseLayoutError(NotImplementedError):
    """An op that does not support sparse COO tensors got one (see NOTE [Sparse operands])."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(self._message(_caller_name() or what, f"{what} of its data"))

    def _message(self, name: str, detail: str) -> str:
        return (
            f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend.\n"
            f"glassgrad: {name} got a sparse COO tensor (layout=glassgrad.sparse_coo) and needs "
            f"{detail}, which a sparse tensor does not have. Convert it with .to_dense() first; "
            f"sparse tensors support {SUPPORTED}."
        )

    def for_op(self, cls) -> SparseLayoutError:
        """This error re-worded for the primitive ``cls`` whose forward met the sparse operand."""
        node = cls.node_cls.__name__
        name = node[: node.rfind("Backward")].lower() if "Backward" in node else cls.__name__
        self.args = (self._message(name, f"the dense array behind its input ({self.what})"),)
        return self


class _SparseAttributeError(SparseLayoutError, AttributeError):
    """A missing array attribute: also an AttributeError, so ``hasattr``/``getattr(..., None)``
    probes see "absent" (and any use of the data still raises)."""


def _caller_name() -> str | None:
    """The innermost glassgrad function (outside this package) on the stack: the public op
    that handed a sparse tensor's stand-in array to NumPy."""
    frame = sys._getframe(2)
    while frame is not None:
        where = frame.f_code.co_filename
        name = frame.f_code.co_name
        if where.startswith(_PACKAGE) and not where.startswith(_HERE) and not name.startswith("<"):
            return name
        frame = frame.f_back
    return None


def _refuse(name):
    def method(self, *args, **kwargs):
        raise SparseLayoutError(name)

    method.__name__ = name
    return method


class _SparseArray:
    """Stands in for a sparse tensor's ``_array``: ``shape``, ``dtype``, ``ndim``, ``size`` of
    the dense tensor; every array operation raises SparseLayoutError."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: np.dtype) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)

    def tensor_repr(self, t) -> str:  # glassgrad/_repr.py prints non-ndarray arrays this way
        from ._repr import sparse_repr

        return sparse_repr(t)

    def __len__(self) -> int:
        return self.shape[0]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise SparseLayoutError(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise SparseLayoutError(func.__name__)

    def __array__(self, dtype=None, copy=None):
        raise SparseLayoutError("conversion to an array")

    def __getattr__(self, name: str):
        raise _SparseAttributeError(name)


for _name in ("getitem setitem iter float int index bool complex add radd sub rsub mul rmul "
              "truediv rtruediv floordiv pow rpow matmul rmatmul neg abs lt le gt ge eq ne and "
              "or xor invert mod").split():
    setattr(_SparseArray, f"__{_name}__", _refuse(_name))


class _SparseGradArray(_SparseArray):
    """The ``_array`` of a sparse gradient on its way through the engine (NOTE [Sparse
    gradients]): it carries its ``tensor``; ``+`` with another sparse gradient concatenates,
    ``+`` with a dense array gives the dense sum."""

    __slots__ = ("tensor",)
    __array_ufunc__ = None  # NOTE: so `ndarray + this` defers to __radd__ instead of converting

    def __init__(self, tensor: SparseCOOTensor) -> None:
        super().__init__(tensor._array.shape, tensor._array.dtype)
        # NOTE: an equal dtype that is not numpy's cached one: run_arrays then never takes its
        # `old += g` path (which needs `old.dtype is g.dtype`) for a sparse g
        self.dtype = np.dtype(self.dtype, copy=True)
        self.tensor = tensor

    def __add__(self, other):
        if type(other) is _SparseGradArray:
            both = SparseCOOTensor._build(
                np.concatenate([self.tensor._indices_t._array, other.tensor._indices_t._array], 1),
                Tensor._make(np.concatenate([self.tensor._values_t._array,
                                             other.tensor._values_t._array])),
                self.shape, False)
            return sparse_gradient(both)._array
        return other + self

    def unwrap(self) -> SparseCOOTensor:
        """The sparse tensor, now a plain one (it becomes a ``.grad``)."""
        tensor = self.tensor
        tensor._array = _SparseArray(self.shape, tensor._values_t._array.dtype)
        return tensor

    def __radd__(self, other):
        from ._construct import to_dense

        return other + to_dense(self.tensor)._array


def sparse_gradient(tensor: SparseCOOTensor) -> SparseCOOTensor:
    """``tensor`` marked as a gradient for the engine (NOTE [Sparse gradients])."""
    tensor._array = _SparseGradArray(tensor)
    return tensor


class SparseCOOTensor(Tensor):
    """A sparse COO tensor (``torch.Tensor`` with ``layout=torch.sparse_coo``). Build one with
    ``glassgrad.sparse_coo_tensor(indices, values, size)`` or ``dense.to_sparse()``.

    ``_indices()`` is ``(sparse_dim, nnz)`` int64, ``_values()`` ``(nnz, *dense_shape)``;
    duplicates are allowed until ``coalesce()`` sums them and sorts the entries. Gradients flow
    to the values (``requires_grad`` and ``grad`` are the values'). Ops it does not support raise
    NotImplementedError naming the op (NOTE [Sparse operands]).

    Example::

        >>> a = glassgrad.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
        >>> a @ glassgrad.ones(2, 1)
        tensor([[2.], [3.]])
    """

    __slots__ = ("_indices_t", "_values_t", "_coalesced", "_leaf", "_sink")
    _sparse = True

    @classmethod
    def _build(cls, indices: np.ndarray, values: Tensor, shape: tuple, coalesced: bool):
        """A sparse tensor over ``indices`` (int64 (sparse_dim, nnz), not copied) and
        ``values``; callers have checked them."""
        out = cls._make(np.empty(0))
        out._array = _SparseArray(shape, values._array.dtype)
        out._indices_t = Tensor._make(indices)
        out._values_t = values
        out._coalesced = coalesced
        out._leaf = False
        out._sink = None
        return out

    def _dense_grad_sink(self) -> Tensor | None:
        """The dense stand-in that collects this leaf's full gradient from torch.mm-like
        products (NOTE [Sparse gradient layouts] in _ops.py); for a tensor derived from such
        leaves by linear ops, its dense shadow (``_derive_sink``); else None."""
        if not self._leaf:
            if self._sink is not None and not isinstance(self._sink, Tensor):
                self._sink = self._sink()  # the shadow, built when a dense product needs it
            return self._sink
        if not self._values_t._requires_grad:
            return None
        if self._sink is None:
            zeros = np.broadcast_to(np.zeros((), self._values_t._array.dtype), self._array.shape)
            self._sink = Tensor._make(zeros).requires_grad_()
        return self._sink

    def _sink_thunk(self):
        """A function giving ``_dense_grad_sink()``, or None when there is none; nothing dense
        is made until it is called."""
        if self._leaf:
            return self._dense_grad_sink if self._values_t._requires_grad else None
        return self._dense_grad_sink if self._sink is not None else None

    def _derive_sink(self, out: SparseCOOTensor, fn) -> SparseCOOTensor:
        """``out`` (made from self by a linear op) with the dense shadow ``fn(self's)``, so a
        dense gradient that torch.mm or dense + sparse hands ``out`` reaches self's leaves
        whole, as torch's passes through mul/div/neg/add/transpose/coalesce (NOTE [Sparse
        gradient layouts]). Callers skip it when the op has another input requiring grad.
        NOTE: lazy, so ops on a large sparse leaf allocate no dense (n, m) shadow until a dense
        product's gradient needs one (which is that large anyway)."""
        thunk = self._sink_thunk()
        if thunk is not None and _grad_state.enabled:
            out._sink = lambda: fn(thunk())
        return out

    def _with_values(self, values: Tensor, coalesced: bool | None = None) -> SparseCOOTensor:
        return SparseCOOTensor._build(
            self._indices_t._array, values, self._array.shape,
            self._coalesced if coalesced is None else coalesced)

    # --- what makes it sparse ----------------------------------------------------------------
    @property
    def is_sparse(self) -> bool:
        return True

    @property
    def layout(self):
        return _layout.sparse_coo

    def sparse_dim(self) -> int:
        return self._indices_t._array.shape[0]

    def dense_dim(self) -> int:
        return self._values_t._array.ndim - 1

    def _nnz(self) -> int:
        return self._indices_t._array.shape[1]

    def _indices(self) -> Tensor:
        return self._indices_t

    def _values(self) -> Tensor:
        return self._values_t

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor; RuntimeError on an uncoalesced one."""
        if not self._coalesced:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices_t.detach()

    def values(self) -> Tensor:
        """The values of a coalesced tensor (gradients flow); RuntimeError on an uncoalesced one."""
        if not self._coalesced:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values_t

    def is_coalesced(self) -> bool:
        return self._coalesced

    def coalesce(self) -> SparseCOOTensor:
        """Entries sorted by index, duplicates summed (``torch.Tensor.coalesce``); self when
        already coalesced. Differentiable in the values."""
        if self._coalesced:
            return self
        from ._construct import coalesced

        return self._derive_sink(coalesced(self), lambda sink: sink)

    # --- autograd state lives in the values --------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._values_t._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._values_t.requires_grad = value
        self._leaf = self._leaf or bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> SparseCOOTensor:
        self._values_t.requires_grad_(requires_grad)
        self._leaf = self._leaf or requires_grad
        return self

    @property
    def grad(self):
        """The gradient with respect to this matrix at its entries, a coalesced sparse tensor of
        its pattern (as ``torch.sparse.mm``'s; ``torch.mm``'s is dense). NOTE: duplicates of one
        index all receive that index's gradient, so it is read once per index."""
        sparse = self._sparse_grad()
        full = self._sink._grad if isinstance(self._sink, Tensor) else None
        if full is None:
            return sparse
        return full if sparse is None else full + sparse

    def _sparse_grad(self):
        g = self._values_t.grad
        if g is None:
            return None
        if self._coalesced:
            return self._with_values(g)
        idx = self._indices_t._array
        linear = np.ravel_multi_index(tuple(idx), self._array.shape[: idx.shape[0]])
        _, first = np.unique(linear, return_index=True)
        return SparseCOOTensor._build(
            np.ascontiguousarray(idx[:, first]), Tensor._make(g._array[first]),
            self._array.shape, True)

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and not value._sparse:  # a dense gradient (NOTE [Sparse ...])
            self._values_t.grad = None
            if self._dense_grad_sink() is None:
                raise RuntimeError("glassgrad: a dense .grad can be set only on a sparse leaf "
                                   "that requires grad")
            self._sink.grad = value
            return
        self._values_t.grad = None if value is None else self._on_pattern(value)
        if isinstance(self._sink, Tensor):
            self._sink.grad = None

    def _on_pattern(self, value: SparseCOOTensor) -> Tensor:
        """A sparse gradient ``value`` as a gradient of the values: read at this tensor's
        entries (``.grad`` reads it back on the pattern, so a zeroed or reordered gradient is
        kept); RuntimeError for an entry outside the pattern, which the values cannot hold."""
        if tuple(value.shape) != tuple(self.shape):
            raise RuntimeError(f"assigned grad has data of a different size: {list(value.shape)} "
                               f"!= {list(self.shape)}")
        if value._indices_t._array.shape == self._indices_t._array.shape and np.array_equal(
                value._indices_t._array, self._indices_t._array) and self._coalesced:
            return value._values_t
        from ._construct import to_dense

        dense = to_dense(value.detach())._array
        where = tuple(self._indices_t._array)
        mask = np.ones(dense.shape[: len(where)], bool)
        mask[where] = False
        if np.any(dense[mask]):
            raise NotImplementedError(
                "glassgrad: a sparse .grad with entries outside the sparse leaf's own pattern is "
                "not implemented (the gradient lives in the leaf's values).")
        return Tensor._make(np.ascontiguousarray(dense[where]).astype(
            self._values_t._array.dtype, copy=False))

    # NOTE: optimizers and zero_grad read and reset ``p._grad``; for a sparse leaf that is the
    # ``grad`` above (the Tensor slot would stay None, so updates and resets would skip it)
    @property
    def _grad(self):
        return self.grad if hasattr(self, "_values_t") else None

    @_grad.setter
    def _grad(self, value) -> None:
        if hasattr(self, "_values_t"):  # not while Tensor._make initialises the slots
            self.grad = value

    def zero_(self) -> SparseCOOTensor:
        """No entries left (``torch.Tensor.zero_`` on a sparse tensor: nnz becomes 0), in
        place; torch's RuntimeError on a leaf that requires grad."""
        if self.requires_grad and self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        values = self._values_t._array
        self._indices_t = Tensor._make(np.zeros((self.sparse_dim(), 0), np.int64))
        self._values_t = Tensor._make(np.zeros((0, *values.shape[1:]), values.dtype))
        self._coalesced = True
        return self

    def detach(self) -> SparseCOOTensor:
        return self._with_values(self._values_t.detach())

    def clone(self, *, memory_format=None) -> SparseCOOTensor:
        return SparseCOOTensor._build(
            self._indices_t._array.copy(), self._values_t.clone(), self._array.shape,
            self._coalesced)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = SparseCOOTensor._build(
                self._indices_t._array.copy(), self._values_t.__deepcopy__(memo),
                self._array.shape, self._coalesced)
            memo[id(self)]._leaf = self._leaf  # a copy of a leaf is a leaf (torch's)
        return memo[id(self)]

    @property
    def data(self) -> SparseCOOTensor:
        return self.detach()

    def __reduce_ex__(self, protocol):  # NOTE: values detached: torch's copy needs no grad
        return (_rebuild, (self._indices_t._array.copy(), self._values_t.detach(),
                           self._array.shape, self._coalesced))

    def __setitem__(self, key, value) -> None:
        raise TypeError("Cannot assign to a sparse tensor\nglassgrad: build a new one with "
                        "sparse_coo_tensor, or assign into .to_dense().")

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    # --- conversions -------------------------------------------------------------------------
    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense tensor (duplicates summed); differentiable in the values
        (``torch.Tensor.to_dense``). RuntimeError for ``dtype``, as in PyTorch."""
        from ._construct import to_dense

        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        return to_dense(self)

    def to_sparse(self, *args, **kwargs) -> SparseCOOTensor:
        from ._construct import check_to_sparse_layout

        check_to_sparse_layout(kwargs.get("layout"))
        if kwargs.get("layout") is _layout.sparse_csr:
            return self.to_sparse_csr()
        return self

    def to(self, *args, **kwargs) -> SparseCOOTensor:
        """``to(dtype)``, ``to(device)``, ``to(other)``: the values converted; self when nothing
        changes."""
        from ..backend import device as _device

        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, _device)):
                _device(a)
        if kwargs.get("device") is not None:
            _device(kwargs["device"])
        if dtype is None or dtype == self.dtype:
            return self
        return self._with_values(self._values_t.to(dtype))

    def cpu(self, memory_format=None) -> SparseCOOTensor:
        return self

    def cuda(self, device=None, non_blocking=False) -> SparseCOOTensor:
        return self.to("cuda" if device is None else device)

    def float(self, memory_format=None) -> SparseCOOTensor:
        return self.to(dtypes.float32)

    def double(self, memory_format=None) -> SparseCOOTensor:
        return self.to(dtypes.float64)

    def long(self, memory_format=None) -> SparseCOOTensor:
        return self.to(dtypes.int64)

    def t(self) -> SparseCOOTensor:
        """The transpose of a 2-D sparse tensor (uncoalesced: entries keep their order)."""
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        shape = self._array.shape
        return self._derive_sink(SparseCOOTensor._build(
            np.ascontiguousarray(self._indices_t._array[::-1]), self._values_t,
            (shape[1], shape[0]), False), lambda sink: sink.t())


def _rebuild(indices, values, shape, coalesced) -> SparseCOOTensor:
    """Unpickle (and ``copy.copy``) a sparse tensor."""
    return SparseCOOTensor._build(indices, values, tuple(shape), coalesced)


# NOTE [Sparse gradients]: a backward may return a sparse COO gradient (``F.embedding(...,
# sparse=True)``). Its ``_array`` is then a ``_SparseGradArray``, which the engine's array loop
# (first order, engine_arrays.py) carries like any array: shape and dtype checks pass, ``+``
# concatenates two of them or densifies against a dense one. At AccumulateGrad the loop hands
# a sparse gradient, or any gradient for a ``.grad`` that is sparse, to ``_accumulate`` below:
# ``.grad`` becomes the sparse tensor, sparse + sparse stays sparse, and dense meets sparse as
# a dense sum, as PyTorch's AccumulateGrad does. Graph-recording backwards (create_graph=True,
# anomaly mode) refuse sparse gradients in the op that makes them.
def _accumulate(variable, g) -> None:
    if type(g._array) is _SparseGradArray:
        g = g._array.unwrap()
    old = variable._grad
    if old is None:
        variable._grad = g
    elif old._sparse and g._sparse:
        variable._grad = old + g
    else:
        variable._grad = g + old if old._sparse else old + g
    for hook in list((variable._post_acc_hooks or {}).values()):
        if hook(variable) is not None:
            raise RuntimeError("hooks should return None.")


from ..autograd import engine_arrays as _engine_arrays  # noqa: E402

_engine_arrays._sparse_grad_type = _SparseGradArray
_engine_arrays._sparse_accumulate = _accumulate


def _is_leaf(self) -> bool:
    """torch's rule: a sparse tensor is a leaf unless built from values that have a history or
    require grad without being its own (``sparse_coo_tensor(i, v)`` with ``v.requires_grad``)."""
    values = self._values_t
    return values.grad_fn is None and (self._leaf or not values._requires_grad)


SparseCOOTensor.is_leaf = property(_is_leaf)
