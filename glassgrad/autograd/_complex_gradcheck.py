"""gradcheck of functions of complex tensors: each complex input and output is checked as its
``view_as_real`` pair, so central differences move the real and the imaginary part separately
and the whole real Jacobian is compared (what torch's complex gradcheck establishes too). Without
it, NumPy's cast to float64 would drop every imaginary part and a wrong rule would pass."""

from __future__ import annotations


def realified(func, inputs):
    """``(func', inputs')``: ``inputs`` with complex tensors as real ``(..., 2)`` leaves, and
    ``func'`` that rebuilds them, calls ``func`` and returns its complex outputs as real ones."""
    from ..ops.complex_ops import view_as_complex, view_as_real
    from .grad_mode import enable_grad
    from ..tensor import Tensor

    flags = [isinstance(x, Tensor) and x._array.dtype.kind == "c" for x in inputs]

    def real(out):
        if isinstance(out, Tensor) and out._array.dtype.kind == "c":
            return view_as_real(out.resolve_conj())
        return out

    def real_func(*xs):
        # (recorded even where gradcheck evaluates under no_grad: the rebuilt complex inputs
        # require grad as the leaves they stand for do)
        with enable_grad():
            zs = [view_as_complex(x) if c else x for x, c in zip(xs, flags)]
        out = func(*zs)
        return real(out) if isinstance(out, Tensor) else tuple(real(o) for o in out)

    pairs = tuple(view_as_real(x.detach()).clone().requires_grad_(x.requires_grad) if c else x
                  for x, c in zip(inputs, flags))
    return real_func, pairs
