"""``glassgrad.backends``: the backend flags of ``torch.backends`` on glassgrad's CPU stack.

Each submodule is a real module (``import torch.backends.cudnn as cudnn`` works) whose flags keep
the value a program sets and reject a non-bool as torch does. ``cudnn``, ``cuda`` and ``mps`` report
a build without those libraries; ``mkl``, ``openmp`` and ``cpu`` report what NumPy's BLAS and the
machine really are; no flag changes glassgrad's numbers (NumPy has no TF32 or cuDNN kernels).
"""

from __future__ import annotations

import sys
import types


class BoolFlag:
    """A module attribute that only takes a bool: ``RuntimeError("<setter> expects a bool, but
    got int")`` as torch's C++ setters say; ``on_set`` reacts to a change (linked flags)."""

    def __init__(self, default: bool, setter: str, on_set=None):
        self.value, self.setter, self.on_set = default, setter, on_set

    def __get__(self, module, owner=None):
        return self if module is None else self.value

    def __set__(self, module, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got {type(value).__name__}")
        self.value = value
        if self.on_set is not None:
            self.on_set(value)


def install_flags(module_name: str, **flags: BoolFlag) -> None:
    """Give module ``module_name`` the typed ``flags`` (its class becomes a ModuleType subclass,
    as torch's ``PropModule`` does, so that ``module.flag = value`` runs the check)."""
    module = sys.modules[module_name]
    module.__class__ = type(f"{module_name}.FlagModule", (types.ModuleType,), dict(flags))


from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: E402,F401
