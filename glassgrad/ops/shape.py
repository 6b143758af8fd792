"""Shape primitives (views and joins) and their public functions (``torch.reshape``, ``cat``, ...).

NOTE [Views]: ``reshape``/``view``/``permute``/``transpose``/``expand``/basic slicing return NumPy
views. The result remembers its base and a function that re-derives it from the base
(``_view_fn``), and shares the base's version counter. An in-place op through a view then rewrites
the base's history with ``CopySlices`` (PyTorch's "rebase history"), so gradients stay right.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import _state
from . import primitive
from ._util import is_tensor, mark_view, promote, wrap_dim, wrap_dims
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
    out = x.sum(axis=axes, keepdims=True) if axes else x
    if lead:
        out = out.reshape(shape)
    return out if out is not x else x.copy()


class Cat(Primitive):
    @staticmethod
    def forward(xp, *xs, dim):
        return xp.concatenate(xs, axis=dim)

    @staticmethod
    def backward(grad, *, dim, sizes):
        out = []
        start = 0
        for s in sizes:
            out.append(narrow(grad, dim, start, s))
            start += s
        return tuple(out)


class Flip(Primitive):
    @staticmethod
    def forward(xp, x, *, dims):
        return xp.flip(x, dims).copy()

    @staticmethod
    def backward(grad, *, dims):
        return (flip(grad, dims),)


class Roll(Primitive):
    @staticmethod
    def forward(xp, x, *, shifts, dims):
        return xp.roll(x, shifts, dims)

    @staticmethod
    def backward(grad, *, shifts, dims):
        neg = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return (roll(grad, neg, dims),)


class CopySlices(Primitive):
    """The base's new history after an in-place write through one of its views."""

    @staticmethod
    def forward(xp, base, value, *, view_fn):  # pragma: no cover - recorded, never run forward
        raise NotImplementedError

    @staticmethod
    def backward(grad, *, view_fn):
        mask_arr = np.zeros(grad.shape, dtype=bool)
        with _no_grad():
            view_fn(primitive._make(mask_arr))._array[...] = True
        grad_base = where_mask(mask_arr, grad)
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
    view.grad_fn = fresh.grad_fn
    view._output_nr = fresh._output_nr


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel, op, src):
    if -1 in shape:
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    n = 1
    for s in shape:
        if s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        n *= s
    if n != numel:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {numel} ({op} of a tensor of "
            f"shape {list(src)})"
        )
    return shape


def reshape(input, *shape):
    """The same elements in a new shape; a view when possible (``torch.reshape``)."""
    shape = _infer_shape(_shape_arg(shape), input._array.size, "reshape", input._array.shape)
    if shape == input._array.shape:
        return _alias_view(input)
    out = Reshape.apply(input, shape=shape, src=input._array.shape)
    return mark_view(out, input, lambda b: reshape(b, shape))


def view(input, *shape):
    """Like reshape but the data must allow a view (``torch.Tensor.view``)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        from .elementwise import to_dtype

        return to_dtype(input, shape[0])
    shape_t = _infer_shape(_shape_arg(shape), input._array.size, "view", input._array.shape)
    if not input._array.flags.c_contiguous and shape_t != input._array.shape:
        try:
            input._array.view().shape = shape_t
        except AttributeError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            ) from None
    return reshape(input, shape_t)


def _alias_view(x):
    from .elementwise import ToCopy  # noqa: F401 - keep import graph simple

    out = Reshape.apply(x, shape=x._array.shape, src=x._array.shape)
    return mark_view(out, x, lambda b: b)


def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """Merge dims ``start_dim..end_dim`` into one (``torch.flatten``)."""
    nd = input._array.ndim
    if nd == 0:
        return reshape(input, 1)
    s = wrap_dim(start_dim, nd, "flatten")
    e = wrap_dim(end_dim, nd, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._array.shape
    n = 1
    for d in shp[s : e + 1]:
        n *= d
    return reshape(input, shp[:s] + (n,) + shp[e + 1 :])


def unflatten(input, dim: int, sizes):
    d = wrap_dim(dim, input._array.ndim, "unflatten")
    shp = input._array.shape
    sizes = tuple(sizes)
    if -1 in sizes:
        sizes = _infer_shape(sizes, shp[d], "unflatten", shp)
    return reshape(input, shp[:d] + sizes + shp[d + 1 :])


def permute(input, *dims):
    """Reorder dims (``torch.permute``): a view."""
    dims = _shape_arg(dims)
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
    if nd < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return _alias_view(input)
    d0, d1 = wrap_dim(dim0, nd, "transpose"), wrap_dim(dim1, nd, "transpose")
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(input, *dims)


swapaxes = swapdims = transpose


def t(input):
    """Transpose a 0-2 dim tensor (``torch.t``)."""
    if input._array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, -1) if input._array.ndim == 2 else _alias_view(input)


def expand(input, *sizes):
    """Broadcast to a larger shape without copying; -1 keeps a dim (``torch.Tensor.expand``)."""
    sizes = _shape_arg(sizes)
    src = input._array.shape
    if len(sizes) < len(src):
        raise RuntimeError(
            f"expand(glassgrad.FloatTensor{{{list(src)}}}, size=[{len(sizes)}]): the number of "
            f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions in "
            f"the tensor ({len(src)})"
        )
    lead = len(sizes) - len(src)
    shape = tuple(
        src[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes)
    )
    for i, s in enumerate(src):
        if s != 1 and s != shape[i + lead]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i + lead]}) must match the existing size "
                f"({s}) at non-singleton dimension {i + lead}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(src)}"
            )
    if shape == src:
        return _alias_view(input)
    out = Expand.apply(input, shape=shape)
    return mark_view(out, input, lambda b: expand(b, shape))


def expand_as(input, other):
    return expand(input, other._array.shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def sum_to_size(input, *size):
    """Sum broadcast dims away to reach ``size`` (``torch.Tensor.sum_to_size``)."""
    size = _shape_arg(size)
    if input._array.shape == size:
        return input
    return SumToSize.apply(input, shape=size, src=input._array.shape)


def squeeze(input, dim=None):
    """Remove size-1 dims (all, one, or a tuple) (``torch.squeeze``): a view."""
    shp = input._array.shape
    dims = wrap_dims(dim, len(shp), "squeeze")
    new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    return reshape(input, new)


def unsqueeze(input, dim: int):
    """Insert a size-1 dim at ``dim`` (``torch.unsqueeze``): a view."""
    nd = input._array.ndim
    d = wrap_dim(dim, nd + 1, "unsqueeze")
    shp = input._array.shape
    return reshape(input, shp[:d] + (1,) + shp[d:])


def cat(tensors, dim: int = 0):
    """Join tensors along an existing dim (``torch.cat``); dtypes promote to the widest."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    # PyTorch skips legacy 1-D empty tensors
    tensors = [t for t in tensors if not (t._array.ndim == 1 and t._array.size == 0)] or tensors[:1]
    ref = tensors[0]
    nd = ref._array.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, nd, "cat")
    for i, x in enumerate(tensors):
        if x._array.ndim != nd or any(
            a != b for k, (a, b) in enumerate(zip(x._array.shape, ref._array.shape)) if k != d
        ):
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected size "
                f"{ref._array.shape} but got size {x._array.shape} for tensor number {i} in the list."
            )
    tensors = _promote_all(tensors, "cat")
    return Cat.apply(*tensors, dim=d, sizes=tuple(x._array.shape[d] for x in tensors))


concat = concatenate = cat


def _promote_all(tensors, op):
    first = tensors[0]
    if all(x._array.dtype == first._array.dtype for x in tensors):
        return tensors
    from .. import dtypes
    from ._util import cast

    rd = tensors[0].dtype
    for x in tensors[1:]:
        rd = dtypes.promote_types(rd, x.dtype)
    return [cast(x, rd.np) for x in tensors]


def stack(tensors, dim: int = 0):
    """Join tensors along a new dim (``torch.stack``); all shapes must be equal."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0]._array.shape
    for i, x in enumerate(tensors):
        if x._array.shape != shp:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 and "
                f"{list(x._array.shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(shp) + 1, "stack")
    return cat([unsqueeze(x, d) for x in tensors], d)


def hstack(tensors):
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0]._array.ndim == 1 else 1)


def vstack(tensors):
    return cat([x if x._array.ndim > 1 else reshape(x, 1, -1) for x in tensors], 0)


def narrow(input, dim: int, start: int, length: int):
    """``length`` elements of ``dim`` from ``start`` (``torch.narrow``): a view."""
    d = wrap_dim(dim, input._array.ndim, "narrow")
    if is_tensor(start):
        start = int(start.item())
    size = input._array.shape[d]
    if start < 0:
        start += size
    if not (0 <= start and start + length <= size and length >= 0):
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    from .indexing import getitem

    return getitem(input, (slice(None),) * d + (slice(start, start + length),))


def split(tensor, split_size_or_sections, dim: int = 0):
    """Pieces of ``split_size`` (last one smaller) or of the listed sizes (``torch.split``)."""
    d = wrap_dim(dim, tensor._array.ndim, "split")
    size = tensor._array.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        step = int(split_size_or_sections)
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got {size}")
        sizes = [min(step, size - i) for i in range(0, size, step)] if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
    out = []
    start = 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks: int, dim: int = 0):
    """Split into ``chunks`` nearly equal pieces (``torch.chunk``)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = wrap_dim(dim, input._array.ndim, "chunk")
    size = input._array.shape[d]
    step = -(-size // chunks) if size else 1
    return split(input, step, d)


def unbind(input, dim: int = 0):
    """Tuple of slices along ``dim`` with that dim removed (``torch.unbind``)."""
    d = wrap_dim(dim, input._array.ndim, "unbind")
    from .indexing import getitem

    return tuple(
        getitem(input, (slice(None),) * d + (i,)) for i in range(input._array.shape[d])
    )


def movedim(input, source, destination):
    nd = input._array.ndim
    src = [wrap_dim(s, nd) for s in (source if isinstance(source, (tuple, list)) else [source])]
    dst = [wrap_dim(s, nd) for s in (destination if isinstance(destination, (tuple, list))
                                     else [destination])]
    order = [d for d in range(nd) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


def flip(input, dims):
    """Reverse the order of elements along ``dims`` (``torch.flip``); a copy."""
    dims = wrap_dims(dims if isinstance(dims, (tuple, list)) else (dims,), input._array.ndim, "flip")
    return Flip.apply(input, dims=dims)


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    """Rotate elements along ``dims`` by ``shifts`` (``torch.roll``)."""
    if dims is None:
        flat = flatten(input)
        return reshape(Roll.apply(flat, shifts=shifts, dims=0), input._array.shape)
    if isinstance(shifts, (list, tuple)):
        shifts, dims = tuple(shifts), tuple(dims)
    return Roll.apply(input, shifts=shifts, dims=dims)


def repeat(input, *sizes):
    """Tile the data ``sizes`` times per dim (``torch.Tensor.repeat``)."""
    sizes = _shape_arg(sizes)
    nd = input._array.ndim
    if len(sizes) < nd:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    x = reshape(input, (1,) * (len(sizes) - nd) + input._array.shape)
    # expand an interleaved singleton dim, then merge: one differentiable view + reshape
    inter = []
    target = []
    for r, s in zip(sizes, x._array.shape):
        inter += [1, s]
        target += [r, s]
    y = expand(reshape(x, tuple(inter)), tuple(target))
    return reshape(y.contiguous(), tuple(r * s for r, s in zip(sizes, x._array.shape)))


def tile(input, dims):
    dims = tuple(dims)
    nd = input._array.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, dims)


_ = promote
