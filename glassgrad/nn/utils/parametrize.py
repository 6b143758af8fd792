"""Parametrizations: a module's tensor computed on access from an ``original`` one
(``torch.nn.utils.parametrize``).

``register_parametrization(m, "weight", P())`` moves ``m.weight`` to
``m.parametrizations.weight.original`` and turns ``m.weight`` into a property that returns
``P()(original)``; assigning to it goes through ``P.right_inverse``. As in PyTorch, the module's
class is swapped for a generated subclass ``Parametrized<Class>`` that carries the property, so
other instances of the class are untouched; ``state_dict`` keys are
``parametrizations.weight.original`` (``original0``, ``original1``, ... when ``right_inverse``
returns a sequence).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from contextlib import contextmanager

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..module import Module
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params",
           "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, on first access, and
    reused (``torch.nn.utils.parametrize.cached``); the cache is cleared when the outermost
    context exits. Useful when a weight is read many times in one forward (an RNN's loop)."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding the unparametrized tensor as
    ``original`` (or ``original0``, ``original1``, ... when the first ``right_inverse`` returns
    a sequence) (``torch.nn.utils.parametrize.ParametrizationList``). Calling it evaluates the
    chain; ``right_inverse(value)`` stores the original that maps to ``value``. Built by
    ``register_parametrization``, not by hand. ValueError when, without ``unsafe``, the chain
    changes the tensor's shape or dtype."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # the identity is a valid right inverse for the first registration
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\nright_inverse(original).dtype: "
                    f"{new.dtype}")
            with no_grad():
                original.set_(new)  # NOTE: the same Parameter object stays (optimizers hold it)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(part).__name__}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            _check_unchanged(self(), original_shape, original_dtype)

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the chain evaluates to ``value`` (through every
        parametrization's ``right_inverse``, last to first). RuntimeError when one has none."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                self.original.set_(value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. "
                                 f"Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, part in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(part, Tensor):
                    raise ValueError("`right_inverse` must return a sequence of tensors. Got "
                                     f"element {i} of type {type(part).__name__}")
                if original_i.dtype != part.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{part.dtype} while `original{i}` has dtype "
                                     f"{original_i.dtype}")
                original_i.set_(part)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self._modules.values())[1:]:
            x = module(x)
        return x


def _check_unchanged(z, shape, dtype) -> None:
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    if z.dtype != dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, "
                         f"unless `unsafe` flag is enabled.\nunparametrized dtype: {dtype}\n"
                         f"parametrized dtype: {z.dtype}")
    if z.shape != shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, "
                         f"unless `unsafe` flag is enabled.\nunparametrized shape: {shape}\n"
                         f"parametrized shape: {z.shape}")


def _getstate(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). "
        "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _default_deepcopy(self, memo):
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own, ``Parametrized<Class>``, to hang properties on."""
    cls = module.__class__
    namespace = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self):
        chain = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return chain()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = chain()
        return value

    def set_original(self, value) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the stored
    original (``torch.nn.utils.parametrize.register_parametrization``); a second call on the
    same name chains after the first. ``parametrization`` may define ``right_inverse(X)``
    (returning a tensor, or a sequence of tensors for several originals); its result is what is
    stored at registration and on assignment. ``unsafe=True`` skips the shape/dtype
    consistency checks (ValueError otherwise). ValueError when ``tensor_name`` is not a
    parameter, buffer or parametrized tensor of ``module``. Returns ``module``.

    Example::

        >>> class Symmetric(glassgrad.nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).transpose(-1, -2)
        >>> m = register_parametrization(glassgrad.nn.Linear(3, 3), "weight", Symmetric())
        >>> glassgrad.allclose(m.weight, m.weight.T)
        True
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {y.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {y.shape}\n"
                                 f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(z).__name__}")
                    if z.dtype != y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            f"same dtype as module.{tensor_name}, unless the `unsafe` flag is "
                            f"enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
                            f"returned dtype: {z.dtype}")
                    if z.shape != y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            f"same shape as module.{tensor_name}, unless the `unsafe` flag is "
                            f"enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
                            f"returned shape: {z.shape}")
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization, or one on ``tensor_name``
    (``torch.nn.utils.parametrize.is_parametrized``)."""
    chains = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` on ``tensor_name``
    (``torch.nn.utils.parametrize.remove_parametrizations``): ``module.<tensor_name>`` becomes a
    plain parameter (or buffer) again, holding the current parametrized value with
    ``leave_parametrized=True`` or the original otherwise. The same Parameter object is kept for
    a single original. ValueError when there is no such parametrization, or for
    ``leave_parametrized=False`` with several originals. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                original.set_(value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)
        original = (Parameter(value.detach(), value.requires_grad) if value.requires_grad
                    else value.detach())
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before ``register_parametrization`` swapped it
    (``torch.nn.utils.parametrize.type_before_parametrizations``)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Copy the parametrizations of ``from_module`` (all, or those of ``tensor_name``) onto
    ``to_module``, which gets ``from_module``'s originals as its own
    (``torch.nn.utils.parametrize.transfer_parametrizations_and_params``). Returns
    ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    chains = from_module.parametrizations
    names = list(chains) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for p in chains[name]:
            register_parametrization(to_module, name, p)
        src, dst = chains[name], to_module.parametrizations[name]
        with no_grad():
            if src.is_tensor:
                dst.original.set_(src.original)
            else:
                for i in range(src.ntensors):
                    getattr(dst, f"original{i}").set_(getattr(src, f"original{i}"))
    return to_module
