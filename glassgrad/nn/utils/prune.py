"""Pruning: zero parts of a parameter through a mask (``torch.nn.utils.prune``).

Pruning ``module.weight`` moves the parameter to ``weight_orig``, adds the buffer
``weight_mask`` and a forward pre-hook (the pruning method itself) that sets the plain attribute
``module.weight = weight_mask * weight_orig`` before each call, so gradients reach
``weight_orig`` only where the mask is 1. Pruning the same tensor again combines the masks in a
``PruningContainer``; ``remove`` makes the pruned values permanent. Masks come from the same
random stream and selection rules as PyTorch's (``topk`` for the unstructured methods,
``kthvalue``/``topk`` over channel norms for the structured ones), so a seeded run prunes the
same entries in both libraries.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._factories import ones_like, rand, rand_like, zeros_like
from ...autograd.grad_mode import no_grad
from ...comparison import kthvalue, topk
from ...ops.reduction import norm as _norm
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


class BasePruningMethod(ABC):
    """The base of every pruning method (``torch.nn.utils.prune.BasePruningMethod``):
    subclasses define ``PRUNING_TYPE`` ("unstructured", "structured" with a ``dim``, or
    "global") and ``compute_mask(t, default_mask)``; ``apply`` installs one on a module. An
    instance is also the forward pre-hook that recomputes the pruned tensor."""

    _tensor_name: str | None = None

    def __call__(self, module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t`` given the current one (a tensor of t's shape)."""

    def apply_mask(self, module):
        """``<name>_mask * <name>_orig`` of ``module`` (differentiable in the original)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, the mask computed from
        ``importance_scores`` (default: the tensor itself); returns the installed method (a
        ``PruningContainer`` when ``name`` was already pruned)."""
        method = _combined_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter "
                                 f"{name} of {module}, got {importance_scores.shape} vs "
                                 f"{orig.shape}")
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with no_grad():
                mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # leave the module as it was
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes for it (nothing is installed)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t, "
                                 f"got {importance_scores.shape} vs {t.shape}")
        if default_mask is None:
            default_mask = ones_like(t)
        with no_grad():
            mask = self.compute_mask(importance_scores, default_mask=default_mask)
        return t * mask

    def remove(self, module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the parameter (the same object as
        ``<name>_orig``, now holding the pruned values); the mask and ``_orig`` go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.data
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _combined_method(cls, module, name, *args, **kwargs):
    """A new ``cls`` method on ``name``, chained after one already installed (which is taken
    off the hooks; the caller installs the result)."""
    keys = [k for k, hook in module._forward_pre_hooks.items()
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                             f"module {module}. Use a PruningContainer.")
    old = module._forward_pre_hooks.pop(keys[0]) if keys else None
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    if not isinstance(old, PruningContainer):
        old = PruningContainer(old)
    old.add_pruning_method(method)
    return old


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods on one tensor (``torch.nn.utils.prune.PruningContainer``):
    each new method prunes only what the previous masks kept (the surviving entries, or the
    surviving channels along its ``dim`` for a structured one)."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Append ``method``; TypeError for a non-method, ValueError for another tensor's."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask, computed on the part of ``t`` the current mask keeps."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            keep = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have '
                                     "the attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            alive = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            keep = tuple(alive if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            keep = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        part = method.compute_mask(t[keep], default_mask=default_mask[keep])
        mask[keep] = part.to(dtype=mask.dtype)
        return mask


def _check_amount(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    integral = isinstance(amount, numbers.Integral)
    if (integral and amount < 0) or (not integral and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _count_to_prune(amount, size: int) -> int:
    """``amount`` entries (an int) or that fraction of ``size``, rounded half to even."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return amount
    return round(amount * size)


def _check_structured(t, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t, dim: int, channels):
    """Ones on the ``channels`` (indices or a bool mask) of ``dim``, zeros elsewhere."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


class Identity(BasePruningMethod):
    """Prunes nothing: installs the all-ones mask (``torch.nn.utils.prune.Identity``)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.view(-1)[topk(self._scores(t).view(-1), k=k, largest=False).indices] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Zero ``amount`` (an int, or a fraction) entries chosen at random
    (``torch.nn.utils.prune.RandomUnstructured``)."""

    def _scores(self, t):
        return -rand_like(t)  # NOTE: torch prunes the k largest draws: the k smallest of -draws

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Zero the ``amount`` entries of smallest absolute value
    (``torch.nn.utils.prune.L1Unstructured``)."""

    def _scores(self, t):
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Zero ``amount`` whole channels along ``dim``, chosen at random
    (``torch.nn.utils.prune.RandomStructured``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        k = _count_to_prune(self.amount, channels)
        if not k:
            return default_mask
        draws = rand(channels)
        mask = _channel_mask(t, self.dim, draws > kthvalue(draws, k=k).values)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Zero the ``amount`` channels along ``dim`` of smallest ``n``-norm
    (``torch.nn.utils.prune.LnStructured``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        k = _count_to_prune(self.amount, channels)
        norms = _norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != self.dim % t.dim()])
        kept = topk(norms, k=channels - k, largest=True).indices
        if not k:
            return default_mask
        mask = _channel_mask(t, self.dim, kept)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given ``mask`` (``torch.nn.utils.prune.CustomFromMask``)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask "
                                 f"shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Install the all-ones mask on ``module.<name>`` (``torch.nn.utils.prune.identity``)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """``RandomUnstructured(amount)`` on ``module.<name>``; returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """``L1Unstructured(amount)`` on ``module.<name>``; returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """``RandomStructured(amount, dim)`` on ``module.<name>``; returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """``LnStructured(amount, n, dim)`` on ``module.<name>``; returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    """``CustomFromMask(mask)`` on ``module.<name>``; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the ``(module, name)`` pairs of ``parameters`` as one tensor: an unstructured
    ``pruning_method(**kwargs)`` picks over all of them together, then each gets its share as a
    ``CustomFromMask`` (``torch.nn.utils.prune.global_unstructured``). TypeError for a
    non-iterable, a non-dict ``importance_scores`` or a method that is not unstructured."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    current = parameters_to_vector([getattr(m, n + "_mask") if hasattr(m, n + "_mask")
                                    else ones_like(getattr(m, n)) for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer()
    container._tensor_name = "temp"
    container.add_pruning_method(method)
    with no_grad():
        final = container.compute_mask(scores, current)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final[start:start + param.numel()].view_as(param))
        start += param.numel()


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent (``torch.nn.utils.prune.remove``).
    ValueError when it is not pruned."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can "
                     "be removed")


def is_pruned(module) -> bool:
    """Whether ``module`` or a descendant carries a pruning hook
    (``torch.nn.utils.prune.is_pruned``)."""
    return any(isinstance(hook, BasePruningMethod) for m in module.modules()
               for hook in m._forward_pre_hooks.values())
