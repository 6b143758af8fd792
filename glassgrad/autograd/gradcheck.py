"""``gradcheck`` / ``gradgradcheck``: analytic gradients vs float64 central differences, as
``torch.autograd.gradcheck`` checks them.

The numerical pass runs ``func`` with grad mode on (a function may register hooks or call
autograd inside), perturbing each input element in place. Then, per output: the analytical
Jacobian row by row through ``autograd.grad``; one more backward with a random cotangent must
repeat it (``nondet_tol``: "Backward is not reentrant"); a zero cotangent must give zero
gradients ("backward not multiplied by grad_output"); gradient sizes and, with
``check_grad_dtypes``, dtypes are checked; ``check_batched_grad`` compares ``func.vmap`` over the
backward with the backward per cotangent. ``fast_mode`` compares ``v^T J u`` for random unit
``u``, ``v`` and recomputes in slow mode for the message. Failures raise ``GradcheckError`` (a
RuntimeError) or, with ``raise_exception=False``, return False; bad inputs always raise.
float32 inputs usually fail (use float64), as in PyTorch.

``check_undefined_grad`` is accepted and has nothing to test here: glassgrad's engine never hands
a backward an undefined (None) output gradient (a node no gradient reaches does not run), which
is the case torch's check exercises. ``check_forward_ad`` runs ``_FORWARD_AD_CHECK`` (set by the
forward-mode AD module once it is there).
"""

from __future__ import annotations


import numpy as np

from ._complex_gradcheck import realified
from .engine import grad as _grad
from .._user_warning import warn_user


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytic and numerical Jacobians differ
    (``torch.autograd.gradcheck.GradcheckError``)."""


_FORWARD_AD_CHECK = None  # fn(func, inputs, outputs, eps, atol, rtol) from forward-mode AD

_NONDET = (
    "\n\nNOTE: If your op relies on non-deterministic operations, this failure might be "
    "expected: call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument."
)
_BATCHED = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation.\n"
    "glassgrad: the backward run under glassgrad.func.vmap gave other values than the "
    "backward run once per cotangent; call gradcheck with `check_batched_grad=False` to "
    "skip this test."
)
_FAST = (
    "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
    "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
    "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
)


def _Tensor():
    from ..tensor import Tensor

    return Tensor


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, _Tensor()) else tuple(x)


def _outputs(func, inputs) -> tuple:
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, _Tensor()))


def _deprecated(name: str) -> None:
    warn_user(
        f"`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
        "deprecating it and it will be removed in a future version of PyTorch. If you have a "
        "specific use for this or feature request for this to be a stable API, please file us "
        "an issue at https://github.com/pytorch/pytorch/issues/new", FutureWarning, stacklevel=3)


def _check_grad_out(grad_out, name: str) -> None:
    if grad_out != 1.0:
        raise ValueError(f"Expected grad_out to be 1.0. {name} no longer supports values of "
                         "grad_out != 1.0.")


def _numerical(func, inputs, wrt, eps, outs=None) -> list:
    """J[o][k]: (outputs[o].numel(), inputs[wrt[k]].numel()) float64 central differences."""
    base = outs if outs is not None else _outputs(func, inputs)
    jac = [[np.zeros((o.numel(), inputs[i].numel())) for i in wrt] for o in base]
    for col, i in enumerate(wrt):
        arr = inputs[i]._array
        for k, idx in enumerate(np.ndindex(arr.shape)):
            orig = arr[idx]
            sides = []
            for x in (orig + eps, orig - eps):
                arr[idx] = x
                sides.append(_perturbed(func, inputs, base))
            arr[idx] = orig
            for o in range(len(base)):
                jac[o][col][:, k] = (sides[0][o] - sides[1][o]) / (2 * eps)
    return jac


def _perturbed(func, inputs, base) -> list:
    outs = _outputs(func, inputs)
    for o, b in zip(outs, base):
        if o.shape != b.shape:
            raise AssertionError(
                "Expected `func` to return outputs with the same shape when inputs are perturbed "
                f"by eps, but got: shapes {o.shape} and {b.shape}.")
        if o.dtype != b.dtype:
            raise AssertionError(
                "Expected `func` to return outputs with the same dtype when inputs are perturbed "
                f"by eps, but got: dtypes {o.dtype} and {b.dtype}.")
    return [o._array.astype(np.float64).reshape(-1) for o in outs]


def _vjp(out, xs, cotangent, check_dtypes: bool = False) -> list:
    """Gradients of ``out`` for ``cotangent`` at each of ``xs`` as float64 arrays (zeros where
    unused); GradcheckError for a gradient of the wrong size or dtype."""
    T = _Tensor()
    seed = T._make(np.asarray(cotangent, dtype=out._array.dtype).reshape(out.shape))
    grads = _grad(out, xs, seed, retain_graph=True, allow_unused=True)
    rows = []
    for x, g in zip(xs, grads):
        if g is None:
            rows.append(np.zeros(x.numel()))
            continue
        if g.shape != x.shape:
            raise GradcheckError("Analytical gradient has incorrect size")
        if check_dtypes and g.dtype != x.dtype:
            raise GradcheckError("Gradient has dtype mismatch")
        rows.append(g._array.astype(np.float64).reshape(-1))
    return rows


def _analytical(out, xs, check_dtypes=False) -> list:
    """J[k]: (out.numel(), xs[k].numel()) by one backward per output element."""
    jac = [np.zeros((out.numel(), x.numel())) for x in xs]
    for r in range(out.numel()):
        seed = np.zeros(out.numel())
        seed[r] = 1
        for k, row in enumerate(_vjp(out, xs, seed, check_dtypes)):
            jac[k][r] = row
    return jac


def _reentrant(out, xs, jac, nondet_tol, rng) -> bool:
    """Whether one row of ``jac``, recomputed by the same backward, repeats within nondet_tol
    (a deterministic backward repeats bit for bit)."""
    if not out.numel():
        return True
    r = int(rng.integers(out.numel()))
    seed = np.zeros(out.numel())
    seed[r] = 1
    return all(np.abs(row - j[r]).max(initial=0.0) <= nondet_tol
               for row, j in zip(_vjp(out, xs, seed), jac))


def _mismatch(oi, i, num, ana, fast: bool = False) -> str:
    return (f"Jacobian mismatch for output {oi} with respect to input {i},\n"
            f"numerical:{num}\nanalytical:{ana}\n" + (_FAST if fast else ""))


def _prepare(inputs) -> tuple:
    T = _Tensor()
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, T) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in diff:
        a = inputs[i]._array
        if a.size and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape)):
            raise RuntimeError(
                f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warn_user(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=3)
    return inputs, diff


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True if ``func``'s analytic Jacobian (backward) matches float64 central differences for
    every input that requires grad (``torch.autograd.gradcheck``); see the module docstring for
    every check. Raises GradcheckError ("Jacobian mismatch for output 0 with respect to input
    0,") unless ``raise_exception=False`` (then False); ValueError/RuntimeError for inputs it
    cannot check, AssertionError for outputs whose shape or dtype depend on the values.

    Example: ``gradcheck(torch.sin, torch.rand(3, dtype=torch.float64, requires_grad=True))``.
    """
    assert check_forward_ad or check_backward_ad, (
        "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if any(getattr(x, "_sparse", False) for x in _as_tuple(inputs)):  # glassgrad/sparse/
        return _SPARSE_CHECK(func, inputs, eps=eps, atol=atol, rtol=rtol,
                             raise_exception=raise_exception, masked=masked)
    inputs, diff = _prepare(inputs)
    func, inputs = realified(func, inputs)  # complex inputs and outputs as real pairs
    try:
        outs = _outputs(func, inputs)
        if check_backward_ad:
            _check_backward(func, inputs, diff, outs, eps, atol, rtol, nondet_tol,
                            check_grad_dtypes, check_batched_grad, fast_mode)
        if check_forward_ad:  # set by _gradcheck_forward, which autograd/__init__ imports
            _FORWARD_AD_CHECK(func, inputs, outs, eps=eps, atol=atol, rtol=rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_backward(func, inputs, diff, outs, eps, atol, rtol, nondet_tol, check_dtypes,
                    batched, fast) -> None:
    xs = [inputs[i] for i in diff]
    differentiable = [o for o in outs if o.requires_grad]
    if not differentiable:
        for jo in _numerical(func, inputs, diff, eps, outs):
            if any(np.any(j != 0) for j in jo):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    if fast:
        _fast_check(func, inputs, diff, outs, eps, atol, rtol)
    num = _numerical(func, inputs, diff, eps, outs)
    rng = np.random.default_rng(0)
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            ana = [np.zeros_like(n) for n in num[oi]]
        else:
            ana = _analytical(o, xs, check_dtypes)
            if not _reentrant(o, xs, ana, nondet_tol, rng):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}." + _NONDET)
        for col, i in enumerate(diff):
            if not np.allclose(ana[col], num[oi][col], rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch(oi, i, num[oi][col], ana[col]))
    for o in differentiable:
        zeros = _vjp(o, xs, np.zeros(o.numel()))
        if any(np.any(z != 0) for z in zeros):
            raise GradcheckError("backward not multiplied by grad_output")
        if batched:
            _batched_check(o, xs, rng)


def _fast_check(func, inputs, diff, outs, eps, atol, rtol) -> None:
    """v^T J u against v^T (J u) by one directional difference per input (NOTE: a failure is
    recomputed in slow mode for torch's message)."""
    rng = np.random.default_rng(0)
    for col, i in enumerate(diff):
        arr = inputs[i]._array
        u = rng.standard_normal(arr.shape)
        u /= np.linalg.norm(u) or 1.0
        orig = arr.copy()
        sides = []
        for sign in (1, -1):
            arr[...] = orig + sign * eps * u
            sides.append(_perturbed(func, inputs, outs))
        arr[...] = orig
        for oi, o in enumerate(outs):
            v = rng.standard_normal(o.numel())
            v /= np.linalg.norm(v) or 1.0
            num = v @ ((sides[0][oi] - sides[1][oi]) / (2 * eps))
            ana = _vjp(o, [inputs[i]], v)[0] @ u.reshape(-1) if o.requires_grad else 0.0
            tol = atol * np.abs(u).sum() * np.abs(v).sum()  # |v^T E u| for E all atol
            if not np.isclose(ana, num, rtol=rtol, atol=tol):
                slow_num = _numerical(func, inputs, [i], eps, outs)[oi][0]
                slow_ana = _analytical(o, [inputs[i]])[0] if o.requires_grad else 0 * slow_num
                raise GradcheckError(_mismatch(oi, i, num, ana, fast=True) +
                                     _mismatch(oi, i, slow_num, slow_ana))


def _batched_check(out, xs, rng) -> None:
    from ..func import vmap

    T = _Tensor()
    cotangents = rng.standard_normal((2, *out.shape)).astype(out._array.dtype)

    def vjp(v):
        grads = _grad(out, xs, v, retain_graph=True, allow_unused=True)
        return tuple(T._make(np.zeros(x.shape, x._array.dtype)) if g is None else g
                     for x, g in zip(xs, grads))

    try:
        got = vmap(vjp)(T._make(cotangents))
    except Exception as exc:  # noqa: BLE001 - torch reports any failure under vmap so
        raise GradcheckError(f"{_BATCHED}\nThe error was: {type(exc).__name__}: {exc}") from exc
    for b in range(2):
        want = _vjp(out, xs, cotangents[b])
        for k, (g, w) in enumerate(zip(got, want)):
            if not np.allclose(g._array[b].astype(np.float64).reshape(-1), w, rtol=1e-6,
                               atol=1e-9):
                raise GradcheckError(f"\nFor output 0 and input {k}:\n\n{_BATCHED}")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """gradcheck of the first derivative (``torch.autograd.gradgradcheck``): checks the double
    backward with random (or the given) output cotangents, which are inputs of the check."""
    T = _Tensor()
    if any(getattr(x, "_sparse", False) for x in _as_tuple(inputs)):
        raise NotImplementedError("glassgrad: gradgradcheck with sparse inputs is not "
                                  "implemented; pass the values as a dense input and build the "
                                  "sparse tensor inside func.")
    inputs, diff = _prepare(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            T._make(rng.standard_normal(o.shape).astype(o._array.dtype)).requires_grad_()
            for o in outs if o.requires_grad)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func, xs) if o.requires_grad]
        grads = _grad(outs, [xs[i] for i in diff], list(gos), create_graph=True,
                      allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if not check_rev_over_rev:
        return True
    return gradcheck(first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode)


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out: float = 1.0):
    """Deprecated in torch: the numerical Jacobians of ``fn(inputs)``'s first output with respect
    to each of ``target`` (default: the inputs that require grad), each of shape
    ``(input.numel(), output.numel())`` (``torch.autograd.gradcheck.get_numerical_jacobian``)."""
    _deprecated("get_numerical_jacobian")
    _check_grad_out(grad_out, "get_numerical_jacobian")
    T = _Tensor()
    inputs = _as_tuple(inputs)
    wanted = _as_tuple(target) if target is not None else \
        tuple(x for x in inputs if isinstance(x, T) and x.requires_grad)
    wrt = [i for i, x in enumerate(inputs) if any(x is w for w in wanted)]

    def first(*xs):
        return _outputs(lambda *a: fn(a), xs)[:1]

    jac = _numerical(first, inputs, wrt, eps)[0]
    return tuple(T._make(j.T.copy().astype(inputs[i]._array.dtype)) for j, i in zip(jac, wrt))


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0, grad_out: float = 1.0):
    """Deprecated in torch: ``(jacobians, reentrant, correct_grad_sizes, correct_grad_types)``
    of ``output`` with respect to each input that requires grad, each Jacobian of shape
    ``(input.numel(), output.numel())``; reentrant: a second backward repeats the first within
    ``nondet_tol`` (``torch.autograd.gradcheck.get_analytical_jacobian``)."""
    _deprecated("get_analytical_jacobian")
    _check_grad_out(grad_out, "get_analytical_jacobian")
    T = _Tensor()
    xs = [x for x in _as_tuple(inputs) if isinstance(x, T) and x.requires_grad]
    sizes = types = True
    try:
        first = _analytical(output, xs, check_dtypes=True)
    except GradcheckError as exc:
        sizes, types = "size" not in str(exc), "dtype" not in str(exc)
        first = [np.zeros((output.numel(), x.numel())) for x in xs]
    again = _analytical(output, xs) if sizes and types else first
    reentrant = all(np.abs(a - b).max(initial=0.0) <= nondet_tol for a, b in zip(first, again))
    jacs = tuple(T._make(j.T.copy().astype(x._array.dtype)) for j, x in zip(first, xs))
    return jacs, reentrant, sizes, types


def _sparse_refused(*args, **kwargs):
    raise NotImplementedError("glassgrad: gradcheck with sparse inputs needs glassgrad.sparse")


_SPARSE_CHECK = _sparse_refused  # glassgrad/sparse/_gradcheck.py installs the real check
