"""The rest of ``torch.nn.Module``'s API, bound into ``Module`` in module.py: ``set_submodule``,
state-dict and load-state-dict hooks, ``to_empty``, ``compile``."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from . import _module_hooks as _hooks


def module_registered(module, name: str, value):
    """A child module assigned as an attribute, after the process-wide registration hooks."""
    if _hooks._global_module_registration_hooks:
        return _hooks.run_registration_hooks(_hooks._global_module_registration_hooks, module,
                                             name, value)
    return value


def set_submodule(self, target: str, module, strict: bool = False) -> None:
    """Set the submodule at dotted path ``target`` (``torch.nn.Module.set_submodule``).

    ValueError for an empty ``target`` or a ``module`` that is not a Module; AttributeError when
    the parent path does not resolve, when ``strict`` and the last name does not exist yet, or
    when that name holds something other than a Module.
    """
    from .module import Module

    if target == "":
        raise ValueError("Cannot set the submodule without a target name!")
    atoms = target.split(".")
    if not isinstance(module, Module):
        raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
    parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
    name = atoms[-1]
    if strict and not hasattr(parent, name):
        raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
    if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
        raise AttributeError("`" + name + "` is not an nn.Module")
    setattr(parent, name, module)


class _WrappedHook:
    """A load-state-dict pre-hook, called with or without its module first (PyTorch's
    ``_WrappedHook``); holds the module weakly so a hook does not keep it alive."""

    def __init__(self, hook, module=None) -> None:
        import weakref

        self.hook = hook
        self.module = None if module is None else weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.module is None:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)


def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
    """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
    error_msgs)`` (the module first with ``with_module``) before this module loads its entries."""
    return _hooks.add_hook(self._load_state_dict_pre_hooks,
                           _WrappedHook(hook, self if with_module else None))


def register_load_state_dict_pre_hook(self, hook):
    """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
    error_msgs)`` before this module's entries are loaded; it may edit ``state_dict`` in place
    (``torch.nn.Module.register_load_state_dict_pre_hook``)."""
    return _register_load_state_dict_pre_hook(self, hook, with_module=True)


def register_state_dict_pre_hook(self, hook):
    """``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this module's entries
    (``torch.nn.Module.register_state_dict_pre_hook``)."""
    return _hooks.add_hook(self._state_dict_pre_hooks, hook)


def register_state_dict_post_hook(self, hook):
    """``hook(module, state_dict, prefix, local_metadata)`` after this module's entries are in
    ``state_dict``; it edits it in place and must return None (RuntimeError otherwise)
    (``torch.nn.Module.register_state_dict_post_hook``)."""
    hook._from_public_api = True
    return _hooks.add_hook(self._state_dict_hooks, hook)


def _register_state_dict_hook(self, hook):
    """The private form: ``hook(module, state_dict, prefix, local_metadata)`` may return a
    replacement ``state_dict``."""
    if getattr(hook, "_from_public_api", False):
        raise RuntimeError(
            "Cannot register the same function as the state dict post hook that was previously "
            "registered via register_state_dict_post_hook"
        )
    return _hooks.add_hook(self._state_dict_hooks, hook)


def to_empty(self, *, device, recurse: bool = True):
    """Give every parameter and buffer fresh uninitialized storage of its shape and dtype on
    ``device`` (``torch.nn.Module.to_empty``); glassgrad computes on the CPU, so ``device`` is
    checked and the values are left for an init or ``load_state_dict`` to fill."""
    from .._factories import empty_like
    from ..backend import device as _device

    if device is not None:
        _device(device)
    return self._apply(empty_like, recurse=recurse)


def compile(self, *args, **kwargs) -> None:
    """``torch.nn.Module.compile``: glassgrad's ``compile`` is eager, so the module keeps running
    its Python ``forward``; the arguments are checked by ``glassgrad.compile`` and kept."""
    from .._compile import compile as _compile

    self._compiled_call_impl = _compile(self._call_impl, *args, **kwargs)


def overwritten(p, new, fn):
    """A new Parameter for a conversion under ``set_overwrite_module_params_on_conversion``
    (torch assigns ``Parameter(fn(p), p.requires_grad)`` and converts ``.grad`` likewise)."""
    from .parameter import Parameter

    fresh = Parameter(new.detach(), p.requires_grad)
    if p._grad is not None:
        with no_grad():
            fresh.grad = fn(p._grad).requires_grad_(p._grad.requires_grad)
    return fresh


def register_buffer_compat(module, name, value, persistent: bool) -> None:
    """``module.register_buffer(name, value, persistent)`` from ``__setattr__``, as torch calls it:
    a subclass whose own ``register_buffer`` lacks ``persistent`` gets two arguments (its
    behaviour from before the argument existed), and a non-persistent buffer is refused there."""
    import inspect

    from .module import Module

    method = module.register_buffer
    if getattr(method, "__func__", None) is Module.register_buffer or (
            "persistent" in inspect.signature(method).parameters):
        method(name, value, persistent)
        return
    if not persistent:
        raise RuntimeError(
            "Registering a non-persistent buffer on a Module subclass that implements "
            "register_buffer() without the persistent argument is not allowed.")
    method(name, value)
