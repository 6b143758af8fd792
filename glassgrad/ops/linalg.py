"""Products: ``matmul`` (one BLAS call per op), ``mm``, ``bmm``, ``mv``, ``dot``, ``outer``,
``einsum``, ``tensordot``, ``addmm``/``baddbmm``, ``cross``, ``trace``.

1-D operands are lifted to matrices around the ``MatMul`` primitive, as NumPy and PyTorch define
them; batch dims broadcast and the engine sums them back. ``einsum`` is canonicalised to explicit
single-letter subscripts (ellipses expanded) and contracted pairwise by ``Einsum`` primitives whose
backward is an ``einsum`` with the subscripts rearranged (see einsum_parse.py).
"""

from __future__ import annotations

import numpy as np

from ..amp.autocast import autocast_arg, autocast_args, autocast_excluded
from ..amp.autocast import state as _autocast
from ..autograd.node_names import named_as
from . import primitive
from ._names import c_type, scalar_type
from ._util import cj, half, is_tensor, promote, wrap_dim
from .einsum_parse import contraction_path, diagonal_steps, parse_equation
from .elementwise_backward import SelectGrad
from .primitive import Primitive


class MatMul(Primitive):
    node_name = "MmBackward0"
    saves = ("x", "y")
    saved_for = {"x": ("y",), "y": ("x",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        if x.ndim == 2 and y.ndim == 2:  # BLAS fast paths (NOTE [GEMM shapes] in ops/fused.py)
            return _fused._gemm(xp, x, y)
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
            # NOTE: NumPy has no fast float16/bfloat16 GEMM (float16 is ~100x slower): multiply in
            # float32, round once, as PyTorch's CPU kernels accumulate 16-bit products in float32
            return xp.matmul(x.astype(xp.float32), y.astype(xp.float32)).astype(x.dtype)
        return xp.matmul(x, y)

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        # (2-D real: so x and y are 2-D; complex takes the conjugates below)
        if grad._array.ndim == 2 and type(grad._array) is np.ndarray and grad.dtype._kind < 3:
            from .fused import MatMulNT, MatMulTN  # one op each, no transpose op (ops/fused.py)

            return (MatMulNT.apply(grad, y) if needs_input_grad[0] else None,
                    MatMulTN.apply(x, grad) if needs_input_grad[1] else None)
        grad_x = matmul(grad, y.mH) if needs_input_grad[0] else None
        grad_y = matmul(x.mH, grad) if needs_input_grad[1] else None
        return grad_x, grad_y

    @staticmethod
    def backward_np(grad, x, y, needs_input_grad):
        # NOTE [Array backward] in autograd/engine_arrays.py: ``backward``'s kernels on arrays
        if not _fused._plain(grad, x, y):
            return _fused._tensor_rule(MatMul, grad, (x, y), {"needs_input_grad": needs_input_grad})
        gemm = MatMul.forward  # (2-D: MatMulNT's and MatMulTN's forwards, as ``backward``)
        return (gemm(np, grad, np.swapaxes(cj(y), -1, -2)) if needs_input_grad[0] else None,
                gemm(np, np.swapaxes(cj(x), -1, -2), grad) if needs_input_grad[1] else None)


class Bmm(MatMul):  # torch.bmm's node name (NOTE [Node names] in ops/shape.py)
    node_name = "BmmBackward0"


class Mv(Primitive):
    """(n, m) @ (m,) -> (n,): PyTorch's node for ``mv`` and for ``matmul`` of a matrix and a
    vector (no lift to matrices, so next_functions reads as PyTorch's)."""

    saves = ("x", "y")
    saved_for = {"x": ("y",), "y": ("x",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # NOTE: see MatMul.forward
            return xp.matmul(x.astype(xp.float32), y.astype(xp.float32)).astype(x.dtype)
        return xp.matmul(x, y)

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        grad_x = grad.unsqueeze(1) * cj(y) if needs_input_grad[0] else None
        grad_y = Mv.apply(cj(x).t(), grad) if needs_input_grad[1] else None
        return grad_x, grad_y


class Dot(Mv):
    """(n,) . (n,) -> 0-d: ``dot`` and ``matmul`` of two vectors."""

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        return (grad * cj(y) if needs_input_grad[0] else None,
                grad * cj(x) if needs_input_grad[1] else None)


def _explain(op, a, b) -> str:
    return (
        f"\nglassgrad: {op} of a {list(a.shape)} {a.dtype} tensor and a {list(b.shape)} "
        f"{b.dtype} tensor"
    )


def _check_same_dtype(op, a, b, names=("m1", "m2")):
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(
            f"expected {names[0]} and {names[1]} to have the same dtype, but got: "
            f"{c_type(a.dtype)} != {c_type(b.dtype)}"
            + _explain(op, a, b)
            + "; convert one with .to(other.dtype)."
        )


def _x(shape) -> str:
    return "x".join(map(str, shape))


def _matmul_shape_error(a, b):
    na, nb = a._array.ndim, b._array.ndim
    sa, sb = a._array.shape, b._array.shape
    hint = _explain("matmul", a, b) + f": the last dim of the first ({sa[-1]}) must equal the "
    hint += f"{'first' if nb == 1 else 'second-to-last'} dim of the second."
    if na == 1 and nb == 1:
        return RuntimeError(
            f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
            f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively" + hint
        )
    if nb == 1:
        rows = int(np.prod(sa[:-1]))
        return RuntimeError(
            f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})" + hint
        )
    if na <= 2 and nb == 2:
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied "
            f"({_x(sa if na == 2 else (1,) + sa)} and {_x(sb)})" + hint
        )
    batch = int(np.prod(np.broadcast_shapes(sa[:-2], sb[:-2]))) if na > 1 else int(np.prod(sb[:-2]))
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {sa[-1]}] "
        f"but got: [{batch}, {sb[-2]}]." + hint
    )


def matmul(input, other):
    """Matrix product with NumPy/PyTorch semantics for 1-D, 2-D and batched operands
    (``torch.matmul``): (..., n, k) @ (..., k, m) -> (..., n, m); batch dims broadcast.

    RuntimeError for 0-d operands, mismatched inner sizes, unbroadcastable batches, or different
    dtypes (no promotion, as in PyTorch)."""
    if _autocast.on:
        input, other = autocast_args("matmul", input, other)
    if not (is_tensor(input) and is_tensor(other)):
        raise TypeError(
            f"matmul(): argument 'other' (position 2) must be Tensor, not "
            f"{type(other if is_tensor(input) else input).__name__}"
        )
    a, b = input, other
    if a._sparse or b._sparse:  # NOTE [Sparse operands] in sparse/_coo.py
        return (a if a._sparse else b)._sparse_matmul(a, b, True)
    na, nb = a._array.ndim, b._array.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D"
            + _explain("matmul", a, b)
            + "; use * for a product with a scalar."
        )
    _check_same_dtype("matmul", a, b)
    if na > 2 and nb > 2:
        try:
            np.broadcast_shapes(a._array.shape[:-2], b._array.shape[:-2])
        except ValueError:
            raise _batch_error(a, b) from None
    if a._array.shape[-1] != b._array.shape[-2 if nb > 1 else 0]:
        raise _matmul_shape_error(a, b)
    if nb == 1 and na <= 2:
        return (Dot if na == 1 else Mv).apply(a, b)
    if na == 1:
        a = a.unsqueeze(0)
    if nb == 1:
        b = b.unsqueeze(-1)
    out = MatMul.apply(a, b)
    if na == 1:
        out = out.squeeze(-2)
    if nb == 1:
        out = out.squeeze(-1)
    return out


def _batch_error(a, b):
    sa, sb = a._array.shape[:-2], b._array.shape[:-2]
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i, (p, q) in enumerate(zip(pa, pb)):
        if p != q and p != 1 and q != 1:
            return RuntimeError(
                f"The size of tensor a ({p}) must match the size of tensor b ({q}) at "
                f"non-singleton dimension {i}"
                + _explain("matmul", a, b)
                + ": batch dims (all but the last two) must broadcast."
            )
    return RuntimeError("glassgrad: matmul batch dims do not broadcast")  # pragma: no cover


def mm(input, mat2):
    """(n, k) @ (k, m) -> (n, m) (``torch.mm``); both must be 2-D (RuntimeError)."""
    if input._sparse or mat2._sparse:  # NOTE [Sparse operands] in sparse/_coo.py
        return input._sparse_matmul(input, mat2, False) if input._sparse else \
            mat2._sparse_matmul(input, mat2, False)
    if _autocast.on:
        input, mat2 = autocast_args("mm", input, mat2)
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix" + _explain("mm", input, mat2))
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix" + _explain("mm", input, mat2))
    _check_same_dtype("mm", input, mat2, ("mat1", "mat2"))
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_x(input.shape)} and {_x(mat2.shape)})"
            + _explain("mm", input, mat2)
            + "; the inner sizes must match."
        )
    return MatMul.apply(input, mat2)


def bmm(input, mat2):
    """(b, n, k) @ (b, k, m) -> (b, n, m) (``torch.bmm``); both 3-D with the same batch size."""
    if _autocast.on:
        input, mat2 = autocast_args("bmm", input, mat2)
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" + _explain("bmm", input, mat2))
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor" + _explain("bmm", input, mat2))
    _check_same_dtype("bmm", input, mat2, ("batch1", "batch2"))
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
            f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
            + _explain("bmm", input, mat2)
        )
    return Bmm.apply(input, mat2)


def mv(input, vec):
    """(n, m) @ (m,) -> (n,) (``torch.mv``)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}"
            + _explain("mv", input, vec)
        )
    if _autocast.on:  # NOTE: PyTorch autocasts matmul but not mv/dot (CPU): neither may we
        return autocast_excluded(matmul, input, vec)
    return matmul(input, vec)


def dot(input, other):
    """Inner product of two 1-D tensors of equal length and dtype (``torch.dot``)."""
    for k, (name, v) in enumerate((("input", input), ("other", other))):
        if not is_tensor(v):
            raise TypeError(f"dot(): argument '{name}' (position {k + 1}) must be Tensor, not "
                            f"{type(v).__name__}")
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
            + _explain("dot", input, other)
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{scalar_type(input.dtype)} and {scalar_type(other.dtype)}"
            + _explain("dot", input, other)
        )
    if _autocast.on:  # NOTE: see mv
        return autocast_excluded(matmul, input, other)
    return matmul(input, other)


inner = dot


def vdot(input, other):
    """``sum(conj(input) * other)`` of two 1-D tensors (``torch.vdot``: ``dot`` with the first
    operand conjugated; the same as ``dot`` for real dtypes)."""
    if is_tensor(input) and input._array.ndim == 1:
        return dot(cj(input), other)
    return dot(input, other)


def outer(input, vec2):
    """(n,) x (m,) -> (n, m) (``torch.outer``)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.unsqueeze(-1) * vec2.unsqueeze(0)


ger = outer


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; input broadcasts (``torch.addmm``)."""
    if _autocast.on:
        input, mat1, mat2 = autocast_args("addmm", input, mat1, mat2)
    return named_as(_add_scaled(input, mm(mat1, mat2), beta, alpha), "AddmmBackward0", input)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)`` (``torch.baddbmm``)."""
    if _autocast.on:
        input, batch1, batch2 = autocast_args("baddbmm", input, batch1, batch2)
    return named_as(_add_scaled(input, bmm(batch1, batch2), beta, alpha), "BaddbmmBackward0",
                    input)


def _add_scaled(input, product, beta, alpha):
    if not is_tensor(input):
        op = "addmm" if product._array.ndim == 2 else "baddbmm"
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    out = product if alpha == 1 else product * alpha
    if beta == 0:  # NOTE: PyTorch ignores input's values (even nan) when beta == 0, not its shape
        s, t = tuple(input._array.shape), tuple(out._array.shape)
        bad = [k for k in range(1, min(len(s), len(t)) + 1) if s[-k] not in (1, t[-k])]
        if bad or len(s) > len(t):
            k = bad[0] if bad else 1
            raise RuntimeError(
                f"The expanded size of the tensor ({t[-k] if t else 0}) must match the existing "
                f"size ({s[-k]}) at non-singleton dimension {len(t) - k}.  Target sizes: "
                f"{list(t)}.  Tensor sizes: {list(s)}"
            )
        return out
    return out + (input if beta == 1 else input * beta)


class Einsum(Primitive):
    """Two-operand ``einsum`` on explicit subscripts ``"ab,bc->ac"`` (letters only)."""

    saves = ("x", "y")
    saved_for = {"x": ("y",), "y": ("x",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y, *, equation, shapes):  # shapes: (x's, y's), for an unsaved operand
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # NOTE: see MatMul.forward
            return Einsum.forward(xp, x.astype(xp.float32), y.astype(xp.float32),
                                  equation=equation, shapes=shapes).astype(x.dtype)
        # NOTE: optimize=True routes big contractions to BLAS (tensordot) but costs ~30 us to plan
        return xp.einsum(equation, x, y, optimize=x.size * y.size > 1 << 16)

    @staticmethod
    def backward(grad, x, y, *, equation, shapes, needs_input_grad):
        lhs, out = equation.split("->")
        sx, sy = lhs.split(",")
        grad_x = _einsum_grad(grad, out, y, sy, sx, shapes[0]) if needs_input_grad[0] else None
        grad_y = _einsum_grad(grad, out, x, sx, sy, shapes[1]) if needs_input_grad[1] else None
        return grad_x, grad_y


class EinsumUnary(Primitive):
    """One-operand ``einsum`` (a sum and/or permutation) on explicit subscripts ``"abc->ca"``."""

    node_name = "EinsumBackward0"

    @staticmethod
    def forward(xp, x, *, equation, shape):
        # NOTE: NumPy's einsum rejects bfloat16 (ml_dtypes); float16 sums in float32 as well
        # (NOTE [16-bit accumulation] in ops/_util.py)
        if half(x.dtype):
            return xp.einsum(equation, x.astype(xp.float32)).astype(x.dtype)
        out = xp.einsum(equation, x)
        return out.copy() if np.may_share_memory(out, x) else out

    @staticmethod
    def backward(grad, *, equation, shape):
        sx, out = equation.split("->")
        keep = "".join(c for c in sx if c in out)
        return (_restore(_unary(grad, out, keep), keep, sx, shape),)


def _unary(x, sub_in, sub_out):
    if sub_in == sub_out:
        return x
    return EinsumUnary.apply(x, equation=f"{sub_in}->{sub_out}", shape=x._array.shape)


def _einsum_grad(grad, s_out, other, s_other, s_target, target_shape):
    """Gradient for one operand: ``einsum(grad, other -> target)``; letters summed only inside
    the target come back by broadcasting (size-1 broadcasts are summed away by the engine)."""
    avail = set(s_out) | set(s_other)
    keep = "".join(c for c in s_target if c in avail)
    g = Einsum.apply(grad, other, equation=f"{s_out},{s_other}->{keep}",
                     shapes=(grad._array.shape, other._array.shape))
    return _restore(g, keep, s_target, target_shape)


def _restore(g, keep, s_target, target_shape):
    """``g`` (subscripts ``keep``) to the target's subscripts: dims the target summed alone, or
    held at size 1 in every other operand, come back by broadcasting."""
    from .shape import expand, reshape

    sizes = tuple(g.shape[keep.index(c)] if c in keep else 1 for c in s_target)
    full = tuple(t if s == 1 else s for s, t in zip(sizes, target_shape))
    if keep != s_target:
        g = reshape(g, sizes)
    return expand(g, full) if full != sizes else g


def einsum(equation, *operands):
    """Einstein summation over ``operands`` (``torch.einsum``): explicit (``"ij,jk->ik"``),
    implicit (``"ij,jk"``) and ellipsis (``"...ij,...jk->...ik"``) forms, size-1 broadcasting,
    any number of operands (contracted pairwise, greedy order). All operands must share a dtype.
    A subscript repeated within one operand (``"ii->i"``, ``"ii"``: a diagonal, then a trace if
    summed) takes that diagonal first (sizes must match: RuntimeError otherwise, as PyTorch)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if _autocast.on and len(operands) > 1:  # PyTorch's contracts pairs with bmm, which autocasts
        operands = autocast_args("einsum", *operands)
    for x in operands[1:]:
        if x._array.dtype != operands[0]._array.dtype:
            raise RuntimeError(
                f"expected scalar type {scalar_type(operands[0].dtype)} but found "
                f"{scalar_type(x.dtype)}\nglassgrad: einsum('{equation}') of "
                + ", ".join(f"{list(o.shape)} {o.dtype}" for o in operands)
                + "; convert the operands to one dtype."
            )
    terms, out = parse_equation(equation, [x._array.shape for x in operands])
    if any(len(set(t)) < len(t) for t in terms):
        operands, terms = _take_diagonals(operands, terms)
    pending = list(zip(operands, terms))
    if len(pending) == 1:
        x, s = pending[0]
        if s == out:
            from .elementwise import clone

            return clone(x)
        return _unary(x, s, out)
    for step in contraction_path(terms, out, [x._array.shape for x in operands]):
        picked = [pending[i] for i in step]
        for i in sorted(step, reverse=True):
            pending.pop(i)
        needed = set("".join(s for _, s in pending)) | set(out)
        if len(picked) == 1:
            x, s = picked[0]
            keep = "".join(c for c in s if c in needed)
            pending.append((_unary(x, s, keep), keep))
            continue
        (x, sx), (y, sy) = picked
        keep = out if not pending else "".join(dict.fromkeys(c for c in sx + sy if c in needed))
        pending.append((Einsum.apply(x, y, equation=f"{sx},{sy}->{keep}",
                                     shapes=(x._array.shape, y._array.shape)), keep))
    x, s = pending[0]
    return _unary(x, s, out)


def _take_diagonals(operands, terms):
    """Each operand with a repeated subscript replaced by its diagonal (a differentiable view)."""
    from .diagonal import diagonal

    new_ops, new_terms = [], []
    for x, t in zip(operands, terms):
        steps, t = diagonal_steps(t)
        for d1, d2 in steps:
            x = diagonal(x, 0, d1, d2)
        new_ops.append(x)
        new_terms.append(t)
    return tuple(new_ops), new_terms


def tensordot(a, b, dims=2):
    """Sum over the last ``dims`` dims of ``a`` and the first of ``b``, or over the listed dim
    pairs ``([a_dims], [b_dims])`` (``torch.tensordot``); one ``einsum``."""
    na, nb = a._array.ndim, b._array.ndim
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(
                f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}\n"
                f"glassgrad: the tensors have {na} and {nb} dims."
            )
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        da, db = (
            [dims[0]] if isinstance(dims[0], int) else list(dims[0]),
            [dims[1]] if isinstance(dims[1], int) else list(dims[1]),
        )
        da = [wrap_dim(d, na, "tensordot") for d in da]
        db = [wrap_dim(d, nb, "tensordot") for d in db]
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out = [c for k, c in enumerate(sa) if k not in da] + [
        c for k, c in enumerate(sb) if k not in db
    ]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (the first dim of size 3 when None), with
    broadcasting (``torch.cross``); RuntimeError when that dim is not of size 3."""
    from .rearrange import roll
    from .shape import broadcast_tensors

    if is_tensor(input) and is_tensor(other) and input.ndim != other.ndim:
        raise RuntimeError(
            "linalg.cross: inputs must have the same number of dimensions.\n"
            f"glassgrad: got {list(input.shape)} and {list(other.shape)}."
        )
    a, b = promote(input, other, "cross")
    a, b = broadcast_tensors(a, b)
    if dim is None:
        dim = next((i for i, s in enumerate(a.shape) if s == 3), -1)
    d = wrap_dim(dim, a.ndim, "cross")
    if a.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[d] if input.ndim == a.ndim else a.shape[d]} and "
            f"{other.shape[d] if other.ndim == a.ndim else b.shape[d]}"
        )
    return roll(a, -1, d) * roll(b, -2, d) - roll(a, -2, d) * roll(b, -1, d)


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (``torch.trace``); integer input gives int64."""
    if _autocast.on:
        input = autocast_arg("trace", input)
    from .diagonal import diagonal
    from .reduction import sum

    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input._array.dtype.kind != "f":
        return sum(diagonal(input))  # integers give int64, as sum
    return Trace.apply(input, shape=input._array.shape)


class Trace(Primitive):
    """The sum of a matrix's main diagonal; the gradient is ``grad`` on the diagonal, selected
    (not times the identity: a NaN/inf ``grad`` stays off the zeros, as in PyTorch)."""

    @staticmethod
    def forward(xp, x, *, shape):
        return xp.trace(x)

    @staticmethod
    def backward(grad, *, shape):
        return (SelectGrad.apply(grad, condition=np.eye(*shape, dtype=bool)),)


from . import fused as _fused  # (last: ops/fused.py imports this module)
