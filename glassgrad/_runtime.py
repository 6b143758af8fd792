"""Process-wide runtime settings of ``torch.*``: threads, float32 matmul precision, determinism,
the default device, ``typename`` and ``is_inference``.

``set_num_threads`` really sets the threads of NumPy's BLAS (where glassgrad's matmuls and
convolutions run) through threadpoolctl; the other settings are recorded and read back as torch
does, since NumPy's CPU kernels are deterministic and always full float32 precision.
"""

from __future__ import annotations

import os
from ._user_warning import warn_user

_state = {
    "num_threads": None,  # set by set_num_threads; None: ask the BLAS
    "interop_threads": None,
    "interop_set": False,
    "matmul_precision": None,  # None: never set ("highest", and fp32_precision "none")
    "deterministic": False,
    "warn_only": False,
    "default_device": None,
}


def _check_count(name: str, n) -> None:
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def _blas_controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    import numpy  # noqa: F401 - NumPy's BLAS must be loaded before threadpoolctl looks

    return ThreadpoolController()


def set_num_threads(int) -> None:  # noqa: A002 - torch's parameter name
    """Use ``int`` threads in NumPy's BLAS, where glassgrad's matmuls, linear layers and
    convolutions run (``torch.set_num_threads``).

    Raises RuntimeError "set_num_threads expects a positive integer" for ``int <= 0`` and
    "expects an int" for another type. Without threadpoolctl the number is only recorded, with a
    warning saying so. Example::

        >>> glassgrad.set_num_threads(1); glassgrad.get_num_threads()
        1
    """
    _check_count("set_num_threads", int)
    _state["num_threads"] = int
    controller = _blas_controller()
    if controller is None:
        warn_user(
            "glassgrad.set_num_threads: threadpoolctl is not installed, so NumPy's BLAS keeps its "
            "threads (pip install threadpoolctl, or set OMP_NUM_THREADS before starting Python).",
            stacklevel=2,
        )
        return
    controller.select(user_api="blas").limit(limits=int)


def get_num_threads() -> int:
    """The threads NumPy's BLAS uses (``torch.get_num_threads``): threadpoolctl's report, else
    the number last set, else ``os.cpu_count()``."""
    controller = _blas_controller()
    if controller is not None:
        counts = [info["num_threads"] for info in controller.select(user_api="blas").info()]
        if counts:
            return max(counts)
    return _state["num_threads"] or os.cpu_count() or 1


def set_num_interop_threads(int) -> None:  # noqa: A002 - torch's parameter name
    """Record the inter-op thread count (``torch.set_num_interop_threads``); glassgrad runs ops
    one after another, so nothing else changes. As in torch it may be called once:
    RuntimeError "cannot set number of interop threads after ... set_num_interop_threads called"."""
    _check_count("set_num_interop_threads", int)
    if _state["interop_set"]:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _state["interop_threads"], _state["interop_set"] = int, True


def get_num_interop_threads() -> int:
    """The inter-op thread count: the number set, else the intra-op default
    (``torch.get_num_interop_threads``)."""
    return _state["interop_threads"] or get_num_threads()


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium" (``torch.set_float32_matmul_precision``); any other
    string warns and changes nothing, as in torch. NumPy has no TF32 or bfloat16-pass matmul, so
    glassgrad's float32 products are "highest" whatever is set; ``backends.cuda.matmul.allow_tf32``
    reads this setting."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in ("highest", "high", "medium"):
        warn_user(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            stacklevel=2,
        )
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision set ("highest" by default)."""
    return _state["matmul_precision"] or "highest"


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (``torch.use_deterministic_algorithms``). glassgrad's
    NumPy kernels are all deterministic on the CPU, so this records the flags that
    ``are_deterministic_algorithms_enabled`` and friends read back. TypeError for a non-bool."""
    if not isinstance(mode, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    _state["deterministic"], _state["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether it was set with ``warn_only=True``."""
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """0/"default": off; 1/"warn": deterministic, warn only; 2/"error": deterministic
    (``torch.set_deterministic_debug_mode``). RuntimeError "invalid value of debug_mode" else."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """2 when deterministic, 1 when warn-only, 0 when off."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_default_device(device) -> None:
    """Set the device factories use when none is given (``torch.set_default_device``); ``None``
    restores the CPU. glassgrad's devices all compute on the CPU (NOTE [Backend])."""
    from .backend import device as device_cls

    _state["default_device"] = None if device is None else device_cls(device)


def get_default_device():
    """The default device: ``device(type='cpu')`` unless set (``torch.get_default_device``)."""
    from .backend import CPU_DEVICE

    return _state["default_device"] or CPU_DEVICE


def typename(obj) -> str:
    """``x.type()`` for a tensor ('torch.FloatTensor'), else the dotted module and qualified name
    of a class or function, or of the object's class (``torch.typename``)."""
    from .tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_inference(input) -> bool:
    """Whether ``input`` was made under ``inference_mode()`` (``torch.is_inference``); TypeError
    for a non-Tensor, as torch."""
    from .tensor import Tensor

    if not isinstance(input, Tensor):
        raise TypeError(
            "is_inference(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    return input.is_inference()
