"""Matrix products: ``matmul`` (one BLAS call per op), ``mm``, ``bmm``, ``mv``, ``dot``, ``outer``.

1-D operands are lifted to matrices around the ``MatMul`` primitive, as NumPy and PyTorch define
them; batch dims broadcast and the engine sums them back.
"""

from __future__ import annotations

from ._util import promote
from .primitive import Primitive


class MatMul(Primitive):
    node_name = "MmBackward0"
    saves = ("x", "y")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        return xp.matmul(x, y)

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        grad_x = matmul(grad, y.mT) if needs_input_grad[0] else None
        grad_y = matmul(x.mT, grad) if needs_input_grad[1] else None
        return grad_x, grad_y


def _shape_error(op, a, b):
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and "
        f"{'x'.join(map(str, b.shape))}) (in {op}; dtypes {a.dtype} and {b.dtype})"
    )


def matmul(input, other):
    """Matrix product with NumPy/PyTorch semantics for 1-D, 2-D and batched operands
    (``torch.matmul``): (..., n, k) @ (..., k, m) -> (..., n, m)."""
    a, b = promote(input, other, "matmul")
    na, nb = a._array.ndim, b._array.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D"
        )
    if a._array.shape[-1] != b._array.shape[-2 if nb > 1 else 0]:
        if na == 1 and nb == 1:
            raise RuntimeError(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same "
                "number of elements, but got {} and {} elements respectively".format(
                    a.shape[0], b.shape[0], a.shape[0], b.shape[0])
            )
        raise _shape_error("matmul", a, b)
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


def mm(input, mat2):
    """(n, k) @ (k, m) -> (n, m) (``torch.mm``); both must be 2-D."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(
            f"self must be a matrix (mm got {input.ndim}-D and {mat2.ndim}-D tensors)"
        )
    if input.shape[1] != mat2.shape[0]:
        raise _shape_error("mm", input, mat2)
    return matmul(input, mat2)


def bmm(input, mat2):
    """(b, n, k) @ (b, k, m) -> (b, n, m) (``torch.bmm``); both must be 3-D, same batch."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm got {input.ndim}-D and {mat2.ndim}-D)")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
            f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return matmul(input, mat2)


def mv(input, vec):
    """(n, m) @ (m,) -> (n,) (``torch.mv``)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    return matmul(input, vec)


def dot(input, other):
    """Inner product of two 1-D tensors of equal length (``torch.dot``)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{input.dtype.name.capitalize()} and {other.dtype.name.capitalize()}"
        )
    return matmul(input, other)


inner = dot
vdot = dot


def outer(input, vec2):
    """(n,) x (m,) -> (n, m) (``torch.outer``)."""
    return input.unsqueeze(-1) * vec2.unsqueeze(0)


ger = outer
