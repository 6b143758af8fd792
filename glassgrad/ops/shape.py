"""View primitives and their public functions (``torch.reshape``, ``permute``, ``expand``, ...).

NOTE [Views]: ``reshape``/``view``/``permute``/``transpose``/``expand``/``diagonal``/basic slicing
return NumPy views. The result remembers its base and a function that re-derives it from the base
(``_view_fn``), and shares the base's version counter. An in-place op through a view then rewrites
the base's history with ``CopySlices`` (PyTorch's "rebase history"), so gradients stay right.

Joins and splits live in joins.py, reorderings and repeats in rearrange.py, triangles and
diagonals in diagonal.py; all are re-exported here (``ops.shape.cat`` keeps working).
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import _state
from ..autograd.graph import move_retain
from . import _util, primitive
from ._util import is_tensor, mark_view, wrap_dim, wrap_dims
from .primitive import Primitive, _record


class Reshape(Primitive):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(xp, x, *, shape, src):
        return x.reshape(shape)

    @staticmethod
    def backward(grad, *, shape, src):
        return (reshape(grad, src),)


class Permute(Primitive):
    @staticmethod
    def forward(xp, x, *, dims):
        return x.transpose(dims)

    @staticmethod
    def backward(grad, *, dims):
        return (permute(grad, *np.argsort(dims).tolist()),)


# NOTE [Node names]: the same primitive under PyTorch's node name for the public function that
# made it (``x.t()`` is TBackward0, ``x.transpose`` TransposeBackward0); forward and backward are
# the base's, and vmap finds the base's batching rule (func/_batched_rules.py looks up the MRO)
class T(Permute):
    node_name = "TBackward0"


class Transpose(Permute):
    node_name = "TransposeBackward0"


class Unsqueeze(Reshape):
    node_name = "UnsqueezeBackward0"


class Squeeze(Reshape):  # squeeze(): every size-1 dim
    node_name = "SqueezeBackward0"


class SqueezeDim(Reshape):  # squeeze(dim)
    node_name = "SqueezeBackward1"


class SqueezeDims(Reshape):  # squeeze((dim, ...))
    node_name = "SqueezeBackward2"


class Expand(Primitive):
    @staticmethod
    def forward(xp, x, *, shape):
        return xp.broadcast_to(x, shape)

    @staticmethod
    def backward(grad, *, shape):
        return (grad,)  # the engine sums back to the input's shape


class SumToSize(Primitive):
    node_name = "SumToSizeBackward0"

    @staticmethod
    def forward(xp, x, *, shape, src):
        return _sum_to(x, shape)

    @staticmethod
    def backward(grad, *, shape, src):
        return (expand(grad, src),)


def _sum_to(x, shape):
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1
    )
    if not axes:
        out = x
    elif _util.half(x.dtype):  # NOTE [16-bit accumulation] in ops/_util.py
        out = x.sum(axis=axes, keepdims=True, dtype=np.float32).astype(x.dtype)
    else:
        out = x.sum(axis=axes, keepdims=True)
    if lead:
        out = out.reshape(shape)
    return out if out is not x else x.copy()


class CopySlices(Primitive):
    """The base's new history after an in-place write through one of its views."""

    node_name = "CopySlices"  # PyTorch's class name (its name() adds "torch::autograd::")
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py (PyTorch drops its fn)

    @staticmethod
    def forward(xp, base, value, *, view_fn):  # pragma: no cover - recorded, never run forward
        raise NotImplementedError

    @staticmethod
    def backward(grad, *, view_fn):
        # NOTE: the written positions are found by passing flat positions through view_fn, not by
        # writing True through a view of a mask: view_fn may copy (a reshape of a transposed mask)
        positions = np.arange(grad._array.size).reshape(grad._array.shape)
        with _no_grad():
            written = view_fn(primitive._make(positions))._array
        mask = np.zeros(grad._array.size, dtype=bool)
        mask[written.reshape(-1)] = True
        grad_base = where_mask(mask.reshape(grad._array.shape), grad)
        return grad_base, view_fn(grad)


def where_mask(mask_arr, grad):
    from .elementwise import Where

    zero = primitive._make(np.zeros((), dtype=grad._array.dtype))
    return Where.apply(zero, grad, condition=mask_arr)


class _no_grad:
    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev


def refresh_views(base, written) -> None:
    """NOTE [Stale views] in _util.py: after a recorded in-place write to ``base`` (or through
    its view ``written``, rebased already), every other live view of ``base`` takes a grad_fn
    over the base's new history, replayed from its ``_view_fn``."""
    views = _util.VIEWS.get(id(base))
    if not views:
        return
    prev = _state.enabled
    _state.enabled = True
    try:
        for ref in list(views.values()):
            view = ref()
            if view is None or view is written:
                continue
            fresh = view._view_fn(base)
            if view._retains_grad and fresh.grad_fn is not None:
                move_retain(view, fresh.grad_fn, fresh._output_nr)
            view.grad_fn = fresh.grad_fn
            view._output_nr = fresh._output_nr
            view._requires_grad = fresh._requires_grad
            views.pop(id(fresh), None)
    finally:
        _state.enabled = prev


def rebase_view(view, base) -> None:
    """After ``view`` was written in place (its grad_fn is the write), route the base through it."""
    old_base = primitive._make(base._array)
    old_base._requires_grad = base._requires_grad
    old_base.grad_fn = base.grad_fn
    old_base._output_nr = base._output_nr
    old_base._grad_acc = base._grad_acc
    written = primitive._make(view._array)
    written._requires_grad = True
    written.grad_fn = view.grad_fn
    _record(CopySlices, base, (old_base, written), {"view_fn": view._view_fn})
    prev = _state.enabled
    _state.enabled = True
    try:
        fresh = view._view_fn(base)
    finally:
        _state.enabled = prev
    if view._retains_grad:
        move_retain(view, fresh.grad_fn, fresh._output_nr)
    view.grad_fn = fresh.grad_fn
    view._output_nr = fresh._output_nr


def _shape_arg(shape, op: str = "") -> tuple:
    """Varargs or one tuple/list of ints -> a tuple of ints; TypeError (PyTorch's) for anything
    else: a float, str, None or bool is not a size."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(s if s.__class__ is int else _size_index(s) for s in shape)
    except TypeError:
        bad = next(s for s in shape if s.__class__ is not int and not _is_size(s))
        got = type(bad).__name__
        if op == "view":
            head = (f"view() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)")
        else:
            name = _SIZE_ARG.get(op, "size")
            head = f"{op + '(): ' if op else ''}argument '{name}' (position 1) must be tuple of " \
                   f"ints, not {got}"
        raise TypeError(
            f"{head}\nglassgrad: {op or 'a size argument'} takes ints (or one tuple of ints), "
            f"got {bad!r}; convert with int(...)."
        ) from None


_SIZE_ARG = {"reshape": "shape", "permute": "dims", "repeat": "repeats", "tile": "dims"}


def _is_size(s) -> bool:
    try:
        _size_index(s)
    except TypeError:
        return False
    return True


def _size_index(s) -> int:
    if isinstance(s, (bool, np.bool_)):
        raise TypeError("a bool is not a size")
    return operator.index(s)  # ints, NumPy integers, 0-d integer tensors; not floats or str


def _infer_shape(shape, numel, op, src):
    if -1 in shape:
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {numel}\n"
                f"glassgrad: {op} of a tensor of shape {list(src)}: the other sizes multiply to "
                f"{known}, which does not divide {numel}."
            )
        shape = tuple(numel // known if s == -1 else s for s in shape)
    n = 1
    for s in shape:
        if s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        n *= s
    if n != numel:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {numel}\n"
            f"glassgrad: {op} of a tensor of shape {list(src)} ({numel} elements) to a shape of "
            f"{n} elements."
        )
    return shape


def reshape(input, *shape):
    """The same elements in a new shape; a view when possible (``torch.reshape``).

    ``shape`` is a tuple or varargs, one entry may be -1; RuntimeError when the sizes disagree."""
    shape = _infer_shape(_shape_arg(shape, "reshape"), input._array.size, "reshape",
                         input._array.shape)
    if shape == input._array.shape:
        return _alias_view(input)
    out = Reshape.apply(input, shape=shape, src=input._array.shape)
    return mark_view(out, input, lambda b: reshape(b, shape))


def view(input, *shape):
    """Like reshape but always a view: RuntimeError when the strides do not allow one
    (``torch.Tensor.view``); ``view(dtype)`` reinterprets as another dtype of the same size."""
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        if shape[0].np == input._array.dtype:
            return _alias_view(input)
        if shape[0].itemsize != input._array.itemsize:
            raise RuntimeError(
                "glassgrad: view(dtype) between dtypes of different sizes is not supported "
                f"({input.dtype} to {shape[0]})"
            )
        return primitive._make(input._array.view(shape[0].np))  # bits reinterpreted, no grad
    shape_t = _infer_shape(_shape_arg(shape, "view"), input._array.size, "view",
                           input._array.shape)
    if not input._array.flags.c_contiguous and shape_t != input._array.shape:
        try:
            input._array.view().shape = shape_t
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.\n"
                f"glassgrad: viewing a non-contiguous {list(input.shape)} tensor as "
                f"{list(shape_t)}; call .contiguous() first or use .reshape()."
            ) from None
    return reshape(input, shape_t)


def _alias_view(x):
    out = Reshape.apply(x, shape=x._array.shape, src=x._array.shape)
    return mark_view(out, x, lambda b: b)


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """Merge dims ``start_dim..end_dim`` into one (``torch.flatten``); 0-d becomes (1,)."""
    nd = input._array.ndim
    if nd == 0:
        wrap_dim(start_dim, 0, "flatten")
        wrap_dim(end_dim, 0, "flatten")
        return reshape(input, 1)
    s = wrap_dim(start_dim, nd, "flatten")
    e = wrap_dim(end_dim, nd, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input  # PyTorch returns the input itself when no dims merge (its .grad is shared)
    shp = input._array.shape
    n = 1
    for d in shp[s : e + 1]:
        n *= d
    return reshape(input, shp[:s] + (n,) + shp[e + 1 :])


def unflatten(input, dim: int, sizes):
    """Split dim ``dim`` into ``sizes`` (one may be -1) (``torch.unflatten``)."""
    if input._array.ndim == 0:
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as "
                           f"{dim} but tensor has no dimensions")
    d = wrap_dim(dim, input._array.ndim, "unflatten")
    shp = input._array.shape
    sizes = tuple(sizes)
    sizes = _infer_shape(sizes, shp[d], "unflatten", shp)
    return reshape(input, shp[:d] + sizes + shp[d + 1 :])


def permute(input, *dims):
    """Reorder dims (``torch.permute``): a view."""
    dims = _shape_arg(dims, "permute")
    nd = input._array.ndim
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, nd, "permute") for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = Permute.apply(input, dims=dims)
    return mark_view(out, input, lambda b: permute(b, dims))


def transpose(input, dim0: int, dim1: int):
    """Swap two dims (``torch.transpose``): a view."""
    nd = input._array.ndim
    d0, d1 = wrap_dim(dim0, nd, "transpose"), wrap_dim(dim1, nd, "transpose")
    dims = list(range(nd))
    if nd:
        dims[d0], dims[d1] = dims[d1], dims[d0]
    dims = tuple(dims)
    out = Transpose.apply(input, dims=dims)
    return mark_view(out, input, lambda b: transpose(b, d0, d1))


swapaxes = swapdims = transpose


def t(input):
    """Transpose a 0-2 dim tensor (``torch.t``)."""
    if input._array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    out = T.apply(input, dims=(1, 0) if input._array.ndim == 2 else tuple(range(input._array.ndim)))
    return mark_view(out, input, t)


def adjoint(input):
    """The last two dims swapped and conjugated (a no-op for real dtypes) (``torch.adjoint``)."""
    return transpose(input, -2, -1).conj()


def expand(input, *sizes):
    """Broadcast to a larger shape without copying; -1 keeps a dim (``torch.Tensor.expand``).

    RuntimeError when a non-singleton size differs or -1 names a new leading dim."""
    sizes = _shape_arg(sizes, "expand")
    src = input._array.shape
    if len(sizes) < len(src):
        raise RuntimeError(
            f"expand({dtypes.type_name(input.dtype)}{{{list(src)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(src)})"
        )
    lead = len(sizes) - len(src)
    for i, s in enumerate(sizes[:lead]):
        if s < 0:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                f"dimension {i}"
            )
    shape = tuple(src[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes))
    for i, s in enumerate(src):
        if s != 1 and s != shape[i + lead]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i + lead]}) must match the existing size "
                f"({s}) at non-singleton dimension {i + lead}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(src)}\nglassgrad: only size-1 dims can be expanded; use "
                ".repeat() to copy data along a dim of another size."
            )
    if shape == src:
        return _alias_view(input)
    out = Expand.apply(input, shape=shape)
    return mark_view(out, input, lambda b: expand(b, shape))


def expand_as(input, other):
    """``expand`` to ``other``'s shape (``torch.Tensor.expand_as``)."""
    return expand(input, other._array.shape)


def broadcast_to(input, size):
    """``expand`` to ``size`` (``torch.broadcast_to``)."""
    return expand(input, tuple(size))


def broadcast_tensors(*tensors):
    """Expand all tensors to their common broadcast shape (``torch.broadcast_tensors``)."""
    try:
        shape = np.broadcast_shapes(*(x._array.shape for x in tensors))
    except ValueError:
        shapes = ", ".join(str(list(x._array.shape)) for x in tensors)
        raise RuntimeError(
            f"The size of tensor a must match the size of tensor b at non-singleton dimension "
            f"(glassgrad: broadcast_tensors of shapes {shapes})"
        ) from None
    return tuple(expand(x, shape) for x in tensors)


def sum_to_size(input, *size):
    """Sum broadcast dims away to reach ``size`` (``torch.Tensor.sum_to_size``)."""
    size = _shape_arg(size, "sum_to_size")
    if input._array.shape == size:
        return input
    return SumToSize.apply(input, shape=size, src=input._array.shape)


def squeeze(input, dim=None):
    """Remove size-1 dims (all, one, or a tuple) (``torch.squeeze``): a view."""
    shp = input._array.shape
    dims = wrap_dims(dim, len(shp), "squeeze")
    new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    cls = Squeeze if dim is None else SqueezeDims if isinstance(dim, (tuple, list)) else SqueezeDim
    out = cls.apply(input, shape=new, src=shp)
    return mark_view(out, input, lambda b: squeeze(b, dim))


def unsqueeze(input, dim: int):
    """Insert a size-1 dim at ``dim`` (``torch.unsqueeze``): a view."""
    nd = input._array.ndim
    d = wrap_dim(dim, nd + 1, "unsqueeze")
    shp = input._array.shape
    out = Unsqueeze.apply(input, shape=shp[:d] + (1,) + shp[d:], src=shp)
    return mark_view(out, input, lambda b: unsqueeze(b, d))


def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (``torch.movedim``): a view."""
    nd = input._array.ndim
    src = list(source) if isinstance(source, (tuple, list)) else [source]
    dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
            f"same number of dims as destination ({dst} dims)"
        )
    src = [wrap_dim(s, nd, "movedim") for s in src]
    dst = [wrap_dim(s, nd, "movedim") for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src}) or `destination` ({dst})")
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order) if nd else _alias_view(input)


moveaxis = movedim


def narrow(input, dim: int, start: int, length: int):
    """``length`` elements of ``dim`` from ``start`` (``torch.narrow``): a view."""
    if input._array.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._array.ndim, "narrow")
    if is_tensor(start):
        start = int(start.item())
    size = input._array.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if not (0 <= start and start + length <= size and length >= 0):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    from .indexing import getitem

    return getitem(input, (slice(None),) * d + (slice(start, start + length),))


def _atleast(nd_min, fill):
    def fn(*tensors):
        ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        out = tuple(x if x._array.ndim >= nd_min else reshape(x, fill(x._array.shape)) for x in ts)
        return out[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else out

    return fn


atleast_1d = _atleast(1, lambda s: (1,))
atleast_1d.__doc__ = "Views with at least one dim: 0-d becomes (1,) (``torch.atleast_1d``)."
atleast_2d = _atleast(2, lambda s: (1,) * (2 - len(s)) + s)
atleast_2d.__doc__ = "Views with at least two dims: (n,) becomes (1, n) (``torch.atleast_2d``)."
atleast_3d = _atleast(3, lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)])
atleast_3d.__doc__ = (
    "Views with at least three dims: (n,) becomes (1, n, 1), (m, n) becomes "
    "(m, n, 1) (``torch.atleast_3d``)."
)

from .diagonal import (  # noqa: F401
    DiagEmbed,
    Diagonal,
    Tril,
    Triu,
    diag,
    diag_embed,
    diagonal,
    tril,
    triu,
)
from .joins import (  # noqa: F401 - re-exported, see the module docstring
    Cat,
    cat,
    chunk,
    column_stack,
    concat,
    concatenate,
    dstack,
    hstack,
    row_stack,
    split,
    split_with_sizes,
    stack,
    tensor_split,
    unbind,
    unsafe_chunk,
    unsafe_split,
    unsafe_split_with_sizes,
    vstack,
)
from .rearrange import (  # noqa: F401
    Flip,
    Roll,
    diff,
    flip,
    fliplr,
    flipud,
    repeat,
    repeat_interleave,
    roll,
    rot90,
    tile,
)
