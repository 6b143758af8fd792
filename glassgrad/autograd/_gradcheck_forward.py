"""``gradcheck(..., check_forward_ad=True)``: forward-mode Jacobian columns vs the numerical ones.

gradcheck.py (lane agrad's) calls ``_FORWARD_AD_CHECK``; this module sets it on import, so the
reverse-mode checks and this one grow apart.
"""

from __future__ import annotations

import numpy as np

from . import gradcheck as _gradcheck


def check_forward_ad(func, inputs, outs, *, eps: float, atol: float, rtol: float) -> None:
    """Column k of the Jacobian with respect to each input that requires grad, from one
    forward-mode pass with that input dual with the k-th basis tangent, compared with central
    differences (torch.autograd.gradcheck's forward-AD check). The function sees inputs that do
    not require grad, as in PyTorch. Raises ``GradcheckError`` with PyTorch's "Jacobian computed
    with forward mode mismatch" message."""
    from ..tensor import Tensor
    from . import forward_ad as fwad

    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    numerical = _gradcheck._numerical(func, inputs, diff, eps, outs)
    for col, i in enumerate(diff):
        x = inputs[i]
        cols = [np.zeros((o.numel(), x.numel())) for o in outs]
        for k in range(x.numel()):
            e = np.zeros(x.shape, dtype=x._array.dtype)
            e.reshape(-1)[k] = 1
            with fwad.dual_level():
                # NOTE: requires_grad only tells which inputs to check: the function sees none
                dual = [a.detach() if isinstance(a, Tensor) else a for a in inputs]
                dual[i] = fwad.make_dual(dual[i], Tensor._make(e))
                tangents = [fwad.unpack_dual(o).tangent for o in _gradcheck._outputs(func, dual)]
            for c, v in zip(cols, tangents):
                if v is not None:
                    c[:, k] = v._array.astype(np.float64).reshape(-1)
        for oi, a in enumerate(cols):
            n = numerical[oi][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise _gradcheck.GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {oi} with respect "
                    f"to input {i},\nnumerical:{n}\nanalytical:{a}\n")


_gradcheck._FORWARD_AD_CHECK = check_forward_ad
