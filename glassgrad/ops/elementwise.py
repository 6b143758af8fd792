"""Elementwise primitives and their public functions (``torch.add``, ``torch.exp``, ...).

Every backward is written in glassgrad ops, so it is differentiable again (double backward).
Binary ops broadcast; the engine sums gradients back to each input's shape.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..amp.autocast import autocast_arg
from ..amp.autocast import state as _autocast
from . import _special, primitive
from . import complex_ops as _cx
from ._convert import checked
from ._numpy_warnings import retry_quietly
from ._util import (
    _check_number, cast, cj, index_snapshot, is_tensor, promote, reject_bool_sub, scalar, write_out,
)
from .elementwise_backward import (
    SelectGrad,
    SigmoidBackward,
    TanhBackward,
    ThresholdBackward,
)
from .piecewise import (  # noqa: F401 - piecewise-constant ops and clamp, re-exported
    Ceil,
    Clamp,
    ClampMaxTensor,
    ClampMinTensor,
    ClampOneTensor,
    ClampTensor,
    Floor,
    FloorDivide,
    Round,
    RoundDecimals,
    Sign,
    Trunc,
    _check_integer_divisor,
    _fp_quiet,
    _quiet,
    _sign,
    _Step,
    _trunc_divide_int,
)
from .power import Pow, PowScalar, RPowScalar, pow  # noqa: F401 - pow re-exported
from .primitive import Primitive
from .scalar import AlphaMulScalar

_BF16 = dtypes.bfloat16.np


class ToCopy(Primitive):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(xp, x, *, dtype, src):
        if x.dtype.kind == "c" and dtype.kind != "c":  # NOTE [Complex gradients] in complex_ops
            return x.real.astype(dtype)
        return x.astype(dtype)

    @staticmethod
    def backward(grad, *, dtype, src):
        if dtype.kind == "c" and src.kind != "c":  # a real input takes the real part
            grad = _cx.real(grad)
        return (to_dtype(grad, dtypes._FROM_NP[src]),)


def to_dtype(x, dtype):
    """``x.to(dtype)``: a copy in another dtype, differentiable between floating dtypes."""
    if x._array.dtype == dtype.np:
        return x
    if x._array.dtype.kind == "c" and not dtype.is_complex:
        _cx.warn_discard(x, dtype)
    if x._requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        # NOTE: an integer or bool copy is not differentiable, so it does not require grad (as
        # in PyTorch); copy_ and setitem into such tensors convert here and record nothing
        try:
            return primitive._make(x._array.astype(dtype.np))
        except RuntimeWarning:  # NOTE [NumPy warnings] in ops/_numpy_warnings.py (inf to int)
            return primitive._make(retry_quietly(x._array.astype, dtype.np))
    return ToCopy.apply(x, dtype=dtype.np, src=x._array.dtype)


class Add(Primitive):
    @staticmethod
    def forward(xp, x, y):
        return x + y

    @staticmethod
    def backward(grad):
        return grad, grad

    backward_np = backward  # NOTE [Array backward]: the same rule on arrays


class Sub(Primitive):
    @staticmethod
    def forward(xp, x, y):
        return x - y

    @staticmethod
    def backward(grad):
        return grad, -grad

    backward_np = backward


class Mul(Primitive):
    saves = ("x", "y")
    saved_for = {"x": ("y",), "y": ("x",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        return x * y

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        return (grad * cj(y) if needs_input_grad[0] else None,
                grad * cj(x) if needs_input_grad[1] else None)

    backward_np = backward


class Div(Primitive):
    saves = ("x", "y")
    saved_for = {"x": ("y",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        with _fp_quiet():  # x / 0 is inf or nan, silently, as in PyTorch
            return x / y

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        grad_x = grad / cj(y)
        return grad_x, (-grad_x * cj(x / y) if needs_input_grad[1] else None)

    backward_np = backward


class Neg(Primitive):
    @staticmethod
    def forward(xp, x):
        return -x

    @staticmethod
    def backward(grad):
        return (-grad,)

    backward_np = backward


def _unary(name, fwd, bwd, saves=("x",), node_name=None, bwd_np=None, ufunc=None):
    """Declare a one-input primitive from its forward array function and its derivative rule
    (``bwd_np``: the rule on arrays, NOTE [Array backward] in autograd/engine_arrays.py)."""
    ns = {
        "saves": saves,
        "forward": staticmethod(fwd),
        "backward": staticmethod(bwd),
    }
    if bwd_np is not None:
        ns["backward_np"] = staticmethod(bwd_np)
    if ufunc is not None:  # forward is this ufunc: the fast path calls it directly
        ns["ufunc"] = ufunc
    if node_name:
        ns["node_name"] = node_name
    return type(name, (Primitive,), ns)


# derivative rules read like a table: d/dx f(x), from the saved input x or result r
# (a rule written with plain arithmetic serves arrays too: NumPy's scalar rules are PyTorch's here)
_exp_rule = lambda g, r: (g * cj(r),)
_log_rule = lambda g, x: (g / cj(x),)
_log1p_rule = lambda g, x: (g / cj(x + 1),)
_expm1_rule = lambda g, r: (g * cj(r + 1),)
_sqrt_rule = lambda g, r: (g / cj(2 * r),)
_reciprocal_rule = lambda g, r: (-g * cj(r * r),)
# NOTE: no errstate (~1 us a call, more than a small exp; NOTE [Fast path]): overflow still warns
Exp = _unary("Exp", lambda xp, x: xp.exp(x), _exp_rule, ("result",), bwd_np=_exp_rule, ufunc=np.exp)
Log = _unary("Log", _quiet(lambda xp, x: xp.log(x)), _log_rule, bwd_np=_log_rule)
Log1p = _unary("Log1p", _quiet(lambda xp, x: xp.log1p(x)), _log1p_rule,
               node_name="Log1PBackward0", bwd_np=_log1p_rule)
Expm1 = _unary("Expm1", _quiet(lambda xp, x: xp.expm1(x)), _expm1_rule, ("result",),
               bwd_np=_expm1_rule)
Log2 = _unary("Log2", _quiet(lambda xp, x: xp.log2(x)), lambda g, x: (g / (x * math.log(2.0)),))
Log10 = _unary("Log10", _quiet(lambda xp, x: xp.log10(x)),
               lambda g, x: (g / (x * math.log(10.0)),))
Sqrt = _unary("Sqrt", _quiet(lambda xp, x: xp.sqrt(x)), _sqrt_rule, ("result",), bwd_np=_sqrt_rule)
Rsqrt = _unary("Rsqrt", _quiet(lambda xp, x: 1 / xp.sqrt(x)), lambda g, r: (g * -0.5 * r**3,),
               ("result",))
Sin = _unary("Sin", lambda xp, x: xp.sin(x), lambda g, x: (g * cj(cos(x)),),
             bwd_np=lambda g, x: (g * cj(np.cos(x)),), ufunc=np.sin)
Cos = _unary("Cos", lambda xp, x: xp.cos(x), lambda g, x: (-g * cj(sin(x)),),
             bwd_np=lambda g, x: (-g * cj(np.sin(x)),), ufunc=np.cos)
Tan = _unary("Tan", lambda xp, x: xp.tan(x), lambda g, r: (g * cj(1 + r * r),), ("result",))
Asin = _unary("Asin", _quiet(lambda xp, x: xp.arcsin(x)), lambda g, x: (g * rsqrt(1 - x * x),))
Acos = _unary("Acos", _quiet(lambda xp, x: xp.arccos(x)), lambda g, x: (-g * rsqrt(1 - x * x),))
Atan = _unary("Atan", lambda xp, x: xp.arctan(x), lambda g, x: (g / (1 + x * x),))
Sinh = _unary("Sinh", _quiet(lambda xp, x: xp.sinh(x)), lambda g, x: (g * cj(cosh(x)),))
Cosh = _unary("Cosh", _quiet(lambda xp, x: xp.cosh(x)), lambda g, x: (g * cj(sinh(x)),))
Tanh = _unary("Tanh", lambda xp, x: xp.tanh(x), lambda g, r: (TanhBackward.apply_binary(g, r),),
              ("result",), bwd_np=lambda g, r: (g * cj(1 - r * r),), ufunc=np.tanh)
Sigmoid = _unary(
    "Sigmoid",
    lambda xp, x: _sigmoid(xp, x),
    lambda g, r: (SigmoidBackward.apply_binary(g, r),),
    ("result",),
    bwd_np=lambda g, r: (SigmoidBackward.forward(np, g, r),),
)
Relu = _unary("Relu", lambda xp, x: xp.maximum(x, 0).astype(x.dtype, copy=False),
              lambda g, r: (ThresholdBackward.apply_binary(g, r),), ("result",),
              bwd_np=lambda g, r: (ThresholdBackward.forward(np, g, r),))
Erf = _unary("Erf", lambda xp, x: _special.erf(x),  # NOTE [Cody's erf] in _special.py
             lambda g, x: (g * (2 / math.sqrt(math.pi)) * exp(-x * x),))
Reciprocal = _unary("Reciprocal", _quiet(lambda xp, x: 1 / x), _reciprocal_rule, ("result",),
                    bwd_np=_reciprocal_rule)
Abs = _unary("Abs", lambda xp, x: xp.abs(x), lambda g, x: (g * _cx.sgn(x),))
Frac = _unary("Frac", lambda xp, x: x - xp.trunc(x), lambda g: (g,), ())


def _sigmoid(xp, x):
    # NOTE: by sign so exp never overflows (float16 would give nan otherwise): 1 / (1 + exp(-x))
    # for x >= 0, exp(x) / (1 + exp(x)) below; exp(-|x|) is both, with no masked copies
    e = xp.exp(-xp.abs(x))
    return xp.maximum(e, x >= 0) / (1 + e)  # maximum(e, x >= 0): 1 where x >= 0 (e <= 1), else e


class Where(Primitive):
    """``where(condition, x, y)``; the boolean condition is an attribute (it has no gradient)."""

    node_name = "WhereBackward0"
    frees_attrs = True  # NOTE [Freed attributes] in primitive.py (PyTorch saves the condition)

    @staticmethod
    def forward(xp, x, y, *, condition):
        return xp.where(condition, x, y)

    @staticmethod
    def backward(grad, *, condition):
        zero = scalar(0, grad._array.dtype)  # (one dtype already: no promotion needed)
        return (Where.apply(grad, zero, condition=condition),
                Where.apply(zero, grad, condition=condition))


def select_grad(condition, grad):
    """``grad`` where ``condition`` (a bool Tensor or array) else 0, as PyTorch's derivatives
    select: an inf/NaN upstream gradient stays out of the zeros, where ``grad * mask`` would give
    ``inf * 0 = nan`` there."""
    cond = condition._array if is_tensor(condition) else condition
    return SelectGrad.apply(grad, condition=cond)


class Maximum(Primitive):
    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return xp.maximum(x, y)

    @staticmethod
    def backward(grad, x, y):
        # NOTE: ties split the gradient in half, as PyTorch does; a NaN passes it to both sides;
        # selected, not multiplied by a mask (PyTorch's masked_fill: 0 even for an inf grad)
        shared = where(x == y, grad * 0.5, grad)
        return select_grad(~(x < y), shared), select_grad(~(x > y), shared)


class Minimum(Primitive):
    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return xp.minimum(x, y)

    @staticmethod
    def backward(grad, x, y):
        shared = where(x == y, grad * 0.5, grad)
        return select_grad(~(x > y), shared), select_grad(~(x < y), shared)


class Atan2(Primitive):
    saves = ("x", "y")

    @staticmethod
    def forward(xp, x, y):
        return xp.arctan2(x, y)

    @staticmethod
    def backward(grad, x, y):
        # NOTE: PyTorch's reciprocal is 0 where x * x + y * y is 0 (atan2(0, 0)), not inf
        denom = x * x + y * y
        recip = where(denom == 0, 0.0, Reciprocal.apply(denom))
        return grad * y * recip, grad * -x * recip


class Remainder(Primitive):
    saves = ("x", "y")
    saved_for = {"x": ("y",), "y": ("y",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        with _fp_quiet():
            return xp.remainder(x, y)

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        return grad, (-grad * floor_divide(x, y) if needs_input_grad[1] else None)


class Fmod(Primitive):
    saves = ("x", "y")
    saved_for = {"x": ("y",), "y": ("y",)}  # NOTE [Saved when needed] in primitive.py
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, x, y):
        with _fp_quiet():
            return xp.fmod(x, y)

    @staticmethod
    def backward(grad, x, y, needs_input_grad):
        return grad, (-grad * trunc(x / y) if needs_input_grad[1] else None)


def _float_input(x, op):
    if not is_tensor(x):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x._array.dtype.kind in "biu":
        return cast(x, dtypes.get_default_dtype().np)
    return x


def _unary_fn(cls, name, float_only=True):
    def fn(input, *, out=None):
        if _autocast.on:
            input = autocast_arg(name, input)
        x = _float_input(input, name) if float_only else input
        if out is not None:
            return write_out(cls, x, out, name)
        return cls.apply(x)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (``torch.{name}``); any shape, integer input -> float."
    return fn


exp = _unary_fn(Exp, "exp")
log = _unary_fn(Log, "log")
log1p = _unary_fn(Log1p, "log1p")
expm1 = _unary_fn(Expm1, "expm1")
log2 = _unary_fn(Log2, "log2")
log10 = _unary_fn(Log10, "log10")
sqrt = _unary_fn(Sqrt, "sqrt")
rsqrt = _unary_fn(Rsqrt, "rsqrt")
sin = _unary_fn(Sin, "sin")
cos = _unary_fn(Cos, "cos")
tan = _unary_fn(Tan, "tan")
asin = _unary_fn(Asin, "asin")
acos = _unary_fn(Acos, "acos")
atan = _unary_fn(Atan, "atan")
sinh = _unary_fn(Sinh, "sinh")
cosh = _unary_fn(Cosh, "cosh")
tanh = _unary_fn(Tanh, "tanh")
_sigmoid_real = _unary_fn(Sigmoid, "sigmoid")


def sigmoid(input, *, out=None):
    """``1 / (1 + exp(-x))`` elementwise (``torch.sigmoid``); complex input composed of ops."""
    if is_tensor(input) and input._array.dtype.kind == "c" and out is None:
        return reciprocal(exp(-input) + 1)
    return _sigmoid_real(input, out=out)
erf = _unary_fn(Erf, "erf")
reciprocal = _unary_fn(Reciprocal, "reciprocal")
relu = _unary_fn(Relu, "relu", float_only=False)
abs = _unary_fn(Abs, "abs", float_only=False)
frac = _unary_fn(Frac, "frac")
sign = _unary_fn(Sign, "sign", float_only=False)
floor = _unary_fn(Floor, "floor", float_only=False)
ceil = _unary_fn(Ceil, "ceil", float_only=False)
trunc = _unary_fn(Trunc, "trunc", float_only=False)
neg = _unary_fn(Neg, "neg", float_only=False)
negative = neg
arcsin, arccos, arctan = asin, acos, atan
fix = trunc
absolute = abs


def round(input, *, decimals: int = 0):
    """Round half to even (``torch.round``); ``decimals`` digits after the point."""
    if decimals:
        return RoundDecimals.apply(input, decimals=decimals)
    return Round.apply(input)


def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting and type promotion (``torch.add``)."""
    a, b = promote(input, other, "add")
    if alpha != 1:  # NOTE: after promotion, so alpha does not change the result dtype
        if isinstance(alpha, float) and a._array.dtype.kind in "biu":
            raise RuntimeError(
                "For integral input tensors, argument alpha must not be a floating point number.")
        b = AlphaMulScalar.apply_scalar(b, alpha) if b._requires_grad else mul(b, alpha)
    return Add.apply(a, b)


def sub(input, other, *, alpha=1):
    """``input - alpha * other`` (``torch.sub``); RuntimeError with a bool operand."""
    reject_bool_sub(input, other)
    a, b = promote(input, other, "sub")
    if alpha != 1:  # NOTE: after promotion, so alpha does not change the result dtype
        if isinstance(alpha, float) and a._array.dtype.kind in "biu":
            raise RuntimeError(
                "For integral input tensors, argument alpha must not be a floating point number.")
        b = AlphaMulScalar.apply_scalar(b, alpha) if b._requires_grad else mul(b, alpha)
    if a._array.dtype == np.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    return Sub.apply(a, b)


subtract = sub


def mul(input, other):
    """Elementwise product with broadcasting (``torch.mul``)."""
    a, b = promote(input, other, "mul")
    return Mul.apply(a, b)


multiply = mul


def div(input, other, *, rounding_mode=None):
    """True division (integers give floats), or ``rounding_mode`` 'trunc'/'floor' (``torch.div``)."""
    if rounding_mode is None:
        a, b = promote(input, other, "div", float_only=True)
        return Div.apply(a, b)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        a, b = promote(input, other, "div")
        if _check_integer_divisor(a, b, "div(rounding_mode='trunc')", "div_trunc_cpu"):
            return primitive._make(_trunc_divide_int(a._array, b._array))
        return trunc(Div.apply(a, b))
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


divide = true_divide = div


def floor_divide(input, other):
    """``floor(input / other)`` (``torch.floor_divide``); integer division by 0 raises."""
    a, b = promote(input, other, "floor_divide")
    _check_integer_divisor(a, b, "floor_divide (//)", "div_floor_cpu")
    return FloorDivide.apply(a, b)


def remainder(input, other):
    """Python-style modulus, sign of the divisor (``torch.remainder``); integer % 0 raises."""
    a, b = promote(input, other, "remainder")
    _check_integer_divisor(a, b, "remainder (%)", "remainder_cpu")
    return Remainder.apply(a, b)


def fmod(input, other):
    """C-style modulus, sign of the dividend (``torch.fmod``); integer fmod by 0 raises."""
    a, b = promote(input, other, "fmod")
    _check_integer_divisor(a, b, "fmod", "fmod_cpu")
    return Fmod.apply(a, b)


def atan2(input, other):
    a, b = promote(input, other, "atan2", float_only=True)
    return Atan2.apply(a, b)


arctan2 = atan2


def maximum(input, other):
    """Elementwise maximum; ties share the gradient equally (``torch.maximum``)."""
    a, b = promote(input, other, "maximum")
    return Maximum.apply(a, b)


def minimum(input, other):
    """Elementwise minimum; ties share the gradient equally (``torch.minimum``)."""
    a, b = promote(input, other, "minimum")
    return Minimum.apply(a, b)


def clamp(input, min=None, max=None):
    """Limit values to ``[min, max]``; numbers or Tensors (``torch.clamp``). Gradient passes inside."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if is_tensor(min) or is_tensor(max):
        return _clamp_tensor(input, min, max)
    x = input
    if x._array.dtype.kind in "biu":
        if isinstance(min, float) or isinstance(max, float):
            x = cast(x, dtypes.get_default_dtype().np)
        else:
            min, max = _int_bounds(x, min, max)
    return Clamp.apply(x, min=min, max=max)


def _int_bounds(x, min, max):  # noqa: A002 - torch's names
    """Integer clamp bounds as PyTorch converts them: checked, two's complement for unsigned
    (NOTE [Number conversion] in _convert.py)."""
    dt = x._array.dtype
    return (None if min is None else checked(min, dt)), (None if max is None else checked(max, dt))


clip = clamp


def _clamp_tensor(input, min, max, one=ClampOneTensor):
    """Tensor bounds: all operands in PyTorch's result dtype, then one node."""
    x, low = promote(input, min, "clamp") if min is not None else (input, None)
    if max is None:
        return one.apply(x, low, upper=False)
    x, high = promote(x, max, "clamp")
    if low is None:
        return one.apply(x, high, upper=True)
    return ClampTensor.apply(x, cast(low, x._array.dtype), high)


def clamp_min(input, min):
    """``max(input, min)`` elementwise, ``x`` keeping the gradient at ties (``torch.clamp_min``)."""
    if is_tensor(min):
        return _clamp_tensor(input, min, None, ClampMinTensor)
    return clamp(input, min=min)


def clamp_max(input, max):
    """``min(input, max)`` elementwise, ``x`` keeping the gradient at ties (``torch.clamp_max``)."""
    if is_tensor(max):
        return _clamp_tensor(input, None, max, ClampMaxTensor)
    return clamp(input, max=max)


def where(condition, input=None, other=None):
    """``condition ? input : other`` elementwise with broadcasting (``torch.where``)."""
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    # NOTE [Index snapshots] in _util.py: the node keeps the condition
    cond = index_snapshot(condition._array) if is_tensor(condition) else condition
    if not hasattr(cond, "__array_function__"):  # NOTE: keeps ndarrays and vmap batched arrays
        cond = np.asarray(cond)
    if cond.dtype != np.bool_:
        if is_tensor(condition):
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                               f"with dtype {condition.dtype}")
        cond = cond.astype(bool)
    if is_tensor(input) or is_tensor(other):
        a, b = promote(input, other, "where")
    else:
        # torch.where(mask, 1, 0): two numbers take the dtype two Python numbers promote to
        _check_number(input, "where")
        _check_number(other, "where")
        np_dtype = dtypes.result_type(input, other).np
        a, b = scalar(input, np_dtype), scalar(other, np_dtype)
    return Where.apply(a, b, condition=cond)


def square(input):
    return pow(input, 2)


# NOTE: fill/copy primitives live in fill.py, addcmul/addcdiv/lerp in activation.py (file size)
from .activation import addcdiv, addcmul, lerp  # noqa: F401
from .fill import Clone, CopyFrom, Fill, MaskedFill, clone  # noqa: F401
