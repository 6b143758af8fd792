"""``Module``: the base class of every layer (``torch.nn.Module``).

Attributes that are Parameters, Modules or registered buffers go to ``_parameters``, ``_modules``
and ``_buffers`` (in registration order, which is the ``state_dict`` order); everything else is a
plain attribute. State dicts live in ``_module_state.py``, hooks in ``_module_hooks.py``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

from .. import __future__ as _future
from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..backend import device as _device
from ..tensor import Tensor
from . import _module_hooks as _hooks
from . import _module_hooks_legacy as _legacy_hooks
from . import _module_state as _state_dict
from . import _module_api as _api
from . import _module_args as _args
from ._module_hooks import (  # noqa: F401 - torch.nn.modules.module's global hook API
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from .parameter import Buffer, UninitializedTensorMixin
from ._module_state import _IncompatibleKeys  # noqa: F401 - re-exported like torch's
from .parameter import Parameter


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return dtypes.type_name(obj.dtype)
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


class Module:
    """Base class for layers and models (``torch.nn.Module``).

    Subclasses call ``super().__init__()`` and then assign Parameters and sub-Modules as
    attributes; ``forward`` defines the computation and ``module(x)`` runs it with hooks.

    Example::

        >>> class Net(glassgrad.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = glassgrad.nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x)
    """

    dump_patches = False
    _version: int = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if not self.call_super_init and (args or kwargs):
            _args.check_init_args(self, args, kwargs)
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None  # which kind _backward_hooks holds, once it holds one
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        if self.call_super_init:  # torch's opt-in for cooperative multiple inheritance
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # NOTE [Hot path]: a module call with no hooks is one dict test per kind and one flag for
    # all the process-wide hooks, then forward.
    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _hooks._global_hooks_on):
            return self.forward(*args, **kwargs)
        return _hooks.call_with_hooks(self, args, kwargs)

    _call_impl = __call__

    # --- registration -------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running stats); ``persistent=False``
        keeps it out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or "
                "None required)"
            )
        if _hooks._global_buffer_registration_hooks:
            tensor = _hooks.run_registration_hooks(_hooks._global_buffer_registration_hooks,
                                                   self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under ``name`` (what ``self.name = Parameter(...)`` does)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method."
            )
        if _hooks._global_parameter_registration_hooks:
            param = _hooks.run_registration_hooks(_hooks._global_parameter_registration_hooks,
                                                  self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (what ``self.name = module`` does)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _hooks._global_module_registration_hooks:
            module = _hooks.run_registration_hooks(_hooks._global_module_registration_hooks,
                                                   self, name, module)
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_name(name, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_name(name, keep="_modules")
            modules[name] = _api.module_registered(self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = _api.module_registered(self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.nn.Buffer, "
                    "torch.Tensor or None expected)"
                )
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            _api.register_buffer_compat(self, name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def _remove_name(self, name: str, keep: str) -> None:
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                d[store].pop(name, None)
        if keep != "_buffers":
            d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        for key in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                    "_forward_hooks_always_called", "_state_dict_pre_hooks",
                    "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                    "_state_dict_hooks", "_backward_pre_hooks"):  # pickles from before these
            self.__dict__.setdefault(key, OrderedDict())

    set_submodule = _api.set_submodule
    # --- lookup -------------------------------------------------------------------------------
    def get_submodule(self, target: str) -> Module:
        """The module at dotted path ``target`` ("" is self); AttributeError if absent."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")  # noqa: TRY004
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``; AttributeError if absent."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")  # noqa: TRY004
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``; AttributeError if absent."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # --- iteration ----------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module and (``recurse``) its descendants, each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted_name, parameter)`` pairs in registration order (``state_dict`` order)."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """``(dotted_name, module)`` for self ("") and every descendant, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # --- modes and gradients ------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and in every descendant (Dropout, BatchNorm behave differently)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to None (default), or to zeros in place."""
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g._requires_grad = False
                with no_grad():
                    g.zero_()

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every descendant, then on self (e.g. custom init)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        overwrite = _future._overwrite_module_params_on_conversion and not (
            _future._swap_module_params_on_conversion)
        for key, p in self._parameters.items():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if overwrite and not isinstance(p, UninitializedTensorMixin):
                self._parameters[key] = _api.overwritten(p, new, fn)
                continue
            # NOTE: the same Parameter object stays (optimizers hold it)
            if isinstance(p, UninitializedTensorMixin):
                p._retype(new)
            else:
                p._array = new._array
            if p._grad is not None:
                with no_grad():  # the same grad object too, as torch's `.grad.data =`
                    p._grad._array = fn(p._grad)._array
        for key, buf in self._buffers.items():
            if buf is not None:
                with no_grad():
                    new = fn(buf)
                if isinstance(buf, UninitializedTensorMixin):  # stays a placeholder, new dtype
                    buf._retype(new)
                else:
                    self._buffers[key] = new
        return self

    def to(self, *args, **kwargs) -> Module:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``: floating
        parameters and buffers change dtype in place; devices are all the CPU."""
        device, dtype, bound = _args.parse_to(args, kwargs)
        if "copy" in bound:  # PyTorch parses it with Tensor.to's signature, then refuses it
            raise RuntimeError(".to() does not accept copy argument")
        if device is not None:
            _device(device)
        fmt = bound.get("memory_format")
        if dtype is None and fmt is None:
            return self
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
        return self._apply(lambda t: _args.convert(t, dtype, fmt))

    def _cast(self, d) -> Module:
        return self._apply(lambda t: t.to(d) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._cast(dtypes.float32)

    def double(self) -> Module:
        return self._cast(dtypes.float64)

    def half(self) -> Module:
        return self._cast(dtypes.float16)

    def bfloat16(self) -> Module:
        return self._cast(dtypes.bfloat16)

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self

    def cuda(self, device=None) -> Module:
        """No-op: glassgrad computes on the CPU (article code calling ``.cuda()`` still runs)."""
        return self

    def share_memory(self) -> Module:
        """Move every parameter and buffer into shared memory (``Tensor.share_memory_``)."""
        return self._apply(lambda t: t.share_memory_())

    # --- state dict ---------------------------------------------------------------------------
    state_dict = _state_dict.state_dict
    load_state_dict = _state_dict.load_state_dict
    _save_to_state_dict = _state_dict.save_to_state_dict
    _load_from_state_dict = _state_dict.load_from_state_dict

    def get_extra_state(self):
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict``."""
        return _hooks.add_hook(self._load_state_dict_post_hooks, hook)

    register_load_state_dict_pre_hook = _api.register_load_state_dict_pre_hook
    _register_load_state_dict_pre_hook = _api._register_load_state_dict_pre_hook
    register_state_dict_pre_hook = _api.register_state_dict_pre_hook
    register_state_dict_post_hook = _api.register_state_dict_post_hook
    _register_state_dict_hook = _api._register_state_dict_hook
    to_empty = _api.to_empty
    compile = _api.compile

    # --- hooks --------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """``hook(module, args)`` (or ``(module, args, kwargs)``) before ``forward``; it may
        return new args."""
        handle = _hooks.add_hook(self._forward_pre_hooks, hook, prepend,
                                 (self._forward_pre_hooks_with_kwargs,))
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False):
        """``hook(module, args, output)`` after ``forward``; it may return a new output."""
        handle = _hooks.add_hook(self._forward_hooks, hook, prepend,
                                 (self._forward_hooks_with_kwargs,
                                  self._forward_hooks_always_called))
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the module's
        tensor inputs are computed; it may return new ``grad_input``."""
        _legacy_hooks.check_kind(self, True, "module")
        return _hooks.add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """``hook(module, grad_output)`` before the module's gradients are computed; it may
        return new ``grad_output``."""
        return _hooks.add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated (``torch.nn.Module.register_backward_hook``): ``hook(module, grad_input,
        grad_output)`` on the grad_fn of the module's first output only, with PyTorch's
        FutureWarnings where that misses gradients; prefer ``register_full_backward_hook``."""
        _legacy_hooks.check_kind(self, False, "module")
        return _hooks.add_hook(self._backward_hooks, hook)

    # --- repr ---------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of ``repr``; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
