"""``torch.func.jvp``, ``jacfwd`` and ``linearize`` on forward-mode AD (autograd/forward_ad.py).

NOTE [Forward transforms]: ``jvp`` runs ``func`` once on dual tensors in a dual level of its own.
Forward AD has one level and its tangents carry no graph back to the primals, so the double-vjp
form in transforms.py (the transpose of a VJP) stays for what forward mode cannot give: a jvp
inside another transform (``grad(jvp)``, ``jvp(jvp)``, ``jacfwd(jacrev)``, i.e. ``hessian``),
primals or tangents that require grad (the result must carry a graph), and a ``func`` that runs a
backward itself (noticed by the engine while the level is open: its tangents would miss the
backward's ops, so the call is redone by the other form).
"""

from __future__ import annotations

from ..autograd import forward_ad as fwad
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_unflatten


def usable(flat_p, flat_t, depth: int) -> bool:
    """Whether ``jvp`` may run in forward mode (NOTE [Forward transforms])."""
    if depth or fwad._State.level >= 0:
        return False
    return all(isinstance(p, Tensor) and isinstance(t, Tensor) and not p._requires_grad
               and not t._requires_grad and p.dtype.is_floating_point
               and t.dtype.is_floating_point for p, t in zip(flat_p, flat_t))


def jvp_forward(func, flat_p, p_spec, flat_t, has_aux: bool):
    """``(func(*primals), J @ tangents[, aux])`` by one forward-mode pass; None when the pass
    cannot stand (NOTE [Forward transforms]), and the caller uses the double-vjp form."""
    fwad.enter_dual_level()
    runs = fwad._State.backward_runs
    try:
        duals = [fwad.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
        out = func(*tree_unflatten(duals, p_spec))
        aux = None
        if has_aux:
            out, aux = out
        flat_out, out_spec = tree_flatten(out)
        if fwad._State.backward_runs != runs or not all(isinstance(o, Tensor) for o in flat_out):
            return None
        tangents = []
        for o in flat_out:
            v = fwad.tangent_of(o)
            if v is None:
                v = o.detach() * 0
                v._array[...] = 0  # NOTE: not x * 0 alone, which is NaN where x is inf
            tangents.append(v)
        primals = [o.detach() for o in flat_out]
    finally:
        fwad.exit_dual_level()
    result = (tree_unflatten(primals, out_spec), tree_unflatten(tangents, out_spec))
    if has_aux:
        flat_aux, aux_spec = tree_flatten(aux)
        aux = tree_unflatten([a.detach() if isinstance(a, Tensor) else a for a in flat_aux],
                             aux_spec)
        return result + (aux,)
    return result


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` with ``jvp_fn(*tangents)`` the Jacobian-vector product at
    ``primals`` (``torch.func.linearize``). glassgrad reruns ``func`` in forward mode for each
    call of ``jvp_fn`` (PyTorch traces the linear part once): the values are the same."""
    from .transforms import jvp

    flat_p, p_spec = tree_flatten(primals)
    primals = tree_unflatten([p.detach() if isinstance(p, Tensor) else p for p in flat_p], p_spec)
    out = func(*primals)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the "
                               f"primals {p_spec}")
        for k, (p, t) in enumerate(zip(flat_p, flat_t)):
            if tuple(p.shape) != tuple(t.shape):
                raise RuntimeError(
                    f"tangent:{k} with shape {t.shape} in flattened pytree doesn't match the "
                    f"shape {p.shape} of the corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn
