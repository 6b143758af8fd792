"""``torch.while_loop`` in eager mode and ``torch.slice_inverse`` (issue 15, lane agrad).

PyTorch runs its higher-order op through torch.compile even when called eagerly, so its rules are
the traced op's: carried inputs are a tuple or list of (nested) tensors and ints, ``body_fn``
returns as many of them with the same shapes and dtypes, returns no input itself (no aliasing),
and ``cond_fn`` returns a boolean 0-d tensor or a bool. glassgrad has no compiler: the loop runs in
Python and checks the same rules on each iteration, so autograd records through it as through
any other code (PyTorch gives such a result a ``WhileLoopAutogradOpBackward`` node instead).
"""

from __future__ import annotations

from . import dtypes
from .func._pytree import tree_flatten, tree_unflatten
from .tensor import Tensor


def _check_pred(pred) -> bool:
    if isinstance(pred, bool):
        return pred
    if isinstance(pred, Tensor) and pred.dim() == 0 and pred.dtype == dtypes.bool:
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got {pred}"
                       "\nglassgrad: compare to a number, e.g. `i < n` or `x.sum() < 10`.")


def _aliases(out: Tensor, inputs: list) -> bool:
    base = out._base if out._base is not None else out
    return any(isinstance(t, Tensor) and (t is out or t is base or t._base is base
                                          or (t._base is not None and t._base is out))
               for t in inputs)


def _check_body(out, flat: list) -> list:
    out_leaves = tree_flatten(out)[0] if isinstance(out, (tuple, list)) else [out]
    if len(out_leaves) != len(flat):
        raise RuntimeError(
            "Expected body_fn_output and carried_inputs to have same number of outputs but got "
            f"lhs:{out_leaves} and rhs:{flat}\nglassgrad: body_fn returns one value per carried "
            "input, in the same structure.")
    for i, (new, old) in enumerate(zip(out_leaves, flat)):
        if isinstance(old, Tensor):
            if not isinstance(new, Tensor) or new.shape != old.shape or new.dtype != old.dtype:
                got = (f"shape {list(new.shape)} {new.dtype}" if isinstance(new, Tensor)
                       else type(new).__name__)
                raise RuntimeError(
                    "Expected body_fn_output and carried_inputs to have same metadata but found: "
                    f"pair[{i}] differ: body_fn gave {got}, the carried input is shape "
                    f"{list(old.shape)} {old.dtype}".replace("glassgrad.", "torch."))
            if _aliases(new, flat):
                raise RuntimeError(
                    "Encountered aliasing during higher order op tracing: torch.while_loop's "
                    f"body_fn returned carried input {i} (or a view of one) as output {i}.\n"
                    "glassgrad: return a clone() instead.")
        elif not isinstance(new, int):
            raise RuntimeError(
                f"Expected body_fn_output and carried_inputs to have same metadata but found: "
                f"pair[{i}] differ: body_fn gave {type(new).__name__} for an int carry")
    return out_leaves


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` is true and return the
    carried values, a tuple shaped as ``carried_inputs`` (``torch.while_loop``); inputs come back cloned when the loop
    never runs. ``carried_inputs``: a tuple or list of tensors and ints, possibly nested.

    Raises RuntimeError for a non-callable function, a non-boolean condition, a body result of
    another length, shape or dtype than the carried inputs, or one that returns an input itself;
    AssertionError for a leaf that is neither a tensor nor an int, as PyTorch does.

    >>> glassgrad.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.sin()),
    ...                      (glassgrad.tensor(0), glassgrad.ones(2)))
    """
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    flat, spec = tree_flatten(tuple(carried_inputs))
    if not all(isinstance(v, (Tensor, int)) for v in flat):
        raise AssertionError(
            f"{list(carried_inputs)} can only be of (<class 'torch.Tensor'>, <class 'int'>, "
            f"<class 'torch.SymInt'>) but got {tuple(type(v) for v in flat)}")
    if not _check_pred(cond_fn(*tree_unflatten(flat, spec))):
        return tree_unflatten([v.clone() if isinstance(v, Tensor) else v for v in flat], spec)
    while True:
        flat = _check_body(body_fn(*tree_unflatten(flat, spec)), flat)
        if not _check_pred(cond_fn(*tree_unflatten(flat, spec))):
            return tree_unflatten(flat, spec)


def slice_inverse(input, src, dim: int = 0, start=None, end=None, step: int = 1):
    """``src``'s shape, strides and offset read over ``input``'s storage: the base of which
    ``input`` is the slice ``[start:end:step]`` along ``dim`` (``torch.slice_inverse``, what
    functionalization emits for a slice's base). Gradients as PyTorch's: ``input`` gets
    ``grad``'s slice, ``src`` the rest.

    PyTorch returns a view of ``input``'s storage; glassgrad returns a copy of it (writes to the
    result do not reach ``input``). RuntimeError "setStorage: ... out of bounds" when that storage
    is too small for ``src``'s geometry, as in PyTorch.
    """
    from .autograd.grad_mode import no_grad
    from .ops._util import wrap_dim
    from .ops.slice_inverse import SliceInverse

    with no_grad():  # PyTorch's window check, and its error
        input.as_strided(src.size(), src.stride(), src.storage_offset())
    return SliceInverse.apply(input, src, size=tuple(src.size()), stride=src.stride(),
                              offset=src.storage_offset(), dim=wrap_dim(dim, src.dim()),
                              start=start, end=end, step=step)
