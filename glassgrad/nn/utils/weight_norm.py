"""The hook-based weight normalisation (``torch.nn.utils.weight_norm``), deprecated in PyTorch in
favour of ``parametrizations.weight_norm`` but still widely used (WaveNet-style vocoders)."""

from __future__ import annotations


from ..._linalg_top import norm_except_dim
from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter
from ..._user_warning import warn_user

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``g * v / ||v||``, the norm over every dim of ``v`` but ``dim`` (all for -1)
    (``torch._weight_norm``); differentiable in ``v`` and ``g``."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v`` before each call (``torch.nn.utils.weight_norm.WeightNorm``)."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warn_user("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                  stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim)
                                                         .detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace the parameter ``name`` by ``<name>_g`` (magnitude, the norm over every dim but
    ``dim``; over all for None) and ``<name>_v`` (direction), recombined by a forward pre-hook
    as ``g * v / ||v||`` (``torch.nn.utils.weight_norm``; FutureWarning: deprecated).
    RuntimeError when ``name`` already has one. Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Fold ``weight_norm`` back into one parameter ``name`` (``torch.nn.utils.
    remove_weight_norm``). ValueError when ``module`` has none on ``name``."""
    return _remove_hook(module, WeightNorm, name, "weight_norm")


def _remove_hook(module: Module, cls: type, name: str, what: str) -> Module:
    """Undo the ``cls`` pre-hook registered on ``name`` (ValueError naming ``what`` if none)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, cls) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
