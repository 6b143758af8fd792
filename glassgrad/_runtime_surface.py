"""Runtime names of ``torch.*`` with a meaning on glassgrad (issue 15, lane surface): build facts,
exception classes, the deprecated per-device autocast functions, warn-always, anomaly mode,
device queries and ``classproperty``."""

from __future__ import annotations

import threading

import numpy as np

from . import dtypes
from .amp.autocast import (
    get_autocast_dtype, is_autocast_enabled, set_autocast_dtype, set_autocast_enabled,
)
from .autograd import anomaly as _anomaly
from ._user_warning import warn_user


class OutOfMemoryError(RuntimeError):
    """An allocation the device could not satisfy (``torch.OutOfMemoryError``, a RuntimeError)."""


class AcceleratorError(RuntimeError):
    """An error reported by an accelerator's runtime (``torch.AcceleratorError``)."""


class FatalError(Exception):
    """An unrecoverable internal error (``torch.FatalError``; an Exception, not a RuntimeError)."""


def _blas_name() -> str:
    try:
        return np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"].lower()
    except Exception:  # noqa: BLE001 - an old NumPy without the dict form
        return ""


# facts of glassgrad's build: linear algebra is NumPy's/SciPy's LAPACK, FFTs NumPy's pocketfft,
# BLAS threads are the BLAS's own (no OpenMP runtime of glassgrad's)
has_lapack = True
has_spectral = True
has_mkl = "mkl" in _blas_name()
has_openmp = False


def compiled_with_cxx11_abi() -> bool:
    """False: glassgrad is pure Python, with no C++ library for extensions to link against
    (``torch.compiled_with_cxx11_abi`` is True on torch's builds)."""
    return False


def get_file_path(*path_components: str) -> str:
    """A path under the directory that holds the glassgrad package (``torch.get_file_path``)."""
    import os

    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        *path_components)


def init_num_threads() -> None:
    """Nothing to do: glassgrad's thread count (``set_num_threads``) applies to every thread
    already (``torch.init_num_threads`` initialises OpenMP in the calling thread)."""


class _ClassPropertyDescriptor:
    def __init__(self, fget):
        self.fget = fget

    def __get__(self, instance, owner=None):
        if owner is None:
            owner = type(instance)
        return self.fget.__get__(instance, owner)()


def classproperty(func):
    """A read-only property of the class itself (``torch.classproperty``)."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)


def get_device(input) -> int:
    """-1, the CPU's index, for any tensor (``torch.get_device``); TypeError for a non-Tensor."""
    from .tensor import Tensor

    if not isinstance(input, Tensor) and not getattr(input, "_sparse", False):
        raise TypeError(f"get_device(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return -1


def is_distributed(input) -> bool:
    """False: no glassgrad tensor is split across processes (``torch.is_distributed``)."""
    return False


def get_device_module(device=None):
    """The module of a device type: ``glassgrad.cpu`` for "cpu" or none given, ``glassgrad.cuda``
    for "cuda" (``torch.get_device_module``); RuntimeError for an unknown type."""
    from . import cpu, cuda, mps, xpu
    from .backend import device as _device

    if device is None:
        name = "cpu"
    elif isinstance(device, str):
        _device(device)  # torch's error for an unknown type
        name = device.split(":")[0]
    else:
        name = device.type
    modules = {"cpu": cpu, "cuda": cuda, "mps": mps, "xpu": xpu}
    if name not in modules:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'torch.{name}'.")
    return modules[name]


from ._warn_always import is_warn_always_enabled, set_warn_always  # noqa: E402,F401


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd's anomaly mode on or off for good (``torch.set_anomaly_enabled``), as
    ``autograd.set_detect_anomaly`` does for a block."""
    _anomaly._set(bool(enabled), bool(check_nan))


def set_flush_denormal(mode: bool) -> bool:
    """False: glassgrad cannot set the CPU's flush-denormal mode from Python, so denormals stay
    (``torch.set_flush_denormal`` returns whether it could set the mode)."""
    return False


# the deprecated per-device autocast functions: cpu and gpu ('cuda') read glassgrad's amp state;
# ipu and xla have no autocast in glassgrad, so their state is kept here with torch's defaults
class _OtherAutocast(threading.local):
    def __init__(self):
        self.enabled = {"ipu": False, "xla": False}
        self.dtype = {"ipu": dtypes.float16, "xla": dtypes.bfloat16}


_other = _OtherAutocast()
_DEVICE_OF = {"cpu": "cpu", "gpu": "cuda", "ipu": "ipu", "xla": "xla"}


def _deprecated(old: str, new: str) -> None:
    warn_user(f"torch.{old} is deprecated. Please use torch.{new} instead.",
              DeprecationWarning, stacklevel=3)


def _getter(kind: str, what: str):
    dev = _DEVICE_OF[kind]

    def get():
        _deprecated(f"{'get' if what == 'dtype' else 'is'}_autocast_{kind}_"
                    f"{'dtype' if what == 'dtype' else 'enabled'}()",
                    f"{'get_autocast_dtype' if what == 'dtype' else 'is_autocast_enabled'}"
                    f"('{dev}')")
        if dev in _other.dtype:
            return (_other.dtype if what == "dtype" else _other.enabled)[dev]
        if what == "dtype":
            return get_autocast_dtype(dev)
        return is_autocast_enabled(dev)

    get.__name__ = f"{'get' if what == 'dtype' else 'is'}_autocast_{kind}_" \
                   f"{'dtype' if what == 'dtype' else 'enabled'}"
    get.__doc__ = f"Autocast's {what} for '{dev}' (deprecated in torch; ``torch.{get.__name__}``)."
    return get


def _setter(kind: str, what: str):
    dev = _DEVICE_OF[kind]

    def set_(value):
        name = f"set_autocast_{kind}_{what}"
        _deprecated(f"{name}({what})", f"set_autocast_{what}('{dev}', {what})")
        if dev in _other.dtype:
            (_other.dtype if what == "dtype" else _other.enabled)[dev] = \
                value if what == "dtype" else bool(value)
        elif what == "dtype":
            set_autocast_dtype(dev, value)
        else:
            set_autocast_enabled(dev, value)

    set_.__name__ = f"set_autocast_{kind}_{what}"
    set_.__doc__ = f"Set autocast's {what} for '{dev}' (deprecated; ``torch.{set_.__name__}``)."
    return set_


get_autocast_cpu_dtype, get_autocast_gpu_dtype, get_autocast_ipu_dtype, get_autocast_xla_dtype = (
    _getter(k, "dtype") for k in ("cpu", "gpu", "ipu", "xla"))
is_autocast_cpu_enabled, is_autocast_ipu_enabled, is_autocast_xla_enabled = (
    _getter(k, "enabled") for k in ("cpu", "ipu", "xla"))
set_autocast_cpu_dtype, set_autocast_gpu_dtype, set_autocast_ipu_dtype, set_autocast_xla_dtype = (
    _setter(k, "dtype") for k in ("cpu", "gpu", "ipu", "xla"))
set_autocast_cpu_enabled, set_autocast_ipu_enabled, set_autocast_xla_enabled = (
    _setter(k, "enabled") for k in ("cpu", "ipu", "xla"))


# --- Tensor names of other devices and of removed APIs -------------------------------------------
def _ipu(self, device=None, non_blocking=False, memory_format=None):
    raise RuntimeError("PyTorch is not linked with support for ipu devices\nglassgrad: tensors "
                       "live on the CPU; there is no IPU backend.")


def _volatile(self) -> bool:
    warn_user("volatile was removed (Variable.volatile is always False)", UserWarning,
              stacklevel=2)
    return False


def _reinforce(self, reward):
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\nSee "
        "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
        "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
        "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
        "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
        "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\n"
        "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
        "loss.backward()\n")


def _as_subclass(self, cls):
    """A ``cls`` instance sharing self's memory and attached to its graph through an
    AliasBackward0 node (``torch.Tensor.as_subclass``); TypeError for a non-Tensor class."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    from .ops.indexing import getitem

    alias = getitem(self, Ellipsis)
    out = object.__new__(cls)
    for slot in Tensor.__slots__[1:]:  # all but __weakref__
        setattr(out, slot, getattr(alias, slot))
    return out


def _module_load(self, other, assign=False):
    """How ``load_state_dict`` turns ``other`` into this parameter's new value when swapping:
    ``other.detach()`` with ``assign``, else ``self.copy_(other).detach()``
    (``torch.Tensor.module_load``)."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


from .tensor import Tensor  # noqa: E402 - after the module's own names, as _tensor_methods does

for _name in ("is_ipu", "is_xla", "is_maia", "is_mtia"):
    setattr(Tensor, _name, property(lambda self: False, doc=f"False (``torch.Tensor.{_name}``)."))
Tensor.ipu = _ipu
Tensor.volatile = property(_volatile)
Tensor.name = property(lambda self: None, doc="None: glassgrad has no named tensors.")
Tensor.grad_dtype = property(lambda self: self.dtype,
                             doc="The dtype ``.grad`` must have: this tensor's own.")
Tensor.reinforce = _reinforce
Tensor.as_subclass = _as_subclass
Tensor.module_load = _module_load
