"""Tensor methods and operators: one-line delegations to the public functions (``x.exp()`` ->
``ops.elementwise.exp(x)``), so tensor.py stays small. In-place forms go through
``Primitive.apply_inplace`` (version bump, leaf check, history rebase)."""

from __future__ import annotations

import numpy as np

from . import _factory_args as _fac
from . import _memory_format as _mf
from . import comparison as cmp
from . import dtypes
from . import functional as _fn
from .autograd import forward_ad
from .autograd.graph import _Hooks
from .backend import device as _device
from .ops import elementwise as ew
from .ops import indexing as ix
from .ops import linalg as la
from .ops import reduction as red
from .ops import shape as sh
from .ops import special_ops as sp
from .ops._convert import checked
from .ops._names import cast_error as _cast_error
from .ops._util import as_tensor_arg, cast, is_tensor
from .tensor import Tensor

_FUNCTIONS = {
    ew: "exp log log1p expm1 log2 log10 sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
        "sigmoid relu erf reciprocal abs frac sign floor ceil trunc neg negative round add sub "
        "subtract mul multiply div divide true_divide floor_divide remainder fmod pow atan2 "
        "maximum minimum clamp clip clamp_min clamp_max lerp addcmul addcdiv square clone "
        "arcsin arccos arctan absolute fix",
    red: "sum nansum mean prod amax amin max min argmax argmin all any cumsum cumprod logsumexp "
         "var std norm",
    sh: "reshape flatten unflatten permute transpose swapaxes swapdims t expand expand_as "
        "broadcast_to sum_to_size squeeze unsqueeze narrow split chunk unbind movedim moveaxis "
        "flip fliplr flipud roll repeat tile",
    ix: "gather scatter scatter_add index_select index_add masked_fill masked_select take "
        "nonzero select index_put",
    la: "matmul mm bmm mv dot outer inner ger",
    cmp: "eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and "
         "logical_or logical_xor logical_not bitwise_not bitwise_and bitwise_or bitwise_xor "
         "isnan isinf isfinite isposinf isneginf equal allclose isclose sort argsort topk unique",
}

_FUNCTIONS_MORE = {
    red: "aminmax logcumsumexp",
    sh: "adjoint diag diag_embed diagonal diff repeat_interleave rot90 tensor_split tril triu "
        "split_with_sizes unsafe_split unsafe_chunk unsafe_split_with_sizes",
    la: "addmm baddbmm cross trace",
    ix: "argwhere index_copy index_fill masked_scatter take_along_dim",
    cmp: "count_nonzero isreal kthvalue msort signbit unique_consecutive",
    sp: "asinh acosh atanh arcsinh arccosh arctanh logit xlogy erfc erfinv",
}
for _module, _names in _FUNCTIONS_MORE.items():
    for _name in _names.split():
        setattr(Tensor, _name, getattr(_module, _name))

for _module, _names in _FUNCTIONS.items():
    for _name in _names.split():
        setattr(Tensor, _name, getattr(_module, _name))


def _swap(fn):
    return lambda self, other: fn(other, self)


def _not_implemented_for(fn):
    def op(self, other):
        if not (is_tensor(other) or isinstance(other, (int, float, bool, np.number, np.bool_))):
            return NotImplemented
        return fn(self, other)

    return op


Tensor.__floordiv__ = _not_implemented_for(ew.floor_divide)
Tensor.__rfloordiv__ = _not_implemented_for(_swap(ew.floor_divide))
Tensor.__mod__ = _not_implemented_for(ew.remainder)
Tensor.__rmod__ = _not_implemented_for(_swap(ew.remainder))
Tensor.__rpow__ = _not_implemented_for(_swap(ew.pow))
Tensor.__matmul__ = la.matmul
Tensor.__rmatmul__ = _swap(la.matmul)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = ew.abs
Tensor.__invert__ = cmp.invert
Tensor.__eq__ = _not_implemented_for(cmp.eq)
Tensor.__ne__ = _not_implemented_for(cmp.ne)
Tensor.__lt__ = _not_implemented_for(cmp.lt)
Tensor.__le__ = _not_implemented_for(cmp.le)
Tensor.__gt__ = _not_implemented_for(cmp.gt)
Tensor.__ge__ = _not_implemented_for(cmp.ge)
Tensor.__and__ = Tensor.__rand__ = _not_implemented_for(cmp.bitwise_and)
Tensor.__or__ = Tensor.__ror__ = _not_implemented_for(cmp.bitwise_or)
Tensor.__xor__ = Tensor.__rxor__ = _not_implemented_for(cmp.bitwise_xor)
Tensor.__lshift__ = _not_implemented_for(cmp.bitwise_left_shift)
Tensor.__rshift__ = _not_implemented_for(cmp.bitwise_right_shift)
Tensor.__rlshift__ = _not_implemented_for(_swap(cmp.bitwise_left_shift))
Tensor.__rrshift__ = _not_implemented_for(_swap(cmp.bitwise_right_shift))
Tensor.bitwise_left_shift = cmp.bitwise_left_shift
Tensor.bitwise_right_shift = cmp.bitwise_right_shift
Tensor.__getitem__ = ix.getitem
Tensor.__setitem__ = ix.setitem
Tensor.view = sh.view


def softmax(self, dim=None, dtype=None):  # a def, not a lambda: NOTE [Alias code] gives axis=
    return _fn.softmax(self, dim, dtype=dtype)


def log_softmax(self, dim=None, dtype=None):
    return _fn.log_softmax(self, dim, dtype=dtype)


Tensor.softmax, Tensor.log_softmax = softmax, log_softmax
Tensor.contiguous = lambda self, memory_format=None: (
    self if self._array.flags.c_contiguous else ew.clone(self))
Tensor.view_as = lambda self, other: sh.view(self, other._array.shape)
Tensor.reshape_as = lambda self, other: sh.reshape(self, other._array.shape)

# + - * / ** unary minus and the common unary methods, with their fast paths
from . import _tensor_operators  # noqa: F401


# --- conversions -------------------------------------------------------------------------------
def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``, each with
    ``memory_format=`` (``channels_last`` and the others lay the result out as ``contiguous``
    does; ``preserve_format`` keeps it): self when unchanged (``torch.Tensor.to``)."""
    dtype = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif is_tensor(a):
            dtype = a.dtype
        elif isinstance(a, (str, _device)):
            _device(a)
    if "device" in kwargs and kwargs["device"] is not None:
        _device(kwargs["device"])
    out = self if dtype is None else ew.to_dtype(self, dtype)
    fmt = kwargs.get("memory_format")
    if fmt is not None and fmt is not _mf.preserve_format:
        out = out.contiguous(memory_format=fmt)  # self when already laid out so, as torch
    if copy and out is self:
        out = ew.clone(self)
    return out


def _caster(d):
    return lambda self, memory_format=None: ew.to_dtype(self, d)


Tensor.to = to
Tensor.float = _caster(dtypes.float32)
Tensor.double = _caster(dtypes.float64)
Tensor.half = _caster(dtypes.float16)
Tensor.bfloat16 = _caster(dtypes.bfloat16)
Tensor.long = _caster(dtypes.int64)
Tensor.int = _caster(dtypes.int32)
Tensor.short = _caster(dtypes.int16)
Tensor.char = _caster(dtypes.int8)
Tensor.byte = _caster(dtypes.uint8)
Tensor.bool = _caster(dtypes.bool)
Tensor.type_as = lambda self, other: ew.to_dtype(self, other.dtype)
Tensor.cpu = lambda self, memory_format=None: self
Tensor.cuda = lambda self, device=None, non_blocking=False: self
Tensor.pin_memory = lambda self: self
Tensor.share_memory_ = lambda self: self
Tensor.get_device = lambda self: -1


def type_(self, dtype=None, non_blocking=False):
    """``x.type()`` -> 'torch.FloatTensor'; ``x.type(dtype)`` converts."""
    if dtype is None:
        return dtypes.type_name(self.dtype)
    name = dtype if isinstance(dtype, str) else ""
    if getattr(dtype, "is_cuda", False) or name.startswith(("torch.cuda.", "glassgrad.cuda.")):
        raise RuntimeError("Cannot initialize CUDA without ATen_cuda library.\nglassgrad: "
                           "glassgrad runs on the CPU; convert with x.type(torch.FloatTensor).")
    if isinstance(dtype, type):  # a legacy type: x.type(torch.LongTensor)
        dtype = dtype.dtype
    if name:
        dtype = next((d for d in dtypes.ALL
                      if dtypes.type_name(d) == name.replace("glassgrad.", "torch.")), None)
        if dtype is None:
            raise ValueError(f"invalid type: {name!r}\nglassgrad: Tensor.type() takes a dtype, "
                             "a legacy type or its name ('torch.LongTensor').")
    return ew.to_dtype(self, dtype)


Tensor.type = type_


def _new(fill, name):
    def method(self, *args, size=None, dtype=None, device=None, requires_grad=False):
        from . import _factories

        if not args and size is None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        size = _factories._size_kw(name, args, size)
        d = dtype or self.dtype
        t = Tensor._make(np.full(_factories._size(size), fill, dtype=d.np))
        return t.requires_grad_(requires_grad) if requires_grad else t

    method.__name__ = name
    return method


Tensor.new_zeros = _new(0, "new_zeros")
Tensor.new_ones = _new(1, "new_ones")
Tensor.new_empty = _new(0, "new_empty")


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from . import _factories

    dt, shape = (dtype or self.dtype).np, tuple(size)
    t = Tensor._make(np.full(shape, _factories._fill_value(fill_value, dt, shape)))
    return t.requires_grad_(requires_grad) if requires_grad else t


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from ._factories import tensor

    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


Tensor.new_full = new_full
Tensor.new_tensor = new_tensor


# --- in-place ----------------------------------------------------------------------------------
def _operand(self, other, op):
    """``other`` as a Tensor of self's dtype; PyTorch's rule that the result must fit self
    (``torch.can_cast``: no float into an integer tensor, no integer into a bool one)."""
    dt = self._array.dtype
    if is_tensor(other):
        if other._array.dtype == dt:
            return other
    else:
        o = as_tensor_arg(other, self, op)
        if dt.kind == "f" and (other.__class__ is float or other.__class__ is int):
            return o  # a number keeps a float tensor's dtype
    rd = dtypes.result_type(self, other)
    if rd._kind > self.dtype._kind:
        raise _cast_error(rd, self.dtype, op)
    return cast(other, dt) if is_tensor(other) else o


def _binary_inplace(prim, op, check=None):
    def method(self, other, *, alpha=1):
        if alpha != 1:
            if isinstance(alpha, float) and self._array.dtype.kind in "biu":
                raise RuntimeError("For integral input tensors, argument alpha must not be a "
                                   "floating point number.")
            other = ew.mul(other, alpha)
        return prim.apply_inplace(self, _operand(self, other, op))

    method.__name__ = op
    return method


Tensor.add_ = _binary_inplace(ew.Add, "add_")
Tensor.sub_ = _binary_inplace(ew.Sub, "sub_")
Tensor.subtract_ = Tensor.sub_


def mul_(self, other):
    return ew.Mul.apply_inplace(self, _operand(self, other, "mul_"))


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None or not self.is_floating_point():
        return _commit(self, ew.div(self, other, rounding_mode=rounding_mode), "div_")
    return ew.Div.apply_inplace(self, _operand(self, other, "div_"))


def pow_(self, exponent):
    if self._array.dtype.kind in "biu":  # computed in the promoted dtype, then cast (PyTorch)
        if not is_tensor(exponent) and isinstance(exponent, float):
            raise _cast_error(dtypes.get_default_dtype(), self.dtype, "pow_")
        if is_tensor(exponent):
            _operand(self, exponent, "pow_")  # the can't-cast check
        return _commit(self, ew.pow(self, exponent), "pow_")
    if is_tensor(exponent):
        return ew.Pow.apply_inplace(self, _operand(self, exponent, "pow_"))
    return ew.PowScalar.apply_inplace(self, exponent=exponent)


Tensor.mul_ = Tensor.multiply_ = mul_
Tensor.div_ = Tensor.divide_ = Tensor.true_divide_ = div_
Tensor.pow_ = pow_
Tensor.__iadd__ = lambda self, other: Tensor.add_(self, other)
Tensor.__isub__ = lambda self, other: Tensor.sub_(self, other)
Tensor.__imul__ = mul_
Tensor.__itruediv__ = div_
Tensor.__ipow__ = pow_


def _unary_inplace(prim):
    return lambda self: prim.apply_inplace(self)


for _name, _prim in {
    "exp_": ew.Exp, "log_": ew.Log, "log1p_": ew.Log1p, "expm1_": ew.Expm1, "sqrt_": ew.Sqrt,
    "rsqrt_": ew.Rsqrt, "sin_": ew.Sin, "cos_": ew.Cos, "tan_": ew.Tan, "tanh_": ew.Tanh,
    "sigmoid_": ew.Sigmoid, "relu_": ew.Relu, "abs_": ew.Abs, "neg_": ew.Neg, "floor_": ew.Floor,
    "ceil_": ew.Ceil, "round_": ew.Round, "trunc_": ew.Trunc, "sign_": ew.Sign,
    "reciprocal_": ew.Reciprocal, "erf_": ew.Erf, "frac_": ew.Frac, "atan_": ew.Atan,
    "asin_": ew.Asin, "acos_": ew.Acos, "sinh_": ew.Sinh, "cosh_": ew.Cosh,
}.items():
    setattr(Tensor, _name, _unary_inplace(_prim))
Tensor.negative_ = Tensor.neg_


def clamp_(self, min=None, max=None):  # noqa: A002 - torch's names
    if is_tensor(min) or is_tensor(max):
        return _commit(self, ew.clamp(self, min, max), "clamp_")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self._array.dtype.kind in "biu":
        if isinstance(min, float) or isinstance(max, float):
            raise _cast_error(dtypes.get_default_dtype(), self.dtype, "clamp_", c_names=True)
        min, max = ew._int_bounds(self, min, max)
    return ew.Clamp.apply_inplace(self, min=min, max=max)


Tensor.clamp_ = Tensor.clip_ = clamp_
Tensor.clamp_min_ = lambda self, min: clamp_(self, min=min)  # noqa: A002
Tensor.clamp_max_ = lambda self, max: clamp_(self, max=max)  # noqa: A002


def fill_(self, value):
    if is_tensor(value):
        if value._array.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._array.ndim} dimensions."
            )
        return ew.CopyFrom.apply_inplace(self, cast(value, self._array.dtype))
    op = "fill1" if self._array.size == 1 else "fill"
    return ew.Fill.apply_inplace(self, value=checked(value, self._array.dtype, op))


def zero_(self):
    return ew.Fill.apply_inplace(self, value=0)


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, converted) into self in place; differentiable w.r.t. ``src``."""
    if not is_tensor(src):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src._array.dtype != self._array.dtype:
        src = ew.to_dtype(src, self.dtype)
    return ew.CopyFrom.apply_inplace(self, src)


def masked_fill_(self, mask, value):
    m = mask._array if is_tensor(mask) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {m.dtype}"
        )
    if is_tensor(value):
        v = _operand(self, value, "masked_fill_")
    else:  # a number is stored, not an operand: 2.5 truncates into an int tensor, as in PyTorch
        v = Tensor._make(np.asarray(checked(value, self._array.dtype)))
    return ew.MaskedFill.apply_inplace(self, v, mask=m)


Tensor.fill_ = fill_
Tensor.zero_ = zero_
Tensor.copy_ = copy_
Tensor.masked_fill_ = masked_fill_


def _commit(self, result, op):
    """In-place form of a composite: write ``result`` into self and take over its history."""
    from .ops.primitive import _check_inplace_leaf, check_view_write

    if result._requires_grad:
        _check_inplace_leaf(self)
    else:
        check_view_write(self)
    self._write(result._array, op)
    if result._requires_grad:
        self._requires_grad = True
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
        self._rebase_history()
    if _Hooks.forward_ad is not None:  # NOTE [Forward AD] in autograd/forward_ad.py
        forward_ad.commit_tangent(self, result)
    return self


def _composite_inplace(fn, op):
    def method(self, *args, **kwargs):
        # NOTE: the composite may save self for another operand's gradient (lerp_'s weight
        # needs end - self); the write below would then bump what it saved, so self is
        # snapshotted whenever any operand records
        records = self._requires_grad or any(
            is_tensor(a) and a._requires_grad for a in (*args, *kwargs.values()))
        src = self._snapshot() if records else self
        return _commit(self, fn(src, *args, **kwargs), op)

    method.__name__ = op
    return method


Tensor.lerp_ = _composite_inplace(ew.lerp, "lerp_")
Tensor.addcmul_ = _composite_inplace(ew.addcmul, "addcmul_")
Tensor.addcdiv_ = _composite_inplace(ew.addcdiv, "addcdiv_")
Tensor.remainder_ = _composite_inplace(ew.remainder, "remainder_")
Tensor.fmod_ = _composite_inplace(ew.fmod, "fmod_")
Tensor.floor_divide_ = _composite_inplace(ew.floor_divide, "floor_divide_")
Tensor.scatter_ = _composite_inplace(ix.scatter, "scatter_")
Tensor.scatter_add_ = _composite_inplace(ix.scatter_add, "scatter_add_")
Tensor.index_add_ = _composite_inplace(ix.index_add, "index_add_")
Tensor.index_copy_ = _composite_inplace(ix.index_copy, "index_copy_")
Tensor.index_fill_ = _composite_inplace(ix.index_fill, "index_fill_")
Tensor.index_put_ = _composite_inplace(ix.index_put, "index_put_")
Tensor.masked_scatter_ = _composite_inplace(ix.masked_scatter, "masked_scatter_")
Tensor.maximum_ = _composite_inplace(ew.maximum, "maximum_")
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__imod__ = Tensor.remainder_
# NOTE: without __iand__ & co. Python runs `x &= y` as `x = x & y`, a new tensor: the base of a
# view, and every other alias, kept the old values
Tensor.bitwise_and_ = Tensor.__iand__ = _composite_inplace(cmp.bitwise_and, "bitwise_and_")
Tensor.bitwise_or_ = Tensor.__ior__ = _composite_inplace(cmp.bitwise_or, "bitwise_or_")
Tensor.bitwise_xor_ = Tensor.__ixor__ = _composite_inplace(cmp.bitwise_xor, "bitwise_xor_")


def _bits_inplace(fn, op):
    """``x.bitwise_and_(other)`` and kin: PyTorch's can't-cast check, then the op in the
    promoted dtype, cast back into x (no gradient: integer and bool results)."""
    def method(self, other):
        _operand(self, other, op)
        return _commit(self, fn(self, other), op)

    method.__name__ = op
    return method


for _name, _bits in (("bitwise_and", cmp.bitwise_and), ("bitwise_or", cmp.bitwise_or),
                     ("bitwise_xor", cmp.bitwise_xor),
                     ("bitwise_left_shift", cmp.bitwise_left_shift),
                     ("bitwise_right_shift", cmp.bitwise_right_shift)):
    setattr(Tensor, _name + "_", _bits_inplace(_bits, _name + "_"))
for _name in "eq ne lt le gt ge logical_and logical_or logical_xor".split():
    # a bool result fits any dtype: no can't-cast check (PyTorch writes 0/1 into int tensors)
    setattr(Tensor, _name + "_", _composite_inplace(getattr(cmp, _name), _name + "_"))
Tensor.logical_not_ = _composite_inplace(cmp.logical_not, "logical_not_")
Tensor.bitwise_not_ = _composite_inplace(cmp.bitwise_not, "bitwise_not_")
Tensor.__iand__, Tensor.__ior__ = Tensor.bitwise_and_, Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_
Tensor.__ilshift__, Tensor.__irshift__ = Tensor.bitwise_left_shift_, Tensor.bitwise_right_shift_


# --- random fills (no history: used by nn.init under no_grad) ----------------------------------
def _random_fill(sample, layout=False):
    """An in-place sampler drawing in torch's element order: memory order (TensorIterator sorts
    dims by stride), so ``w.t().uniform_()`` gets torch's numbers too. ``layout``: the sampler
    also takes torch's contiguity test (normal_ has a blocked kernel for contiguous tensors)."""
    def method(self, *args, generator=None, **kwargs):
        from ._factories import _rng

        a = self._array
        if layout:
            kwargs["contiguous"] = a.flags.c_contiguous
        if a.flags.c_contiguous or a.ndim < 2:
            arr = sample(_rng(generator), a.shape, a.dtype, *args, **kwargs)
        else:
            order = np.argsort([-abs(st) for st in a.strides], kind="stable")
            arr = sample(_rng(generator), tuple(a.shape[i] for i in order), a.dtype, *args,
                         **kwargs)
            arr = np.asarray(arr).transpose(np.argsort(order))
        return ew.CopyFrom.apply_inplace(self, Tensor._make(np.asarray(arr, dtype=a.dtype)))

    return method


# (the samplers, with PyTorch's argument checks, live in _factory_args.py)
Tensor.uniform_ = _random_fill(_fac._fill_uniform)
Tensor.normal_ = _random_fill(_fac._fill_normal, layout=True)
Tensor.bernoulli_ = _random_fill(_fac._fill_bernoulli)
Tensor.exponential_ = _random_fill(_fac._fill_exponential)
Tensor.random_ = _random_fill(_fac._fill_random)
Tensor.geometric_ = _random_fill(_fac._fill_geometric)
Tensor.log_normal_ = _random_fill(_fac._fill_log_normal)
Tensor.cauchy_ = _random_fill(_fac._fill_cauchy)


def _bernoulli(self, p=None, *, generator=None):
    """``x.bernoulli()`` (probabilities x) or ``x.bernoulli(p)`` (``torch.Tensor.bernoulli``)."""
    from ._factories import bernoulli

    return bernoulli(self, p, generator=generator)


def _multinomial(self, num_samples, replacement=False, *, generator=None):
    """``torch.Tensor.multinomial``: category indices drawn with weights ``self``."""
    from ._factories import multinomial

    return multinomial(self, num_samples, replacement, generator=generator)


Tensor.bernoulli, Tensor.multinomial = _bernoulli, _multinomial


def _reshape_inplace(self, out):
    """squeeze_/unsqueeze_: self takes the view ``out``'s shape and its history too, so that
    backward meets the new shape through the view's node (PyTorch's SqueezeBackward); with the
    shape alone the old node would sum a gradient of the wrong shape into its input."""
    if out.grad_fn is not None:  # recorded (a no_grad view may require grad yet has none)
        sh.primitive._check_inplace_leaf(self)
        self.grad_fn = out.grad_fn
        self._output_nr = out._output_nr
    else:  # a no_grad view of a base that requires grad is refused too, as in PyTorch
        sh.primitive.check_view_write(self)
    self._array = out._array
    self._vc[0] += 1  # as in PyTorch: a node that saved self sees the new shape, and says so
    if _Hooks.forward_ad is not None:  # NOTE [Forward AD]: the tangent takes the shape too
        forward_ad.commit_tangent(self, out)
    return self


def _squeeze_(self, dim=None):
    return _reshape_inplace(self, sh.squeeze(self, dim))


def _unsqueeze_(self, dim):
    return _reshape_inplace(self, sh.unsqueeze(self, dim))


Tensor.squeeze_ = _squeeze_
Tensor.unsqueeze_ = _unsqueeze_

# Device and layout probes programs make (dcgan: `input.is_cuda or input.is_xpu`): every
# glassgrad tensor is a dense CPU tensor.
Tensor.is_cpu = property(lambda self: True)
for _name in ("is_xpu", "is_mps", "is_meta", "is_quantized", "is_mkldnn", "is_nested"):
    setattr(Tensor, _name, property(lambda self: False))
_ = red
