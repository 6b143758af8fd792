"""Tensor methods of storage and strides (issue 15, lane surface): ``stride``, ``storage_offset``,
``data_ptr``, ``untyped_storage``, ``set_``, ``resize_``, ``as_strided``, memory formats (NOTE
[Storage] in _storage.py). Attached with setattr, as _tensor_methods.py does."""

from __future__ import annotations

import mmap
import sys
import warnings

import numpy as np

from . import _memory_format as _mf
from . import _storage
from . import dtypes
from .ops import primitive, strided
from .ops import shape as _shape_ops
from .ops._util import wrap_dim
from .ops.primitive import Primitive
from .tensor import Tensor

# torch's C++ type names, as its set_ error prints them
_C_TYPE = {dtypes.float32: "float", dtypes.float64: "double", dtypes.float16: "c10::Half",
           dtypes.bfloat16: "c10::BFloat16", dtypes.int64: "long int", dtypes.int32: "int",
           dtypes.int16: "short int", dtypes.int8: "signed char", dtypes.uint8: "unsigned char",
           dtypes.bool: "bool"}


def stride(self, dim=None):
    """Element strides (a tuple), or one dim's stride (``torch.Tensor.stride``); zeros for a
    sparse tensor, as torch gives."""
    s = (0,) * self._array.ndim if self._sparse else _storage.strides(self._array)
    if dim is None:
        return s
    return s[wrap_dim(int(dim), self._array.ndim, "stride")]


def storage_offset(self) -> int:
    """Elements from the start of the storage to the first element (``Tensor.storage_offset``)."""
    return 0 if self._sparse else _storage.storage_offset(self._array)


def data_ptr(self) -> int:
    """Address of the first element; 0 for an empty storage (``torch.Tensor.data_ptr``)."""
    _no_storage(self, "data")
    return _storage.data_ptr(self._array)


def _no_storage(self, what: str) -> None:
    """torch's errors for the storage of a sparse tensor, which has none."""
    if not self._sparse:
        return
    if what == "data":
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
    raise NotImplementedError("Cannot access storage of SparseTensorImpl\nglassgrad: a sparse COO "
                              "tensor keeps indices and values; x._values() has a storage.")


def untyped_storage(self):
    """``_storage.untyped_storage`` after the sparse check (``Tensor.untyped_storage``)."""
    _no_storage(self, "storage")
    return _storage.untyped_storage(self)


def typed_storage(self):
    """``_storage.typed_storage`` after the sparse check (``Tensor.storage``)."""
    _no_storage(self, "storage")
    return _storage.typed_storage(self)


def storage_type(self) -> type:
    """The legacy storage class of this dtype (``torch.Tensor.storage_type``)."""
    return _storage.storage_class(self.dtype)


def is_set_to(self, tensor) -> bool:
    """True when both tensors view the same storage with the same offset, sizes and strides
    (``torch.Tensor.is_set_to``)."""
    a, b = self._array, tensor._array
    return (_storage.storage_bounds(a) == _storage.storage_bounds(b) and a.shape == b.shape
            and a.strides == b.strides and _storage.data_ptr(a) == _storage.data_ptr(b))


def _check_inplace(self):
    if primitive._state.enabled and self._requires_grad:
        primitive._check_inplace_leaf(self)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Point this tensor at ``source``'s memory (``torch.Tensor.set_``): a tensor (its storage,
    offset, sizes and strides), or a storage with ``storage_offset``/``size``/``stride`` (default:
    all of it, contiguous); no argument: an empty tensor with its own storage. RuntimeError for a
    dtype other than self's or a window outside the storage (glassgrad cannot grow a storage that
    other arrays share). A leaf's AccumulateGrad node is no longer its gradient edge afterwards
    (graphs recorded before still accumulate into it), as in PyTorch."""
    _check_inplace(self)
    self._grad_acc = None
    arr = self._array
    if source is None:
        self._array = np.empty(0, arr.dtype)
        return self
    if isinstance(source, Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_C_TYPE.get(source.dtype)} to a "
                               f"tensor of type {_C_TYPE.get(self.dtype)}\nglassgrad: convert "
                               f"the source with .to({self.dtype}) first.")
        if size is None and storage_offset == 0 and stride is None:
            self._array = source._array.view()
            return self
        raw = _storage.bytes_of(source._array)
    elif isinstance(source, _storage.TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype} or an UntypedStorage, "
                               f"but got type {source.dtype}")
        raw = source.untyped()._bytes
    elif isinstance(source, _storage.UntypedStorage):
        raw = source._bytes
    else:
        raise TypeError(f"set_() received an invalid combination of arguments - got "
                        f"({type(source).__name__}), expected a Tensor or a Storage")
    item = arr.itemsize
    if size is None:
        size = (raw.size // item - int(storage_offset),)
    size = tuple(int(s) for s in size)
    stride = _contiguous_strides(size) if stride is None else tuple(int(s) for s in stride)
    need = _storage.required_size(size, stride, int(storage_offset)) * item
    if need > raw.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {item} requiring a storage size of {need} are out of "
            f"bounds for storage of size {raw.size}\nglassgrad: storages do not grow here; make "
            "the source big enough first.")
    self._array = _storage.view_of(raw, size, stride, int(storage_offset), arr.dtype)
    return self


def _contiguous_strides(size, order=None) -> tuple:
    order = tuple(range(len(size))) if order is None else order
    out, step = [0] * len(size), 1
    for d in reversed(order):
        out[d] = step
        step *= max(size[d], 1)
    return tuple(out)


def resize_(self, *sizes, memory_format=None):
    """Give this tensor a new shape in place, contiguous from its storage offset; growing keeps
    the storage's old bytes (``torch.Tensor.resize_``). RuntimeError "cannot resize variables that
    require grad" (not inside inference_mode, which skips autograd's checks as PyTorch's
    does); "Trying to resize storage that is not resizable" when it must grow a storage
    that other arrays see (a view, a NumPy array, a saved tensor): glassgrad cannot move memory
    under them, torch can."""
    if self._requires_grad and not primitive._state.inference:
        raise RuntimeError("cannot resize variables that require grad")
    size = _shape_ops._shape_arg(sizes, "resize_")
    if any(s < 0 for s in size):
        raise RuntimeError(f"numel: integer multiplication overflow\nglassgrad: resize_ got the "
                           f"negative size {list(size)}.")
    if memory_format is None and tuple(size) == self._array.shape:
        return self  # a no-op, as in PyTorch: strides and version stay
    order = _mf.order_of(memory_format, len(size), "resize_")
    stride = _contiguous_strides(size, order)
    offset = _storage.storage_offset(self._array)
    need = _storage.required_size(size, stride, offset)
    if need * self._array.itemsize > _storage.storage_bounds(self._array)[1]:
        if not _sole_user(self):  # (before any local name holds the array)
            raise RuntimeError(
                "Trying to resize storage that is not resizable\nglassgrad: growing would move "
                "this tensor's memory away from the other arrays that share it (a base or views, "
                "a NumPy array from from_numpy, a tensor saved for backward); clone() it first.")
        grown = np.zeros(need, self._array.dtype)
        old = _storage.bytes_of(self._array)
        grown.view(np.uint8)[: old.size] = old
        self._array = grown
    self._array = _storage.view_of(self._array, size, stride, offset)
    self._vc[0] += 1
    return self


def _sole_user(self) -> bool:
    """True when no array but this tensor's sees its storage: each link from its array down to the
    owner of the memory is referenced only by the link above it (and by this function)."""
    chain, a = [], self._array
    while a is not None:
        chain.append(a)
        a = a.base
        if a is not None and not isinstance(a, np.ndarray) and not hasattr(a, "base"):
            return False  # memory NumPy does not own (a buffer, a file)
    # NOTE: 4 references each: the attribute or base above it, `chain`, `link`, getrefcount's
    # argument
    return all(sys.getrefcount(link) <= 4 for link in chain)


def resize_as_(self, the_template, memory_format=None):
    """``resize_`` to ``the_template``'s shape (``torch.Tensor.resize_as_``)."""
    return resize_(self, the_template._array.shape, memory_format=memory_format)


def _resize(self, size, op):
    size = tuple(size)
    n = int(np.prod(size, dtype=np.int64))
    if n != self._array.size:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, size))} ({n} elements in total), but the "
            f"given tensor has a size of {'x'.join(map(str, self._array.shape))} "
            f"({self._array.size} elements). autograd's resize can only change the shape of a "
            "given tensor, while preserving the number of elements. ")
    return _shape_ops.reshape(self, size)


def resize(self, *sizes):
    """Deprecated out-of-place resize: a reshape that keeps the element count
    (``torch.Tensor.resize``)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize(self, _shape_ops._shape_arg(sizes, "resize"), "resize")


def resize_as(self, tensor):
    """Deprecated out-of-place ``resize_as`` (``torch.Tensor.resize_as``)."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize(self, tensor._array.shape, "resize_as")


def dim_order(self, *, ambiguity_check=False) -> tuple:
    """Dims from outermost to innermost in memory (``torch.Tensor.dim_order``)."""
    if self._sparse:
        name = dtypes.type_name(self.dtype).replace("torch.", "torch.sparse.", 1)
        raise AttributeError(f"Can't get dim order on sparse type: {name} Use "
                             "Tensor.to_dense() to convert to a dense tensor first.")
    s = _storage.strides(self._array)
    return tuple(sorted(range(len(s)), key=lambda d: -s[d]))


def is_contiguous(self, memory_format=None) -> bool:
    """True when densely packed in C order, or in ``memory_format``'s order
    (``torch.Tensor.is_contiguous``)."""
    arr = self._array
    if self._sparse:
        return False
    if memory_format is None or memory_format is _mf.contiguous_format:
        return arr.flags.c_contiguous
    rank, order = _mf._ORDER.get(memory_format, (None, None))
    if rank != arr.ndim:
        return False
    return _mf.dense_in_order(arr.shape, _storage.strides(arr), order)


class ContiguousCopy(Primitive):
    """A copy laid out in a given dim order (``x.contiguous(memory_format=...)``)."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(xp, x, *, order):
        # a copy even when x already lies in that order: clone(memory_format=) uses it too
        return xp.array(x.transpose(order), order="C").transpose(np.argsort(order))

    @staticmethod
    def backward(grad, *, order):
        return (grad,)


def contiguous(self, memory_format=None):
    """Self when already laid out as asked, else a copy (``torch.Tensor.contiguous``);
    ``memory_format=glassgrad.channels_last`` asks for channels innermost."""
    order = _mf.order_of(memory_format, self._array.ndim)
    if order is None:
        return self if self._array.flags.c_contiguous else _clone(self)
    if is_contiguous(self, memory_format):
        return self
    return ContiguousCopy.apply(self, order=order)


def is_shared(self) -> bool:
    """True when the storage is a memory map: moved there by ``share_memory_`` (processes forked
    afterwards see writes) or mapped from a file (``from_file``) (``torch.Tensor.is_shared``)."""
    _no_storage(self, "storage")
    return _storage.in_shared_memory(self._array)


def share_memory_(self):
    """Move the storage into anonymous shared memory, which processes forked later share (torch's
    Hogwild pattern), keeping sizes, strides and values (``torch.Tensor.share_memory_``); self.
    RuntimeError when other arrays see the storage (views, a NumPy array): glassgrad cannot move
    memory under them."""
    if is_shared(self) or _storage.storage_bounds(self._array)[1] == 0:
        return self
    if not _sole_user(self):  # (before any local name holds the array)
        raise RuntimeError(
            "share_memory_: glassgrad cannot move this tensor's storage into shared memory while "
            "other arrays see it (a base or views, a NumPy array from from_numpy); call it on the "
            "base tensor before making views, or on a clone().")
    old = _storage.bytes_of(self._array)
    buf = mmap.mmap(-1, old.size)
    raw = np.frombuffer(buf, np.uint8)
    raw[:] = old
    arr = self._array
    offset = _storage.storage_offset(arr)
    self._array = _storage.view_of(raw, arr.shape, _storage.strides(arr), offset, arr.dtype)
    return self


def _clone(x):
    from .ops.fill import clone

    return clone(x)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """``empty_strided`` with self's dtype by default (``torch.Tensor.new_empty_strided``)."""
    return strided.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                                 requires_grad=requires_grad)


for _name, _fn in {
    "stride": stride, "storage_offset": storage_offset, "data_ptr": data_ptr,
    "const_data_ptr": data_ptr, "storage_type": storage_type, "is_set_to": is_set_to,
    "set_": set_, "resize_": resize_, "resize_as_": resize_as_, "resize": resize,
    "resize_as": resize_as, "dim_order": dim_order, "is_contiguous": is_contiguous,
    "contiguous": contiguous, "new_empty_strided": new_empty_strided,
    "untyped_storage": untyped_storage, "storage": typed_storage,
    "as_strided": strided.as_strided, "as_strided_": strided.as_strided_,
    "as_strided_scatter": strided.as_strided_scatter,
    "is_pinned": lambda self, device=None: False, "is_shared": is_shared,
    "share_memory_": share_memory_, "is_distributed": lambda self: False,
}.items():
    setattr(Tensor, _name, _fn)
