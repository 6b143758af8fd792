"""JVP rules of the primitives: the tangent of an op's output from its inputs' tangents.

NOTE [JVP rules]: forward AD (NOTE [Forward AD] in autograd/forward_ad.py) asks ``jvp`` for the
tangent of every op that reads a dual tensor. ``UNARY`` holds the pointwise functions'
derivatives (J v = f'(x) v); three tables cover the primitives whose JVP is the op itself:
``LINEAR`` ops (shape, indexing, reductions, scaling, joins: J v = op(v), the absent tangents
zeros), ``SHIFT`` ops (x + c: J v = v, and c - x: -v) and ``BILINEAR`` ops (products, matmul,
einsum: op(v, y) + op(x, w)). ``RULES`` holds rules written out here (softmax, log_softmax, div,
logcumsumexp), and a primitive may declare its own ``jvp(primals, tangents, result, **attrs)``.
Every other primitive (losses, norms, pooling with indices, convolution, clamps, min/max, ...)
and every new op of the other lanes gets the generic rule: its VJP is linear in the cotangent u,
so J v = d/du <VJP(u), v>, one backward run with a graph and one engine pass (``double_vjp``).
tests/test_forward_ad_ops.py checks every op of the op table by the transpose identity
<J v, u> = <v, J^T u> and against torch's forward AD.
"""

from __future__ import annotations

from ._util import mark_view

LINEAR = frozenset("""
    AddBatchDim RemoveBatchDim Alias AlphaMulScalar MulScalar DivScalar Neg Clone Cumsum
    DiagEmbed Diagonal DiagonalCopy Expand Flip Gather Index IndexBackward Mean MeanDim
    MeanBackward Permute Repeat Reshape Roll Select SelectGrad Slice SplitPiece
    SplitWithSizesPiece Squeeze SqueezeDim SqueezeDims Sum SumDim SumBackward SumToSize T
    Transpose Tril Triu Unsqueeze UnsqueezeIndex UnbindPiece Unbind Trace EinsumUnary Im2Col
    Col2Im AvgPool AvgPoolBackward AdaptiveAvgPool AdaptiveAvgPoolBackward MaxPoolBackward
    Add Sub Cat Stack ScatterAdd Scatter IndexPut CopySlices MaskedFillTensor Where ToCopy
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


_LN2, _LN10, _TWO_BY_SQRT_PI = 0.6931471805599453, 2.302585092994046, 1.1283791670955126
# NOTE [JVP rules]: pointwise ops, J v = f'(x) v, with f' from the input x and the result r
UNARY = {
    "Exp": lambda x, r: r,
    "Expm1": lambda x, r: r + 1,
    "Log": lambda x, r: x.reciprocal(),
    "Log1p": lambda x, r: (x + 1).reciprocal(),
    "Log2": lambda x, r: (x * _LN2).reciprocal(),
    "Log10": lambda x, r: (x * _LN10).reciprocal(),
    "Sqrt": lambda x, r: (r * 2).reciprocal(),
    "Rsqrt": lambda x, r: r ** 3 * -0.5,
    "Reciprocal": lambda x, r: -(r * r),
    "Sin": lambda x, r: x.cos(),
    "Cos": lambda x, r: -x.sin(),
    "Tan": lambda x, r: r * r + 1,
    "Sinh": lambda x, r: x.cosh(),
    "Cosh": lambda x, r: x.sinh(),
    "Tanh": lambda x, r: 1 - r * r,
    "Sigmoid": lambda x, r: r * (1 - r),
    "Asin": lambda x, r: (1 - x * x).rsqrt(),
    "Acos": lambda x, r: -(1 - x * x).rsqrt(),
    "Atan": lambda x, r: (x * x + 1).reciprocal(),
    "Asinh": lambda x, r: (x * x + 1).rsqrt(),
    "Acosh": lambda x, r: (x * x - 1).rsqrt(),
    "Atanh": lambda x, r: (1 - x * x).reciprocal(),
    "Erf": lambda x, r: (-(x * x)).exp() * _TWO_BY_SQRT_PI,
    "Erfc": lambda x, r: (-(x * x)).exp() * -_TWO_BY_SQRT_PI,
    "Relu": lambda x, r: (x > 0).to(x.dtype),
    "Abs": lambda x, r: x.sign(),
    "Silu": lambda x, r: x.sigmoid() * (1 + x * (1 - x.sigmoid())),
}


def _softmax(primals, tangents, result, *, dim):
    (v,) = tangents
    return result * (v - (result * v).sum(dim, keepdim=True))


def _log_softmax(primals, tangents, result, *, dim):
    (v,) = tangents
    return v - (result.exp() * v).sum(dim, keepdim=True)


def _div(primals, tangents, result):
    (_, y), (v, w) = primals, tangents
    out = None if v is None else v / y
    if w is not None:
        term = -w * result / y
        out = term if out is None else out + term
    return out


RULES = {"LogCumSumExp": _logcumsumexp, "Softmax": _softmax, "LogSoftmax": _log_softmax,
         "Div": _div}


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
        elif name in UNARY:
            out = UNARY[name](primals[0], result.detach()) * tangents[0]
        elif name in LINEAR:
            out = cls.apply(*_filled(primals, tangents), **attrs)
            if len(tangents) == 1 and not cls.multi_output:  # a view's tangent: a view too
                mark_view(out, tangents[0], lambda b: cls.apply(b, **attrs))
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
        try:
            out = double_vjp(cls, result, primals, tangents, attrs)
        except NotImplementedError as e:  # a derivative the backward lacks (igamma's in a)
            raise NotImplementedError(
                f"Trying to use forward AD with {name.lower()} that does not support it because "
                f"it has not been implemented yet.\nglassgrad: {e}") from None
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
    if any(o.dtype.is_complex for o in outs) or any(p.dtype.is_complex for p in primals):
        raise RuntimeError(f"forward AD: {cls.__name__} has complex inputs or outputs and no JVP "
                           "rule; the generic rule (a double VJP) is real-only for now")
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
