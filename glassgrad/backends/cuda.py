"""``glassgrad.backends.cuda``: cuBLAS and attention-kernel flags on a build without CUDA
(``torch.backends.cuda``).

``matmul.allow_tf32`` is tied to ``torch.get_float32_matmul_precision()`` as in torch ("highest"
<-> False); the reduced-precision reductions default to True; the scaled-dot-product-attention
kernel switches keep their values. None of them changes glassgrad's NumPy arithmetic.
"""

from __future__ import annotations

import contextlib
from .._user_warning import warn_user


def is_built() -> bool:
    """False: glassgrad is not built with CUDA (``torch.backends.cuda.is_built``)."""
    return False


class cuBLASModule:
    """``torch.backends.cuda.matmul``: ``allow_tf32``, ``allow_fp16_reduced_precision_reduction``,
    ``allow_bf16_reduced_precision_reduction``, ``fp32_precision``; any other name is
    ``AttributeError("Unknown attribute ...")``."""

    _reductions = (
        "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
    )

    def __init__(self):
        object.__setattr__(self, "_values", dict.fromkeys(self._reductions, True))

    def __getattr__(self, name):
        from .. import _runtime

        if name == "allow_tf32":
            return _runtime.get_float32_matmul_precision() != "highest"
        if name == "fp32_precision":  # torch: "none" until a precision is chosen
            chosen = _runtime._state["matmul_precision"]
            return "none" if chosen is None else "ieee" if chosen == "highest" else "tf32"
        if name in self._reductions:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        from .. import _runtime

        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(
                    f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}"
                )
            _runtime.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._reductions:
            if not isinstance(value, (bool, tuple, list)):
                raise TypeError(
                    f"{name} expects a bool or a tuple/list of bools, but got {type(value)}"
                )
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be picked (True by default)."""
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be picked (True by default)."""
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    """Whether the math attention kernel may be picked (True by default)."""
    return _sdp["math"]


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be picked (True by default)."""
    return _sdp["cudnn"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel (``torch.backends.cuda.enable_flash_sdp``)."""
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel."""
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math attention kernel (glassgrad's only one)."""
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN attention kernel."""
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Set the attention kernel switches inside a ``with`` block (the deprecated
    ``torch.backends.cuda.sdp_kernel``, with its FutureWarning)."""
    warn_user(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)
