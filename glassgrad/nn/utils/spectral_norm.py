"""The hook-based spectral normalisation (``torch.nn.utils.spectral_norm``): ``weight_orig``
is the parameter, ``weight_u`` / ``weight_v`` the power-iteration buffers, and a forward
pre-hook sets ``module.weight = weight_orig / sigma`` before each call."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...linalg import pinv
from ...ops.linalg import mv
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from ..parameter import Parameter
from .weight_norm import _remove_hook

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "remove_spectral_norm", "spectral_norm"]


def _output_dim(module: Module, dim: int | None) -> int:
    """``dim``, or the weight's output dim: 1 for a ConvTranspose (in, out, ...), else 0."""
    if dim is not None:
        return dim
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm`` (``torch.nn.utils.spectral_norm.
    SpectralNorm``); one power iteration step per call in training mode, none in eval."""

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # NOTE: the buffers are updated in place; the clones are what the graph saves, so
            # the next update does not break this step's backward
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(mv(weight_mat, v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = u.dot(mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma) -> Tensor:
        """The ``v`` with ``u @ W @ v == target_sigma`` in the least-squares sense, for
        checkpoints saved before ``v`` was a buffer."""
        w_t = weight_mat.t()
        v = (pinv(w_t @ weight_mat) @ w_t @ u.unsqueeze(1)).squeeze(1)
        return v * (target_sigma / u.dot(mv(weight_mat, v)))


class SpectralNormStateDictHook:
    """Records ``spectral_norm``'s format version in the state dict's metadata
    (``torch.nn.utils.spectral_norm.SpectralNormStateDictHook``)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


class SpectralNormLoadStateDictPreHook:
    """Loads checkpoints of the format before version 1 (the normalised weight stored, no
    ``<name>_v``): ``v`` is solved from the weight and ``u``
    (``torch.nn.utils.spectral_norm.SpectralNormLoadStateDictPreHook``)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if (version is None and key not in state_dict
                and all(key + s in state_dict for s in ("_orig", "_u", "_v"))):
            return  # a version-1 checkpoint without metadata
        absent = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if absent:
            if strict:
                missing_keys.extend(absent)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            sigma = (weight_orig / state_dict.pop(key)).mean()
            state_dict[key + "_v"] = fn._solve_v_and_rescale(
                fn.reshape_weight_to_matrix(weight_orig), state_dict[key + "_u"], sigma)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Rescale the parameter ``name`` by its spectral norm before every forward, through a
    pre-hook (``torch.nn.utils.spectral_norm``): ``<name>_orig`` becomes the parameter,
    ``<name>_u`` / ``<name>_v`` the buffers. ``dim`` defaults to 1 for ConvTranspose, else 0.
    RuntimeError for a second registration, ValueError for a None parameter. Returns
    ``module``."""
    SpectralNorm.apply(module, name, n_power_iterations, _output_dim(module, dim), eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Turn ``spectral_norm``'s ``name`` back into one plain parameter, holding the current
    normalised weight (``torch.nn.utils.remove_spectral_norm``). ValueError when there is
    none."""
    _remove_hook(module, SpectralNorm, name, "spectral_norm")
    for hooks, cls in ((module._state_dict_hooks, SpectralNormStateDictHook),
                       (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in list(hooks.items()):
            hook = getattr(hook, "hook", hook)  # a load pre-hook arrives wrapped
            if isinstance(hook, cls) and hook.fn.name == name:
                del hooks[key]
                break
    return module
