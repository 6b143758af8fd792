"""Autograd transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian`` (``torch.func``).

Each runs ``func`` on inputs lifted to require grad (a fresh leaf, or a differentiable alias of an
input that already requires grad, so nested transforms never mix their variables) under
``enable_grad``, then calls ``autograd.grad``. Inside another transform the gradients keep their
graph (``create_graph=True``), so ``grad(grad(f))`` and ``jacrev(jacrev(f))`` compose; the
outermost transform keeps a graph only when its result depends on tensors from outside that
require grad (its inputs or closed-over tensors), as PyTorch does. Jacobians are one ``vmap``
of the vector-Jacobian product over the rows of an identity matrix.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ..autograd import engine
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.graph import AccumulateGrad
from ..tensor import Tensor
from . import _forward
from ._pytree import tree_flatten, tree_map, tree_unflatten


class _Depth(threading.local):
    value = 0


_depth = _Depth()


class _Level:
    """Marks the forward of a differentiating transform (with grad enabled)."""

    def __enter__(self):
        _depth.value += 1
        self.prev = _grad_state.enabled
        _grad_state.enabled = True
        return self

    def __exit__(self, *exc):
        _depth.value -= 1
        _grad_state.enabled = self.prev


def _lift(x, what):
    if not isinstance(x, Tensor):
        raise ValueError(  # noqa: TRY004 - PyTorch's exception type
            f"{what}: Expected f(*args) to be called with Tensors as the differentiated inputs, "
            f"got {type(x)}. glassgrad: pass tensors, or leave that argument out of argnums."
        )
    if x._requires_grad:
        return x.view_as(x)  # a new node: this level's variable, still linked to the outer one
    return x.detach().requires_grad_()


def _check_argnums(argnums, nargs, what):
    if isinstance(argnums, int):
        if not -nargs <= argnums < nargs:
            raise RuntimeError(
                f"Got argnums={argnums}, but only {nargs} positional inputs were given (in {what})"
            )
        return argnums % nargs
    if not isinstance(argnums, tuple) or not all(isinstance(a, int) for a in argnums):
        raise RuntimeError(
            f"{what}: Expected argnums to be int or tuple of ints, got: {type(argnums)}"
        )
    if not argnums:
        raise RuntimeError(f"{what}: argnums must be non-empty")
    norm = tuple(_check_argnums(a, nargs, what) for a in argnums)
    if len(set(norm)) != len(norm):
        raise RuntimeError(f"{what}: argnums elements must be unique, got {argnums}")
    return norm


def _lift_args(args, argnums, what):
    """args with the differentiated ones lifted; (flat lifted leaves, their pytree spec)."""
    args = list(args)
    picked = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    flat, spec = tree_flatten(picked)
    lifted = [_lift(x, what) for x in flat]
    tree = tree_unflatten(lifted, spec)
    if isinstance(argnums, int):
        args[argnums] = tree
    else:
        for i, t in zip(argnums, tree):
            args[i] = t
    return args, lifted, spec


def _keeps_graph(outputs, own, seq0) -> bool:
    """Whether ``outputs`` depend on tensors that required grad before this transform began
    (then the outermost transform's results must keep their graph)."""
    if _depth.value > 0:
        return True
    if not _grad_state.enabled:
        return False
    own_ids = {id(t) for t in own}
    seen = set()
    stack = []
    for t in outputs:
        if not isinstance(t, Tensor) or not t._requires_grad:
            continue
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif id(t) not in own_ids:
            return True
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            if id(node.variable) not in own_ids:
                return True
            continue
        if node._seq < seq0:
            return True
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _seq_now() -> int:
    from ..autograd import graph

    return next(graph._sequence)


def _detach_tree(tree, keep):
    if keep:
        return tree
    return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


def _grads(outputs, inputs, cotangents, create):
    """d(outputs . cotangents)/d(inputs), zeros where an input was not used."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o._requires_grad]
    if not pairs:
        return [_zeros(x) for x in inputs]
    grads = engine.grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True,
                        create_graph=create, allow_unused=True)
    return [g if g is not None else _zeros(x) for g, x in zip(grads, inputs)]


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``(gradient, value)`` of a function returning a scalar tensor (``torch.func.grad_and_value``).

    ``argnums`` (int or tuple) picks the differentiated positional arguments, each a tensor or a
    pytree of tensors; the gradient has the same structure. With ``has_aux``, ``func`` returns
    ``(output, aux)`` and the value is ``(output, aux)``. RuntimeError when the output is not a
    0-d tensor.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        what = "grad_and_value(f)(*args)"
        nums = _check_argnums(argnums, len(args), what)
        seq0 = _seq_now()
        with _Level():
            new_args, lifted, spec = _lift_args(args, nums, what)
            output = func(*new_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        f"{what}: output of function f should be a tuple: (output, aux) if "
                        "has_aux is True"
                    )
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(  # noqa: TRY004 - PyTorch's exception type
                    f"{what}: Expected f(*args) to return a Tensor, got {type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    f"{what}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
        keep = _keeps_graph([output], lifted, seq0)
        one = _zeros(output) + 1
        flat = _grads([output], lifted, [one], keep)
        grads = tree_unflatten(flat, spec)
        value = _detach_tree(output, keep)
        if has_aux:
            return grads, (value, _detach_tree(aux, keep))
        return grads, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a function returning a scalar tensor (``torch.func.grad``): ``grad(f)(x)``
    has the shape (pytree) of ``x``; ``has_aux`` returns ``(gradient, aux)``. Composes with
    itself and with ``vmap`` (``vmap(grad(f))`` gives per-sample gradients).

    Example: ``glassgrad.func.grad(lambda x: (x ** 3).sum())(glassgrad.tensor([2.]))`` is
    ``tensor([12.])``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns one gradient per primal
    (a tuple), cotangents shaped like the output pytree (``torch.func.vjp``). ``has_aux``: func
    returns ``(output, aux)`` and vjp returns ``(output, vjp_fn, aux)``."""
    what = "vjp(f, *primals)"
    seq0 = _seq_now()
    with _Level():
        flat_p, p_spec = tree_flatten(primals)
        lifted = [_lift(x, what) for x in flat_p]
        out = func(*tree_unflatten(lifted, p_spec))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    "vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                    "has_aux is True"
                )
            out, aux = out
    flat_out, out_spec = tree_flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(  # noqa: TRY004 - PyTorch's exception type
                f"vjp(f, *primals): Expected f to be a function that has non-empty output and "
                f"returns Tensors, got {type(o)}"
            )
    keep = _keeps_graph(flat_out, lifted, seq0)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        for o, c in zip(flat_out, flat_ct):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] "
                    f"has a shape of {o.shape}."
                )
        create = create_graph if create_graph is not None else (
            keep or _depth.value > 0 or any(c._requires_grad for c in flat_ct))
        flat = _grads(flat_out, lifted, flat_ct, create)
        return tuple(tree_unflatten(flat, p_spec))

    result = _detach_tree(out, keep)
    if has_aux:
        return result, vjp_fn, _detach_tree(aux, keep)
    return result, vjp_fn


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product (``torch.func.jvp``), by
    forward-mode AD, or where that cannot serve (inside another transform, inputs that require
    grad: NOTE [Forward transforms] in _forward.py) as the transpose of a vector-Jacobian product
    (the double-vjp trick). ``primals``/``tangents`` are tuples of matching shapes."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(  # noqa: TRY004 - PyTorch's exception type
            "jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. it "
            "should be valid to call f(*primals)."
        )
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
            f"Got primals with structure {p_spec} and tangents with structure {t_spec}"
        )
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have the same shape "
                f"(got {list(p.shape)} and {list(t.shape)})"
            )
    if _forward.usable(flat_p, flat_t, _depth.value):
        res = _forward.jvp_forward(func, flat_p, p_spec, flat_t, has_aux)
        if res is not None:
            return res
    seq0 = _seq_now()
    with _Level():
        lifted = [_lift(x, "jvp(f, primals, tangents)") for x in flat_p]
        out = func(*tree_unflatten(lifted, p_spec))
        aux = None
        if has_aux:
            out, aux = out
        flat_out, out_spec = tree_flatten(out)
        dummies = [_zeros_requiring_grad(o) for o in flat_out]
        pulled = _grads(flat_out, lifted, dummies, True)
    keep = _keeps_graph(flat_out, lifted, seq0) or any(t._requires_grad for t in flat_t)
    live = [(p, t) for p, t in zip(pulled, flat_t) if p._requires_grad]
    if live:
        outs = engine.grad([p for p, _ in live], dummies, [t for _, t in live],
                           retain_graph=True, create_graph=keep, allow_unused=True)
    else:
        outs = [None] * len(dummies)
    tangent_out = [g if g is not None else _zeros(d) for g, d in zip(outs, dummies)]
    primal_out = _detach_tree(out, keep)
    result = (primal_out, tree_unflatten(tangent_out, out_spec))
    if has_aux:
        return result + (_detach_tree(aux, keep),)
    return result


def _zeros_requiring_grad(o):
    return _zeros(o).requires_grad_()


def _zeros(x):
    """Zeros shaped like ``x`` (batched like it under vmap): ``x * 0`` would be NaN where x is
    inf or NaN."""
    z = x.detach() * 0
    arr = z._array
    if type(arr) is np.ndarray:
        arr[...] = 0  # a fresh result: cleared in place
    else:
        z = z.masked_fill(z.isnan(), 0.0)  # NaN (from inf * 0) -> 0
    return z


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """The Jacobian by reverse mode (``torch.func.jacrev``): for an output of shape ``(m...)``
    and an input of shape ``(n...)`` a tensor of shape ``(m..., n...)``; pytrees of outputs and
    inputs give the nested structure PyTorch gives (outputs outside, argnums inside). One
    ``vmap`` of the VJP over the identity's rows; ``chunk_size`` limits rows per batch."""
    from .vmap import vmap

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        what = "jacrev(f)(*args)"
        nums = _check_argnums(argnums, len(args), what)
        picked = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)

        def partial_f(x):
            return _call_with(func, args, kwargs, nums, x)

        res = vjp(partial_f, picked, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(out)
        sizes = [o.numel() for o in flat_out]
        total = sum(sizes)
        flat_in, in_spec = tree_flatten(picked)
        if total == 0:
            jac_rows = [[_empty_jac(o, x) for x in flat_in] for o in flat_out]
        else:
            basis = _basis(flat_out, sizes, total)
            rows = vmap(lambda *cts: vjp_fn(tree_unflatten(list(cts), out_spec))[0],
                        chunk_size=chunk_size)(*basis)
            flat_rows, _ = tree_flatten(rows)
            jac_rows = []
            start = 0
            for o, n in zip(flat_out, sizes):
                jac_rows.append([r.narrow(0, start, n).reshape(tuple(o.shape) + tuple(x.shape))
                                 for r, x in zip(flat_rows, flat_in)])
                start += n
        per_out = [tree_unflatten(j, in_spec) for j in jac_rows]
        jac = tree_unflatten(per_out, out_spec)
        if has_aux:
            return jac, res[2]
        return jac

    return wrapper


def _call_with(func, args, kwargs, nums, x):
    """``func(*args, **kwargs)`` with the differentiated argument(s) ``nums`` replaced by ``x``."""
    full = list(args)
    if isinstance(nums, int):
        full[nums] = x
    else:
        for i, v in zip(nums, x):
            full[i] = v
    return func(*full, **kwargs)


def _basis(flat_out, sizes, total):
    from .. import _factories

    out = []
    start = 0
    for o, n in zip(flat_out, sizes):
        eye = _factories.eye(total, dtype=o.dtype)
        out.append(eye.narrow(1, start, n).reshape((total,) + tuple(o.shape)))
        start += n
    return out


def _empty_jac(o, x):
    from .. import _factories

    return _factories.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian by forward mode (``torch.func.jacfwd``), same shapes and structure as
    ``jacrev``: one ``jvp`` per input element (a column of the Jacobian each), forward-mode AD
    where it serves (NOTE [Forward transforms] in _forward.py); reverse mode (``jacrev``) for a
    ``func`` that differentiates itself, as ``hessian``'s inner ``jacrev`` does."""
    from .. import _factories
    from .. import stack as _stack

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        what = "jacfwd(f)(*args)"
        nums = _check_argnums(argnums, len(args), what)
        picked = args[nums] if isinstance(nums, int) else tuple(args[i] for i in nums)
        flat_in, in_spec = tree_flatten(picked)
        for x in flat_in:
            _lift(x, what)  # PyTorch's error for a differentiated input that is no Tensor

        def partial_f(*xs):
            return _call_with(func, args, kwargs, nums, tree_unflatten(list(xs), in_spec))

        zeros = [_factories.zeros(tuple(x.shape), dtype=x.dtype) for x in flat_in]
        cols = []  # per input element: (flat outputs' tangents, aux)
        out = aux = None
        for k, x in enumerate(flat_in):
            for j in range(x.numel()):
                e = zeros[k].clone()
                e.view(-1)[j] = 1.0
                tangents = tuple(e if i == k else zeros[i] for i in range(len(flat_in)))
                res = jvp(partial_f, tuple(flat_in), tangents, has_aux=has_aux)
                out, col = res[0], res[1]
                aux = res[2] if has_aux else None
                cols.append((k, tree_flatten(col)[0]))
        if out is None:  # no input element: run once for the output's shape
            res = partial_f(*flat_in)
            out, aux = res if has_aux else (res, None)
        flat_out, out_spec = tree_flatten(out)
        per_out = []
        for m, o in enumerate(flat_out):
            entries = []
            for k, x in enumerate(flat_in):
                mine = [c[m] for kk, c in cols if kk == k]
                shape = tuple(o.shape) + tuple(x.shape)
                if not mine:
                    entries.append(_factories.zeros(shape, dtype=o.dtype))
                    continue
                jac = _stack(mine, -1).reshape(shape)
                entries.append(jac)
            per_out.append(tree_unflatten(entries, in_spec))
        jac = tree_unflatten(per_out, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """Second derivatives of a scalar function: ``jacfwd(jacrev(func))`` (``torch.func.hessian``);
    for an input of shape ``(n...)`` a tensor of shape ``(n..., n...)``."""
    return jacfwd(jacrev(func, argnums), argnums)
