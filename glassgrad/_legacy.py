"""PyTorch's legacy tensor types and constructors: ``torch.FloatTensor(2, 3)``,
``torch.LongTensor([1, 2])``, ``torch.Tensor(...)``, ``x.new(...)`` (the device-type flags
programs test beside ``x.is_cuda``, ``x.is_xpu`` and the rest, are in _tensor_methods.py).

Each legacy type (``FloatTensor`` ... ``BoolTensor``) is not a subclass of Tensor, as in torch:
calling it makes an ordinary Tensor of its dtype, and ``isinstance(x, FloatTensor)`` asks whether
``x`` is a float32 tensor. The constructor takes sizes (ints or a ``Size``: a new tensor, zeros
where torch leaves memory uninitialised), data (a list, tuple or NumPy array, which is shared when
its dtype already matches, as torch shares it), a Tensor of the same dtype (shared), or nothing
(an empty 1-D tensor).
"""

from __future__ import annotations

import numpy as np

from . import _warn_always, dtypes
from .tensor import Size, Tensor

_C_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool",
}


def _options(d) -> str:
    return (f"TensorOptions(dtype={_C_NAMES[d.name]}, device=cpu, layout=Strided, requires_grad="
            "false (default), pinned_memory=false (default), memory_format=(nullopt))")


def _arg_type(value) -> str:
    if isinstance(value, dtypes.dtype):
        return "torch.dtype"
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _bad_keywords(args, kwargs) -> str:
    got = ", ".join([_arg_type(a) for a in args]
                    + [f"{k}={_arg_type(v)}" for k, v in kwargs.items()])
    wrong = ", ".join(k for k in kwargs if k != "device")
    return (
        f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
        " * (*, torch.device device = None)\n"
        f"      didn't match because some of the keywords were incorrect: {wrong}\n"
        " * (torch.Storage storage)\n * (Tensor other)\n"
        " * (tuple of ints size, *, torch.device device = None)\n"
        " * (object data, *, torch.device device = None)\n"
        "\nglassgrad: legacy constructors take no dtype or requires_grad; use "
        "glassgrad.tensor(data, dtype=..., requires_grad=...)."
    )


def construct(dtype, args, kwargs, keep_tensor_dtype: bool = False) -> Tensor:
    """A tensor from legacy constructor arguments (see the module docstring) of ``dtype``.

    ``keep_tensor_dtype``: ``torch.Tensor(t)`` aliases ``t`` whatever its dtype; the typed
    constructors raise TypeError "expected TensorOptions(dtype=...)" for another dtype. TypeError
    "new(): data must be a sequence" for a number, "invalid data type" for a string, and "new()
    received an invalid combination of arguments" for keywords other than ``device``.
    """
    from . import _factories

    if set(kwargs) - {"device"}:
        raise TypeError(_bad_keywords(args, kwargs))
    if not args:
        return Tensor._make(np.zeros((0,), dtype=dtype.np))
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, Size):
            return _factories.zeros(tuple(data), dtype=dtype)
        if isinstance(data, Tensor):
            if data.dtype is not dtype and not keep_tensor_dtype:
                raise TypeError(
                    f"expected {_options(dtype)} (got {_options(data.dtype)})\nglassgrad: a "
                    f"legacy constructor shares a tensor of its own dtype; convert with .to()."
                )
            return Tensor._make(data._array)
        if isinstance(data, np.ndarray):
            return Tensor._make(np.asarray(data, dtype=dtype.np))
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if not isinstance(data, (list, tuple)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return _factories.tensor(data, dtype=dtype)
    return _factories.zeros(*args, dtype=dtype)


class _LegacyTensorType(type):
    """Metaclass of ``FloatTensor`` etc.: calling builds a Tensor, ``isinstance`` compares the
    dtype (``torch.FloatTensor`` answers ``isinstance(torch.zeros(2), torch.FloatTensor)``)."""

    def __call__(cls, *args, **kwargs) -> Tensor:
        return construct(cls.dtype, args, kwargs)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


def _legacy_type(name: str, dtype) -> type:
    doc = (f"Legacy constructor of {dtype!r} tensors (``torch.{name}``): ``{name}(2, 3)`` a new "
           f"2x3 tensor, ``{name}([1, 2])`` from data; ``isinstance(x, {name})`` checks the dtype.")
    return _LegacyTensorType(name, (), {
        "dtype": dtype, "is_cuda": False, "is_sparse": False, "__doc__": doc,
        "__module__": "glassgrad",
    })


FloatTensor = _legacy_type("FloatTensor", dtypes.float32)
DoubleTensor = _legacy_type("DoubleTensor", dtypes.float64)
HalfTensor = _legacy_type("HalfTensor", dtypes.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", dtypes.bfloat16)
LongTensor = _legacy_type("LongTensor", dtypes.int64)
IntTensor = _legacy_type("IntTensor", dtypes.int32)
ShortTensor = _legacy_type("ShortTensor", dtypes.int16)
CharTensor = _legacy_type("CharTensor", dtypes.int8)
ByteTensor = _legacy_type("ByteTensor", dtypes.uint8)
BoolTensor = _legacy_type("BoolTensor", dtypes.bool)


def tensor_new(self, *args, **kwargs) -> Tensor:
    """``x.new(...)``: the legacy constructor with ``x``'s dtype (``torch.Tensor.new``)."""
    return construct(self.dtype, args, kwargs)


Tensor.new = tensor_new


_NO_CUDA = "Torch not compiled with CUDA enabled."


class _CudaTensorType(type):
    """Metaclass of ``cuda.FloatTensor`` etc.: the names exist, as in a CPU-only torch build
    (``dtype = torch.cuda.FloatTensor if cuda else torch.FloatTensor`` runs), but calling one
    raises torch's TypeError and no tensor is an instance."""

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. {_NO_CUDA}\n"
                        f"glassgrad: glassgrad runs on the CPU; use glassgrad.{cls.__name__}.")

    def __instancecheck__(cls, obj) -> bool:
        return False


def _cuda_type(cpu_type) -> type:
    name = cpu_type.__name__
    return _CudaTensorType(name, (), {
        "dtype": cpu_type.dtype, "is_cuda": True, "is_sparse": False, "__module__": "glassgrad.cuda",
        "__doc__": f"``torch.cuda.{name}`` of a CPU-only build: calling it raises TypeError.",
    })


CUDA_TYPES = {t.__name__: _cuda_type(t) for t in (
    FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
    CharTensor, ByteTensor, BoolTensor)}
_warned_default_type = False


def set_default_tensor_type(t) -> None:
    """``torch.set_default_tensor_type`` (deprecated since PyTorch 2.1, warned once as torch
    does): ``t`` a floating legacy type (``torch.DoubleTensor``) or its name
    (``"torch.FloatTensor"``) sets the default dtype. TypeError for a non-floating type, a dtype
    and a ``torch.cuda`` type, with torch's messages."""
    global _warned_default_type
    from ._user_warning import warn_user

    from . import cuda

    if not _warned_default_type or _warn_always.ALWAYS[0]:  # NOTE [Warn always]
        _warned_default_type = True
        warn_user(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
            UserWarning, stacklevel=2)
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        # torch imports the module and reads the name: its errors for a name that is not there
        owner = {"torch": globals(), "torch.cuda": vars(cuda)}.get(module)
        if owner is None and t != "torch":
            raise ModuleNotFoundError(f"No module named '{module or name}'")
        if owner is not None and name not in owner:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        t = owner[name] if owner is not None else None
    if not isinstance(t, (_LegacyTensorType, _CudaTensorType)):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if isinstance(t, _CudaTensorType):
        raise TypeError(f"type torch.cuda.{t.__name__} not available. {_NO_CUDA}")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(t.dtype)
