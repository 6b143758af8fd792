"""Module hooks: forward pre/post hooks and PyTorch's *full* backward hooks.

NOTE [Full backward hooks]: as in PyTorch, the module's tensor inputs and outputs are passed through
an identity node each (``BackwardHookFunctionBackward``). The output node's pre-hook sees the
gradients w.r.t. the outputs (``grad_output``; backward *pre* hooks may replace them); the input
node's post-hook sees the gradients w.r.t. the inputs (``grad_input``) and calls
``hook(module, grad_input, grad_output)``, which may return replacements. When no input requires
grad, the hooks run from the output node with ``grad_input`` all None, as PyTorch does.
"""

from __future__ import annotations

from collections import OrderedDict

from ..autograd.grad_mode import _state
from ..autograd.graph import Node, RemovableHandle, grad_accumulator
from ..ops import _view_meta
from ..tensor import Tensor
from .._user_warning import warn_user

class _GlobalHooks(OrderedDict):
    """A process-wide hook store that keeps ``_global_hooks_on`` current, so ``Module.__call__``
    tests one flag for all of them (NOTE [Hot path] in module.py)."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        _refresh()

    def pop(self, key, *default):
        out = super().pop(key, *default)
        _refresh()
        return out


# process-wide hooks (``torch.nn.modules.module.register_module_forward_hook`` and friends)
_global_forward_pre_hooks: OrderedDict = _GlobalHooks()
_global_forward_hooks: OrderedDict = _GlobalHooks()
_global_forward_hooks_with_kwargs: dict = {}
_global_forward_hooks_always_called: dict = {}
_global_backward_hooks: OrderedDict = _GlobalHooks()
_global_backward_pre_hooks: OrderedDict = _GlobalHooks()
_global_hooks_on = False
# registration hooks run from Module.__setattr__/register_*, never from __call__
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()


def _refresh() -> None:
    global _global_hooks_on
    _global_hooks_on = bool(_global_forward_pre_hooks or _global_forward_hooks
                            or _global_backward_hooks or _global_backward_pre_hooks)


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (``torch.nn.modules.module``)."""
    return add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` (``(module, args, kwargs, output)`` with ``with_kwargs``)
    after every module's forward; ``always_call`` runs it even when forward raised
    (``torch.nn.modules.module``)."""
    handle = _ModuleHookHandle(_global_forward_hooks, (_global_forward_hooks_with_kwargs,
                                                       _global_forward_hooks_always_called))
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    _global_forward_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module (``torch.nn.modules.module``)."""
    from . import _module_hooks_legacy

    _module_hooks_legacy.check_kind(None, True, "global")
    return add_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated: a non-full hook on every module (see ``_module_hooks_legacy``)."""
    from . import _module_hooks_legacy

    return _module_hooks_legacy.register_global(hook)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, grad_output)`` before every module's gradients are computed; it may return
    new ``grad_output`` (``torch.nn.modules.module``)."""
    return add_hook(_global_backward_pre_hooks, hook)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer)`` whenever any module registers a buffer; a returned tensor
    is registered instead (``torch.nn.modules.module``)."""
    return add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule)`` whenever any module registers a child module; a
    returned module is registered instead (``torch.nn.modules.module``)."""
    return add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param)`` whenever any module registers a parameter; a returned
    parameter is registered instead (``torch.nn.modules.module``)."""
    return add_hook(_global_parameter_registration_hooks, hook)


def run_registration_hooks(store, module, name, value):
    """What a registration hook store makes of ``value`` (each hook may replace it)."""
    for hook in store.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _ModuleHookHandle(RemovableHandle):
    """A module hook's handle (``torch.utils.hooks.RemovableHandle``): ``remove()`` also drops the
    hook's flags (``with_kwargs``, ``always_call``) kept in ``extra`` dicts beside the store."""

    __slots__ = ("_extra",)

    def __init__(self, store: dict, extra=()):
        RemovableHandle.__init__(self, store)
        self._extra = tuple(extra)

    def hooks_dict_ref(self):
        return self._store

    def remove(self) -> None:
        self._store.pop(self._key, None)
        for flags in self._extra:
            flags.pop(self._key, None)


def add_hook(store: OrderedDict, hook, prepend: bool = False, extra=()) -> RemovableHandle:
    handle = _ModuleHookHandle(store, extra)
    store[handle.id] = hook
    if prepend:
        store.move_to_end(handle.id, last=False)
    return handle


class BackwardHookFunctionBackward(Node):
    """Identity over several tensors at once: one node, so a hook sees all their gradients."""

    __slots__ = ("_n",)

    def __init__(self, edges):
        Node.__init__(self, tuple(edges), None, None, None)
        self._n = len(edges)

    @property
    def _n_outputs(self) -> int:
        return self._n

    def _run_backward(self, grads):
        return tuple(grads)


def _identity(values):
    """Route the tensors among ``values`` through one identity node; returns (new values, node)."""
    idx = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v._requires_grad]
    if not idx or not _state.enabled:
        return values, None
    edges = []
    for i in idx:
        t = values[i]
        edges.append((t.grad_fn, t._output_nr) if t.grad_fn is not None else (grad_accumulator(t), 0))
    node = BackwardHookFunctionBackward(edges)
    out = list(values)
    for k, i in enumerate(idx):
        alias = Tensor._make(values[i]._array)
        alias._vc = values[i]._vc
        alias._requires_grad = True
        alias.grad_fn = node
        alias._output_nr = k
        # PyTorch's identity is a custom Function returning its inputs as-is: an in-place write
        # to one (ReLU(inplace=True) after the hooked module) is refused (NOTE [View creation])
        _view_meta.mark(alias, _view_meta.CUSTOM_FUNCTION)
        out[i] = alias
    node._metadata = {"index": idx, "n": len(values)}
    return out, node


class BackwardHook:
    """One forward call's backward hooks (``torch.utils.hooks.BackwardHook``)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_node = None

    def _pack(self, node, grads, n):
        full = [None] * n
        for k, i in enumerate(node._metadata["index"]):
            full[i] = grads[k]
        return tuple(full)

    def _call_hooks(self, grad_input):
        for hook in self.user_hooks:
            out = hook(self.module, grad_input, self.grad_outputs)
            if out is None:
                continue
            out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if len(out) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                    f"expected {len(grad_input)}"
                )
            grad_input = out
        return grad_input

    def setup_input_hook(self, args: tuple) -> tuple:
        new, node = _identity(args)
        self.n_inputs = len(args)
        self.input_node = node
        if node is None:
            return args

        def post(grad_inputs, grad_outputs):
            full = self._pack(node, grad_inputs, self.n_inputs)
            # NOTE: no grad_output seen (a gradient that reached the inputs without passing the
            # outputs' node, e.g. an output that is not a Tensor or tuple): torch skips the hooks
            if not self.user_hooks or self.grad_outputs is None:
                return None
            res = self._call_hooks(full)
            self.grad_outputs = None  # each backward through the outputs sets it afresh
            return tuple(res[i] for i in node._metadata["index"])

        node.register_hook(post)
        return tuple(new)

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not isinstance(values, (tuple, list)):
            return result
        new, node = _identity(tuple(values))
        if node is None:
            return result

        def pre(grad_outputs):
            full = list(self._pack(node, grad_outputs, len(values)))
            for hook in self.user_pre_hooks:
                out = hook(self.module, tuple(full))
                if out is not None:
                    out = list(out) if isinstance(out, (tuple, list)) else [out]
                    if len(out) != len(full):
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, got "
                            f"{len(out)}, but expected {len(full)}"
                        )
                    full = out
            self.grad_outputs = tuple(full)
            if self.input_node is None and self.user_hooks:
                for hook in self.user_hooks:
                    res = hook(self.module, (None,) * self.n_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple)
                                                and all(r is None for r in res)):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient should "
                            "always return None or None for all gradients."
                        )
            return tuple(full[i] for i in node._metadata["index"])

        node.register_prehook(pre)
        if single:
            return new[0]
        if type(result) is tuple:
            return tuple(new)
        return type(result)(*new)  # a namedtuple


def call_with_hooks(module, args, kwargs):
    """``Module.__call__`` when any hook is registered (``torch.nn.Module._call_impl``)."""
    for hook_id, hook in (*_global_forward_pre_hooks.items(), *module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            res = hook(module, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {res}."
                    )
                args, kwargs = res
        else:
            res = hook(module, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
    bw_hook = None
    full_hooks, legacy_hooks = _split_backward_hooks(module)
    pre_hooks = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
    if full_hooks or pre_hooks:
        bw_hook = BackwardHook(module, full_hooks, pre_hooks)
        args = bw_hook.setup_input_hook(args)
    forward_hooks = (*_global_forward_hooks.items(), *module._forward_hooks.items())
    try:
        result = module.forward(*args, **kwargs)
    except Exception:
        # hooks registered with always_call=True still see the call (their results are dropped)
        for hook_id, hook in forward_hooks:
            if (hook_id in module._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called):
                _run_forward_hook(module, hook_id, hook, args, kwargs, None)
        raise
    for hook_id, hook in forward_hooks:
        res = _run_forward_hook(module, hook_id, hook, args, kwargs, result)
        if res is not None:
            result = res
    if bw_hook is not None:
        if not isinstance(result, (Tensor, tuple)):
            warn_user(
                "For backward hooks to be called, module output should be a Tensor or a tuple of "
                f"Tensors but received {type(result)}", stacklevel=3,
            )
        else:
            result = bw_hook.setup_output_hook(result)
    if legacy_hooks:
        from . import _module_hooks_legacy

        _module_hooks_legacy.attach(module, args, result, legacy_hooks)
    return result


def _split_backward_hooks(module):
    if not (_global_backward_hooks or module._backward_hooks):
        return [], []
    from . import _module_hooks_legacy

    return _module_hooks_legacy.split(module)


def _run_forward_hook(module, hook_id, hook, args, kwargs, result):
    if hook_id in module._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
        return hook(module, args, kwargs, result)
    return hook(module, args, result)
