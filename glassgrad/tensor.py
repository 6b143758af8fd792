"""``Tensor``: an array of the backend plus autograd state (``torch.Tensor``).

The raw array is ``_array``; ``.data`` is PyTorch's detached Tensor sharing storage. Ops and
methods are attached by ``_tensor_methods.py``; this file keeps state, properties and dunders.
"""

from __future__ import annotations


import numpy as np

from . import dtypes
from ._layout import strided as _strided
from .autograd import diagnostics as _diagnostics
from .autograd import engine
from .autograd import forward_ad as _forward_ad
from .autograd import graph as _graph
from .autograd.grad_mode import _state
from .autograd.graph import InferenceVersion, RemovableHandle
from .backend import CPU_DEVICE, xp
from .ops import _overlap, primitive
from .ops._names import cast_error
from .ops import shape as _shape_ops
from ._user_warning import warn_user

_new = object.__new__
_ndarray = xp.ndarray
_BatchedArray = None  # NOTE [Batched arrays] in func/_batched_array.py; bound when func is imported


class Tensor:
    """A multi-dimensional array that records the operations applied to it (``torch.Tensor``).

    Shapes are tuples (``x.shape == (N, C)``); dtypes are ``glassgrad.float32`` etc. Create tensors
    with ``glassgrad.tensor``, ``zeros``, ``randn``...; set ``requires_grad=True`` on leaves whose
    gradient ``backward()`` should fill into ``.grad``.

    Example::

        >>> x = glassgrad.tensor(2.0, requires_grad=True)
        >>> (x ** 2).backward(); x.grad
        tensor(4.)
    """

    # NOTE [Hot path]: slots only; _make fills them without running __init__.
    __slots__ = (
        "__weakref__",
        "_array",
        "_base",
        "_grad",
        "_grad_acc",
        "_hooks",
        "_name",
        "_output_nr",
        "_post_acc_hooks",
        "_requires_grad",
        "_retains_grad",
        "_vc",
        "_view_fn",
        "grad_fn",
    )
    __array_priority__ = 1000  # numpy scalars/arrays on the left defer to our reflected dunders
    # the one flag test mm/matmul/sum make before handing a sparse operand to glassgrad/sparse/
    _sparse = False

    def __init__(self, *args, **kwargs):
        from . import _legacy

        t = _legacy.construct(dtypes.get_default_dtype(), args, kwargs, keep_tensor_dtype=True)
        _init_from(self, t._array)

    @classmethod
    def _make(cls, arr) -> Tensor:
        if arr.__class__ is not _ndarray and arr.__class__ is not _BatchedArray:
            # NOTE: NumPy returns scalars for 0-d results
            arr = xp.asarray(arr)
        t = _new(cls)
        t._array = arr
        t._requires_grad = False
        t.grad_fn = None
        t._grad = None
        t._vc = [0]
        t._base = None
        t._view_fn = None
        t._output_nr = 0
        t._grad_acc = None
        t._hooks = None
        t._post_acc_hooks = None
        t._retains_grad = False
        t._name = None
        return t

    # --- state -------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    def size(self, dim: int | None = None):
        """The shape (``torch.Size``), or the length of one dimension."""
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[_shape_ops.wrap_dim(dim, self._array.ndim, "size")]

    def dim(self) -> int:
        return self._array.ndim

    @property
    def ndim(self) -> int:
        return self._array.ndim

    def ndimension(self) -> int:
        return self._array.ndim

    def numel(self) -> int:
        return self._array.size

    def nelement(self) -> int:
        return self._array.size

    def element_size(self) -> int:
        return self._array.itemsize

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    @property
    def itemsize(self) -> int:
        return self._array.itemsize

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes._FROM_NP[self._array.dtype]

    @property
    def device(self):
        return CPU_DEVICE

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        return self._array.dtype.kind == "f" or self._array.dtype == dtypes.bfloat16.np

    def is_contiguous(self, memory_format=None) -> bool:
        return self._array.flags.c_contiguous

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def _version(self) -> int:
        if self._vc.__class__ is InferenceVersion:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0] & _diagnostics.VERSION_MASK  # NOTE [Diagnostics]: .data writes

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            raise RuntimeError(_non_leaf_flag_message(self, bool(value)))
        self._set_requires_grad(bool(value), "only Tensors of floating point and complex dtype")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return self (``torch.Tensor.requires_grad_``).

        Raises RuntimeError for a non-floating dtype, or ``False`` on a non-leaf.
        """
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_non_leaf_flag_message(self, False))
            return self
        self._set_requires_grad(bool(requires_grad), "only Tensors of floating point dtype")
        return self

    def _set_requires_grad(self, value: bool, what: str) -> None:
        if value and not self.is_floating_point() and self._array.dtype.kind != "c":
            raise RuntimeError(
                f"{what} can require gradients\n"
                f"glassgrad: this tensor is {self.dtype}; convert it first with .float()."
            )
        if value and self._vc.__class__ is InferenceVersion and not _state.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed.\nglassgrad: this tensor was made under inference_mode(); use "
                "x.clone() outside it first."
            )
        self._requires_grad = value

    def is_inference(self) -> bool:
        """True for a tensor made under ``inference_mode()`` (``torch.Tensor.is_inference``)."""
        return self._vc.__class__ is InferenceVersion

    @property
    def grad(self):
        """The accumulated gradient of a leaf (None until a backward reaches it)."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warn_user(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
                "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
                "information. (glassgrad: this tensor is the output of "
                f"{self.grad_fn.name()}.)",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad\nglassgrad: assign a "
                                   "copy (x.grad = x.detach().clone()) if that is what you mean.")
            if value._array.shape != self._array.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size"
                )
            if value._array.dtype != self._array.dtype:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{value.dtype}' to a tensor with dtype '{self.dtype}'. Please ensure that the "
                    "gradient and the tensor have the same dtype"
                )
        self._grad = value

    @property
    def data(self) -> Tensor:
        """A detached Tensor sharing storage, outside version tracking (``torch.Tensor.data``)."""
        out = Tensor._make(self._array)
        out._vc = _diagnostics.data_version(self._vc)  # NOTE [Diagnostics]: writes are detected
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        self._array = value._array

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        return self._output_nr

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def T(self) -> Tensor:
        return self.permute(*range(self._array.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:
        nd = self._array.ndim
        if nd == 0:
            return self  # PyTorch: the identity on 0-d (deprecated there)
        if nd == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               "Got 1-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self) -> Tensor:
        return self.T.conj()

    @property
    def mH(self) -> Tensor:
        return self.mT.conj()

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def layout(self):
        return _strided

    @property
    def names(self):
        return (None,) * self._array.ndim

    # --- autograd ----------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves (``torch.Tensor.backward``).

        ``gradient`` must be given for non-scalar tensors; ``retain_graph`` defaults to
        ``create_graph``; ``inputs`` limits which leaves receive ``.grad``. Raises RuntimeError when
        the graph was freed by an earlier backward or nothing requires grad.
        """
        engine.backward((self,), None if gradient is None else (gradient,), retain_graph,
                        create_graph, inputs)

    def detach(self) -> Tensor:
        """A new tensor sharing storage and version counter, cut from the graph."""
        out = Tensor._make(self._array)
        out._vc = self._vc
        return out

    def detach_(self) -> Tensor:
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel"
                " (DDP) for training, ... glassgrad: this tensor is a view; use detach()."
            )
        self.grad_fn = None
        self._requires_grad = False
        return self

    def _alias(self) -> Tensor:
        """Same buffer and version counter, no history: what a saved output keeps."""
        out = Tensor._make(self._array)
        out._vc = self._vc
        return out

    def _snapshot(self) -> Tensor:
        """A copy carrying this tensor's history: the pre-write value an in-place op saves."""
        out = Tensor._make(self._array.copy())
        out._requires_grad = self._requires_grad
        out.grad_fn = self.grad_fn
        out._output_nr = self._output_nr
        out._grad_acc = self._grad_acc
        if self.grad_fn is None and self._requires_grad:
            out._grad_acc = None
        if _graph._Hooks.forward_ad is not None:  # NOTE [Forward AD] in autograd/forward_ad.py
            _forward_ad.copy_tangent(self, out)
        return out

    def retain_grad(self) -> None:
        """Populate ``.grad`` for this non-leaf during backward (``torch.Tensor.retain_grad``)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._retain_grad_of(self, self._output_nr)

    def register_hook(self, hook) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """``hook(tensor)`` after ``.grad`` of this leaf was updated by backward."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        handle = RemovableHandle(self._post_acc_hooks)
        self._post_acc_hooks[handle.id] = hook
        return handle

    # --- in-place machinery (see Primitive.apply_inplace) -----------------------------------
    def _write(self, out, op: str) -> None:
        arr = self._array
        if out.shape != arr.shape:
            try:
                shape = np.broadcast_shapes(out.shape, arr.shape)
            except ValueError:
                shape = None
            if shape != arr.shape:
                raise RuntimeError(
                    f"output with shape {list(arr.shape)} doesn't match the broadcast shape "
                    f"{list(shape) if shape is not None else list(out.shape)} (in-place {op})"
                )
        if out.dtype != arr.dtype:
            src, dst = dtypes._FROM_NP.get(out.dtype), dtypes._FROM_NP[arr.dtype]
            if src is not None and src._kind > dst._kind:
                if src.is_floating_point:  # NOTE: NumPy's float16/float64 for an int's exp()
                    src = dtypes.get_default_dtype()  # is PyTorch's default float
                raise cast_error(src, dst, f"in-place {op}")
        if not arr.flags.writeable:  # NOTE [Expanded writes] in ops/_overlap.py
            alias = _overlap.writable(arr, op)
            if alias is None:
                raise RuntimeError(f"glassgrad: in-place {op} on a read-only tensor")
            if _overlap.internal_overlap(arr):
                _overlap.write_changed(alias, arr.copy(), out)
                out = alias  # (written: the copy below copies it onto itself)
            arr = alias
        if self._vc.__class__ is InferenceVersion and not _state.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                "make a clone to get a normal tensor before doing inplace update.See "
                "https://github.com/pytorch/rfcs/pull/17 for more details.\n"
                f"glassgrad: in-place {op} on a tensor made under inference_mode()."
            )
        vc = self._vc
        if len(vc) > 1:  # NOTE [Diagnostics]: saved for backward, or a .data tensor
            _diagnostics.note_write(self, op)
        xp.copyto(arr, out, casting="unsafe")
        vc[0] += 1

    def _rebase_history(self) -> None:
        """After a recorded in-place write: a view routes its base through the write, and the
        base's other views follow its new history (NOTE [Stale views] in ops/_util.py)."""
        base = self._base
        if base is None:
            _shape_ops.refresh_views(self, None)
            return
        _shape_ops.rebase_view(self, base)
        _shape_ops.refresh_views(base, self)

    # --- conversions -------------------------------------------------------------------------
    def numpy(self, *, force: bool = False):
        """The array itself (shares memory); RuntimeError if this tensor requires grad and grad
        mode is on (torch allows it under no_grad)."""
        if self._requires_grad and not force and _state.enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self._array

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._array.size} elements cannot be converted to Scalar"
            )
        return self._array.reshape(()).item() if self._array.dtype != dtypes.bfloat16.np else float(
            self._array.reshape(())
        )

    def tolist(self):
        if self._array.dtype == dtypes.bfloat16.np:
            return self._array.astype(np.float32).tolist()
        return self._array.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous (shape {list(self.shape)})"
            )
        return bool(self._array.reshape(()))

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self) -> str:
        from ._repr import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._array.ndim == 0:
            return format(self.item(), spec)
        return repr(self)

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)._make(self._array.copy()) if type(self) is Tensor else self._deepcopy_as(
            self._array.copy())
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out

    def _deepcopy_as(self, arr):
        out = Tensor._make(arr)
        return out

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._array.copy(), self._requires_grad))

    def __setstate__(self, state):  # pragma: no cover - pickling goes through _rebuild
        raise TypeError("glassgrad tensors are rebuilt by _rebuild")


def _non_leaf_flag_message(t, value: bool) -> str:
    msg = "you can only change requires_grad flags of leaf variables."
    if not value:
        msg += (
            " If you want to use a computed variable in a subgraph that doesn't require "
            "differentiation use var_no_grad = var.detach()."
        )
    return msg + f"\nglassgrad: this tensor was made by {t.grad_fn.name()}; detach() it instead."


def _rebuild(arr, requires_grad):
    t = Tensor._make(arr)
    t._requires_grad = requires_grad
    return t


def _init_from(t: Tensor, arr) -> None:
    t._array = arr
    t._requires_grad = False
    t.grad_fn = None
    t._grad = None
    t._vc = [0]
    t._base = None
    t._view_fn = None
    t._output_nr = 0
    t._grad_acc = None
    t._hooks = None
    t._post_acc_hooks = None
    t._retains_grad = False
    t._name = None


class Size(tuple):
    """A shape (``torch.Size``): a tuple of ints with ``numel()``."""

    __slots__ = ()

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"glassgrad.Size({list(self)})"

    def __getitem__(self, key):
        try:
            out = tuple.__getitem__(self, key)
        except IndexError:
            raise IndexError(f"tuple index out of range\nglassgrad: index {key} of a Size of "
                             f"{len(self)} dims {list(self)}.") from None
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


primitive._make = Tensor._make
engine._Tensor = Tensor
_graph._make_tensor = Tensor._make
_ = _state
