"""``gradcheck`` / ``gradgradcheck``: analytic gradients vs float64 central differences.

Follows ``torch.autograd.gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3,
raise_exception=True)``; float32 inputs usually fail (use float64), as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from ._gradcheck_forward import check_forward_ad as check_forward
from .engine import grad as _grad
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numerical Jacobians differ."""


def _tensors(x):
    from ..tensor import Tensor

    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _outputs(func, inputs):
    out = func(*inputs)
    return _tensors(out)


def _numerical_jacobian(func, inputs, diff_idx, eps):
    """J[o][i] of shape (out.numel(), inp.numel()) by central differences."""
    with no_grad():
        base = _outputs(func, inputs)
        jac = [[np.zeros((o.numel(), inputs[i].numel())) for i in diff_idx] for o in base]
        for col, i in enumerate(diff_idx):
            arr = inputs[i]._array
            flat = arr.reshape(-1)  # a view: inputs are contiguous copies (see _prepare)
            for k in range(flat.size):
                orig = flat[k]
                flat[k] = orig + eps
                plus = [o._array.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
                flat[k] = orig - eps
                minus = [o._array.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
                flat[k] = orig
                for oi in range(len(base)):
                    jac[oi][col][:, k] = (plus[oi] - minus[oi]) / (2 * eps)
    return jac


def _analytic_jacobian(func, inputs, diff_idx):
    outs = _outputs(func, inputs)
    jac = [[np.zeros((o.numel(), inputs[i].numel())) for i in diff_idx] for o in outs]
    from ..tensor import Tensor

    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            seed = np.zeros(o.shape, dtype=o._array.dtype)
            seed.reshape(-1)[r] = 1
            grads = _grad(o, [inputs[i] for i in diff_idx], Tensor._make(seed), retain_graph=True,
                          allow_unused=True)
            for col, g in enumerate(grads):
                if g is not None:
                    jac[oi][col][r, :] = g._array.astype(np.float64).reshape(-1)
    return jac


def _prepare(inputs):
    from ..tensor import Tensor

    out = []
    for x in _tensors(inputs) if not isinstance(inputs, tuple) else inputs:
        if isinstance(x, Tensor) and not x._array.flags.c_contiguous:
            y = Tensor._make(np.ascontiguousarray(x._array))
            y._requires_grad = x._requires_grad
            x = y
        out.append(x)
    return tuple(out)


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad=True,
              fast_mode: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, **kwargs) -> bool:
    """True if ``func``'s analytic Jacobian matches central differences for every input that
    requires grad (``torch.autograd.gradcheck``). Raises GradcheckError ("Jacobian mismatch");
    ``check_forward_ad`` also checks forward mode's (_gradcheck_forward.py)."""
    from ..tensor import Tensor

    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    inputs = _prepare(inputs if isinstance(inputs, tuple) else _tensors(inputs))
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    for i in diff_idx:
        if inputs[i].dtype.name != "float64":
            import warnings

            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point.", UserWarning, stacklevel=2,
            )
    num = _numerical_jacobian(func, inputs, diff_idx, eps)
    ana = _analytic_jacobian(func, inputs, diff_idx) if check_backward_ad else ()
    for oi in range(len(num) if check_backward_ad else 0):
        for col, i in enumerate(diff_idx):
            a, n = ana[oi][col], num[oi][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {oi} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
    if check_forward_ad:
        return check_forward(func, inputs, diff_idx, num, atol=atol, rtol=rtol,
                             raise_exception=raise_exception, error_cls=GradcheckError)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception: bool = True, **kwargs) -> bool:
    """gradcheck of the first derivative (``torch.autograd.gradgradcheck``): checks the
    double backward with random (or given) output cotangents."""
    from ..tensor import Tensor

    inputs = _prepare(inputs if isinstance(inputs, tuple) else _tensors(inputs))
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._make(rng.standard_normal(o.shape).astype(o._array.dtype)).requires_grad_()
            for o in outs
        )
    else:
        grad_outputs = _tensors(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func, xs)]
        pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
        grads = _grad([o for o, _ in pairs], [xs[i] for i in diff_idx], [g for _, g in pairs],
                      create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None and g.requires_grad)

    return gradcheck(first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
