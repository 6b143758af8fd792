"""``gradcheck(..., check_forward_ad=True)``: forward-mode Jacobian columns vs the numerical ones.

Kept apart from gradcheck.py (whose reverse-mode checks it follows) so the two grow separately.
"""

from __future__ import annotations

import numpy as np


def check_forward_ad(func, inputs, diff_idx, numerical, *, atol: float, rtol: float,
                     raise_exception: bool, error_cls) -> bool:
    """Column k of the Jacobian with respect to input i, for every i in ``diff_idx``, from one
    forward-mode pass with ``inputs[i]`` dual with the k-th basis tangent, compared with
    ``numerical[output][position of i]`` (torch.autograd.gradcheck's forward-AD check). Raises
    ``error_cls`` with PyTorch's "Jacobian computed with forward mode mismatch" message."""
    from ..tensor import Tensor
    from . import forward_ad as fwad

    for col, i in enumerate(diff_idx):
        x = inputs[i]
        cols = None
        for k in range(x.numel()):
            e = np.zeros(x.shape, dtype=x._array.dtype)
            e.reshape(-1)[k] = 1
            with fwad.dual_level():
                # NOTE: requires_grad only tells which inputs to check: the function sees none
                dual = [a.detach() if isinstance(a, Tensor) else a for a in inputs]
                dual[i] = fwad.make_dual(dual[i], Tensor._make(e))
                out = func(*dual)
                outs = (out,) if isinstance(out, Tensor) else tuple(out)
                tangents = [fwad.unpack_dual(o).tangent for o in outs]
            if cols is None:
                cols = [np.zeros((o.numel(), x.numel())) for o in outs]
            for c, v in zip(cols, tangents):
                if v is not None:
                    c[:, k] = v._array.astype(np.float64).reshape(-1)
        for oi, a in enumerate(cols or ()):
            n = numerical[oi][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise error_cls(
                    f"Jacobian computed with forward mode mismatch for output {oi} with respect "
                    f"to input {i},\nnumerical:{n}\nanalytical:{a}\n")
    return True
