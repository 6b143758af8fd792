"""JVP rules of the primitives: the tangent of an op's output from its inputs' tangents.

NOTE [JVP rules]: forward AD (NOTE [Forward AD] in autograd/forward_ad.py) asks ``jvp`` for the
tangent of every op that reads a dual tensor. Three tables cover the primitives whose JVP is the
op itself: ``LINEAR`` ops (shape, indexing, reductions, scaling, joins: J v = op(v), the absent
tangents zeros), ``SHIFT`` ops (x + c: J v = v, and c - x: -v) and ``BILINEAR`` ops (products,
matmul, einsum: op(v, y) + op(x, w)). A primitive may also declare its own
``jvp(primals, tangents, result, **attrs)``. Every other primitive (the pointwise functions,
losses, norms, pooling with indices, ...) and every new op of the other lanes gets the generic
rule: its VJP is linear in the cotangent u, so J v = d/du <VJP(u), v>, one backward run with a
graph and one engine pass (``double_vjp``). tests/test_forward_ad.py checks every op of the op
table by the transpose identity <J v, u> = <v, J^T u> and against torch's forward AD.
"""

from __future__ import annotations

LINEAR = frozenset("""
    AddBatchDim RemoveBatchDim Alias AlphaMulScalar MulScalar DivScalar Neg Clone Cumsum
    DiagEmbed Diagonal DiagonalCopy Expand Flip Gather Index IndexBackward Mean MeanDim
    MeanBackward Permute Repeat Reshape Roll Select SelectGrad Slice SplitPiece
    SplitWithSizesPiece Squeeze SqueezeDim SqueezeDims Sum SumDim SumBackward SumToSize T
    Transpose Tril Triu Unsqueeze UnsqueezeIndex UnbindPiece Unbind Trace EinsumUnary Im2Col
    Col2Im AvgPool AvgPoolBackward AdaptiveAvgPool AdaptiveAvgPoolBackward MaxPoolBackward
    Add Sub Cat Stack ScatterAdd Scatter IndexPut CopySlices MaskedFillTensor Where
""".split())
SHIFT = {"AddScalar": 1.0, "SubScalar": 1.0, "RSubScalar": -1.0}
BILINEAR = frozenset("Mul MatMul MatMulNT MatMulTN Bmm Dot Mv Einsum".split())


def _logcumsumexp(primals, tangents, result, *, dim):
    # NOTE: LogCumSumExp's backward branches on the cotangent's sign, so the generic rule would
    # see u == 0 only. dr_k = sum_{i<=k} exp(x_i - r_k) v_i, summed in log space per sign of v
    # (as the backward does for the cotangent), so neither an overflow nor an -inf meets a 0
    import numpy as np

    from .. import from_numpy

    (x,), (v,) = primals, tangents
    a, t, r = x._array, v._array.astype(x._array.dtype), result._array
    out = np.zeros_like(r)
    with np.errstate(divide="ignore", invalid="ignore"):
        for part, sign in ((np.maximum(t, 0), 1), (np.maximum(-t, 0), -1)):
            acc = np.logaddexp.accumulate(a + np.log(part), axis=dim) - r
            out += sign * np.where(np.isneginf(r), 0.0, np.exp(acc))
    return from_numpy(out)


RULES = {"LogCumSumExp": _logcumsumexp}


def _float(t) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def _filled(primals, tangents):
    from .. import zeros_like

    return [v if v is not None else zeros_like(p) for p, v in zip(primals, tangents)]


def jvp(cls, result, inputs, tangents, attrs):
    """The tangent (a tuple for a multi-output op) of ``cls``'s ``result`` given its inputs'
    ``tangents`` (None for an input that is not dual); None for an output that is not floating."""
    from ..autograd.grad_mode import no_grad

    name = cls.__name__
    primals = [t.detach() for t in inputs]
    own = RULES.get(name) or getattr(cls, "jvp", None)
    with no_grad():
        if own is not None:
            out = own(primals, tangents, result, **attrs)
        elif name in LINEAR:
            out = cls.apply(*_filled(primals, tangents), **attrs)
        elif name in SHIFT:
            out = tangents[0] if SHIFT[name] > 0 else -tangents[0]
        elif name in BILINEAR:
            x, y = primals
            v, w = tangents
            out = None
            if v is not None:
                out = cls.apply(v, y, **attrs)
            if w is not None:
                term = cls.apply(x, w, **attrs)
                out = term if out is None else out + term
        else:
            out = None
    if out is None and own is None and name not in BILINEAR:
        out = double_vjp(cls, result, primals, tangents, attrs)
    if cls.multi_output:
        return tuple(_cast(v, r) for v, r in zip(out, result))
    return _cast(out, result)


def _cast(v, r):
    if v is None or not _float(r):
        return None
    if v.dtype != r.dtype:
        v = v.to(r.dtype)
    if tuple(v.shape) != tuple(r.shape):
        v = v.expand(r.shape).clone()
    return v


def double_vjp(cls, result, primals, tangents, attrs):
    """NOTE [JVP rules]: J v = d/du <VJP(u), v>, through ``cls.backward`` run with a graph."""
    from .. import zeros_like
    from ..autograd.engine import grad
    from ..autograd.grad_mode import enable_grad

    outs = tuple(result) if cls.multi_output else (result,)
    outs = [o.detach() for o in outs]
    if cls.once_differentiable:
        raise RuntimeError(f"forward AD: {cls.__name__} has no JVP rule and its backward is "
                           "once_differentiable, so the generic rule (a double VJP) cannot run")
    with enable_grad():
        us = [zeros_like(o).requires_grad_() if _float(o) else None for o in outs]
        saved = [primals[i] if i >= 0 else outs[-1 - i] for i in cls._save_idx]
        u = tuple(us) if cls.multi_output else us[0]
        kw = dict(attrs)
        if cls.wants_needs_input_grad:
            kw["needs_input_grad"] = tuple(v is not None for v in tangents)
        grads = cls.backward(u, *saved, **kw)
        total = None
        for g, v in zip(grads, tangents):
            if g is None or v is None:
                continue
            term = (g * v.to(g.dtype)).sum()
            total = term if total is None else total + term
    live = [x for x in us if x is not None]
    if total is None or not total.requires_grad:
        found = [None] * len(live)
    else:
        found = grad(total, live, allow_unused=True)
    it = iter(found)
    jv = [None if x is None else next(it) for x in us]
    jv = [zeros_like(o) if x is not None and g is None else g for o, x, g in zip(outs, us, jv)]
    return tuple(jv) if cls.multi_output else jv[0]
