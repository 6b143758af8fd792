"""KL divergence with torch's registry (``torch.distributions.kl``): ``register_kl(P, Q)``
decorates a function of ``(p, q)``; ``kl_divergence(p, q)`` calls the most specific registered
pair for ``(type(p), type(q))`` (nearest in both method-resolution orders; a RuntimeWarning when
the two orders disagree) and raises NotImplementedError where no pair is registered, as torch
does. The pairs themselves live in _kl_pairs.py and the families' own modules."""

from __future__ import annotations


import glassgrad as _g

from .utils import _sum_rightmost
from .._user_warning import warn_user

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for ``p`` of type ``type_p`` and ``q``
    of type ``type_q`` (subclasses included). TypeError for an argument that is not a class
    (torch checks no more than that: any class is accepted)."""
    if not isinstance(type_p, type):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair may be more specific than a cached one
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    left = min(matches, key=lambda m: (mro_p.index(m[0]), mro_q.index(m[1])))
    right = min(matches, key=lambda m: (mro_q.index(m[1]), mro_p.index(m[0])))
    left_fun, right_fun = _KL_REGISTRY[left], _KL_REGISTRY[right]
    if left_fun is not right_fun:
        warn_user(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                  f"register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), batched over the batch shape (``torch.distributions.kl_divergence``).
    NotImplementedError when no pair covers ``(type(p), type(q))``."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    return _g.full_like(tensor, float("inf"))


def _x_log_x(tensor):
    return _g.xlogy(tensor, tensor)  # 0 at 0


def _batch_trace_XXT(bmat):
    """trace(X X^T) over trailing batch dims: the sum of squares of each matrix."""
    n, m = bmat.size(-1), bmat.size(-2)
    flat_trace = bmat.reshape(-1, m * n).pow(2).sum(-1)
    return flat_trace.reshape(tuple(bmat.shape[:-2]))


def _inf_where(cond, result):
    return _g.where(cond, float("inf"), result)


def _kl_expfamily_expfamily(p, q):
    """Same exponential family: the Bregman divergence of the log normaliser."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams = [np_.detach().requires_grad_() for np_ in p._natural_params]
    q_nparams = q._natural_params
    with _g.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
    gradients = _g.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result
