"""Generic variants of existing ops: ``X_`` made from ``X`` (one factory: the in-place write goes
through ``_tensor_methods._commit``, so the version counter, the leaf check and saved-tensor
checks fire as for every other in-place op), ``X_copy`` made from the view op ``X`` (one factory:
a fresh tensor, differentiable), and the top-level ``torch.X_(t)`` that call the method."""

from __future__ import annotations

from ._tensor_methods import _composite_inplace, _reshape_inplace
from .autograd.grad_mode import _state
from .autograd.graph import InferenceVersion
from .ops import elementwise as ew
from .ops import reduction as red
from .ops import shape as sh
from .ops import special_ops as sp
from .ops._names import c_type
from .ops.diagonal import diagonal
from .ops.fill import clone
from .ops.indexing import getitem, select
from .ops.unfold import unfold
from .tensor import Tensor

# (method name, the out-of-place function it writes back)
_INPLACE = {  # (erfc_ and the special functions' in-place forms: _tensor_methods_special)
    "log2_": ew.log2, "log10_": ew.log10, "square_": ew.square, "atan2_": ew.atan2,
    "tril_": sh.tril, "triu_": sh.triu,
}
# torch's spellings of one op: the alias shares the method
_ALIASES = {
    "absolute_": "abs_", "arccos_": "acos_", "arcsin_": "asin_", "arctan_": "atan_",
    "arccosh_": "acosh_", "arcsinh_": "asinh_", "arctanh_": "atanh_", "arctan2_": "atan2_",
    "fix_": "trunc_", "greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_",
    "less_equal_": "le_", "not_equal_": "ne_", "arctan2": "atan2",
}


def inplace_of(fn, op: str):
    """``x.op(...)`` writing ``fn(x, ...)`` into x, with PyTorch's in-place checks: RuntimeError
    for a leaf that requires grad, for a result dtype x cannot hold ("result type Float can't be
    cast to the desired output type Long"), or a broadcast shape that is not x's."""
    return _composite_inplace(fn, op)


def _no_derivative(fn, op):
    """``x.op()`` for the writes PyTorch gives no derivative: backward through them raises
    NotImplementedError "the derivative for 'inplace version of <op>' is not implemented."."""
    from .ops.no_derivative import NoDerivative

    def method(self):
        value = fn(self.detach())._array
        return NoDerivative.apply_inplace(self, value=value, what=f"inplace version of {op[:-1]}")

    method.__name__ = op
    return method


def _scan_inplace(fn, op):
    def method(self, dim, *, dtype=None):
        if dtype is not None and dtype != self.dtype:
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {c_type(self.dtype)} and output tensor "
                f"dtype {c_type(dtype)} should match\nglassgrad: {op} writes into self; call "
                f"{op[:-1]}(dim, dtype=...) for a new tensor."
            )
        return _composite_inplace(fn, op)(self, dim)

    method.__name__ = op
    return method


def _view_inplace(view, op):
    """``x.t_()`` and kin: x takes the view's shape (and its history, so backward meets it)."""
    def method(self, *args):
        if self._vc.__class__ is InferenceVersion and not _state.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.\n"
                f"glassgrad: {op} on a tensor made under inference_mode(); clone() it first.")
        return _reshape_inplace(self, view(self, *args))

    method.__name__ = op
    return method


for _name, _fn in _INPLACE.items():
    setattr(Tensor, _name, inplace_of(_fn, _name))
for _name, _fn in {"acosh_": sp.acosh, "asinh_": sp.asinh, "atanh_": sp.atanh}.items():
    setattr(Tensor, _name, _no_derivative(_fn, _name))
Tensor.cumsum_ = _scan_inplace(red.cumsum, "cumsum_")
Tensor.cumprod_ = _scan_inplace(red.cumprod, "cumprod_")
Tensor.t_ = _view_inplace(sh.t, "t_")
Tensor.transpose_ = _view_inplace(sh.transpose, "transpose_")
Tensor.swapaxes_ = Tensor.swapdims_ = _view_inplace(sh.transpose, "swapaxes_")
for _name, _same in _ALIASES.items():
    setattr(Tensor, _name, getattr(Tensor, _same))


def _top_level(name: str):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)`` (``torch.{name}``): in place, returns ``input``."
    return fn


INPLACE_FUNCTIONS = {
    name: _top_level(name) for name in (
        "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
        "atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ erf_ exp_ expm1_ fix_ "
        "floor_ frac_ log_ log10_ log1p_ log2_ neg_ negative_ reciprocal_ round_ rsqrt_ "
        "sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ zero_ detach_ fill_ index_put_"
    ).split()
}


def copy_of(view, name: str):
    """``torch.<name>``: ``view``'s result as fresh tensors (a tuple for multi-output views),
    never aliasing the input; differentiable as the view is."""
    def fn(input, *args, **kwargs):
        out = view(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return tuple(clone(o) for o in out)
        return clone(out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: ``{name[:-5]}``'s result as a fresh tensor, not a view "
                  "(same arguments and errors).")
    return fn


def _slice(input, dim: int = 0, start=None, end=None, step: int = 1):
    from .ops._util import wrap_dim

    d = wrap_dim(dim, input._array.ndim, "slice")
    return getitem(input, (slice(None),) * d + (slice(start, end, step),))


def detach(input):
    """``torch.detach``: ``input.detach()``, a tensor cut from the graph sharing storage."""
    return input.detach()


def detach_copy(input):
    """``torch.detach_copy``: a fresh copy of ``input``'s values. As in PyTorch it still
    requires grad when ``input`` does, and backward through it raises RuntimeError "derivative
    for aten::detach_copy is not implemented"."""
    from .ops.no_derivative import NoDerivative

    return NoDerivative.apply(input, value=input._array.copy(), what="aten::detach_copy")


def _alias(input):
    return input


def _expand(input, size, *, implicit: bool = False):
    return sh.expand(input, size)




COPY_FUNCTIONS = {
    name: copy_of(view, name) for name, view in {
        "alias_copy": _alias, "diagonal_copy": diagonal,
        "expand_copy": _expand, "narrow_copy": sh.narrow, "permute_copy": sh.permute,
        "select_copy": select, "slice_copy": _slice, "split_copy": sh.split,
        "split_with_sizes_copy": sh.split_with_sizes, "squeeze_copy": sh.squeeze,
        "t_copy": sh.t, "transpose_copy": sh.transpose, "unbind_copy": sh.unbind,
        "unfold_copy": unfold, "unsqueeze_copy": sh.unsqueeze, "view_copy": sh.view,
    }.items()
}
COPY_FUNCTIONS["detach_copy"] = detach_copy
Tensor.narrow_copy = COPY_FUNCTIONS["narrow_copy"]
Tensor.unfold = unfold
