"""Argument parsing of ``Module.__init__`` and ``Module.to`` with torch's TypeErrors.

``Module.to`` parses its arguments with ``Tensor.to``'s three signatures (torch's
``torch._C._nn._parse_to``): ``(device=None, dtype=None, non_blocking=False, copy=False)``,
``(dtype, non_blocking=False, copy=False)`` and ``(tensor, non_blocking=False, copy=False)``,
each with a keyword-only ``memory_format``. Anything else is "to() received an invalid
combination of arguments".
"""

from __future__ import annotations

from .. import dtypes
from ..backend import device as _device
from ..tensor import Tensor

_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)")


def _is_device(value) -> bool:
    return isinstance(value, (str, _device)) or (type(value) is int)


def _type(value) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, _device):
        return "torch.device"
    if isinstance(value, dtypes.dtype):
        return "torch.dtype"
    return type(value).__name__


def _fits(args, kwargs, first, first_name, leading_none_ok):
    """(first value, dtype, non_blocking) when the call matches one signature, else None."""
    names = [first_name] + (["dtype"] if first_name == "device" else []) + [
        "non_blocking", "copy"]
    bound = dict(zip(names, args))
    if len(args) > len(names):
        return None
    for key, value in kwargs.items():
        if key not in names + ["memory_format"] or key in bound:
            return None
        bound[key] = value
    head = bound.get(first_name)
    if head is None:
        if not leading_none_ok:
            return None
    elif not first(head):
        return None
    dtype = bound.get("dtype")
    if first_name == "device" and dtype is not None and not isinstance(dtype, dtypes.dtype):
        return None
    for flag in ("non_blocking", "copy"):
        if flag in bound and not isinstance(bound[flag], bool):
            return None
    return head, dtype, bound


def parse_to(args, kwargs):
    """``Module.to``'s (device, dtype) from torch's signatures; TypeError for any other call."""
    for first, name, none_ok in ((_is_device, "device", True),
                                 (lambda v: isinstance(v, dtypes.dtype), "dtype", False),
                                 (lambda v: isinstance(v, Tensor), "tensor", False)):
        fit = _fits(args, kwargs, first, name, none_ok)
        if fit is not None:
            head, dtype, bound = fit
            if name == "dtype":
                return None, head, bound
            if name == "tensor":
                return None, head.dtype, bound
            return head, dtype, bound
    got = ", ".join([_type(a) for a in args] + [f"{k}={_type(v)}" for k, v in kwargs.items()])
    raise TypeError(f"to() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of:\n{_SIGNATURES}")


def check_init_args(module, args, kwargs) -> None:
    """torch's TypeError for arguments to ``Module.__init__`` without ``call_super_init``."""
    name = type(module).__name__
    if kwargs:
        raise TypeError(f"{name}.__init__() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if args:
        raise TypeError(f"{name}.__init__() takes 1 positional argument but {len(args) + 1} "
                        "were given")


def convert(t, dtype, memory_format):
    """One parameter or buffer under ``Module.to``: floating ones to ``dtype``; 4-D and 5-D
    ones laid out in ``memory_format`` (torch's rank error for the other channels-last)."""
    if dtype is not None and t.is_floating_point():
        t = t.to(dtype)
    if memory_format is not None and t.dim() in (4, 5):
        t = t.contiguous(memory_format=memory_format)
    return t
