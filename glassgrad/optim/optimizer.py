"""``Optimizer``: parameter groups, per-parameter state, step hooks and state dicts
(``torch.optim.Optimizer``).

NOTE [Optimizer updates]: the concrete optimizers update the raw arrays (``p._array``) with NumPy
in-place kernels that follow PyTorch's for-loop ("single tensor") formulas op for op, so trajectories
match torch's to rounding. Each buffer an update writes gets its version counter bumped once per
in-place op PyTorch would run (``_bump``): a parameter modified by ``step()`` after it was saved
for backward still raises PyTorch's "modified by an inplace operation" error.

NOTE [Skipped steps]: ``step()`` increments ``optimizer._step_count`` when it returns (real steps
only); an LR scheduler wraps ``optimizer.step`` so that calling it sets ``optimizer._opt_called``,
as in PyTorch. A caller that decides not to step, such as ``amp.GradScaler`` after inf/NaN
gradients, calls ``optimizer._note_skipped_step()`` instead: it counts no step and leaves
``_opt_called`` alone, so an LR scheduler stepped after a first step that was skipped warns that
``optimizer.step()`` was not called, as PyTorch's does (its scaler never calls the wrapped step).
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from ..autograd.graph import RemovableHandle
from ..tensor import Tensor
from .._user_warning import warn_user
from ._optimizer_util import (  # noqa: F401 - the optimizers import them from here
    _bump,
    _scalar_dtype,
    _step_tensor,
    _zeros_like,
    _to_float,
    _lerp_,
    _grad_view,
    _sparse_grad_view,
    _dense_grads,
    _check_lr,
    _check_betas,
    _check_nonnegative,
    _weight_decay,
    _update_moments,
    _restore_state,
    _use_grad_for_differentiable,
    _evaluate_closure,
    _check_fused,
    _check_capturable,
    _typename,
    _CAPTURABLE_DEVICES,
)

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]

_global_optimizer_pre_hooks: dict = OrderedDict()
_global_optimizer_post_hooks: dict = OrderedDict()


class _RequiredParameter:
    """Marks a default that every parameter group must give (``torch.optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before every optimizer's ``step``; it may return new
    ``(args, kwargs)`` (``torch.optim.optimizer.register_optimizer_step_pre_hook``)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's ``step``
    (``torch.optim.optimizer.register_optimizer_step_post_hook``)."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class Optimizer:
    """Base class of all optimizers (``torch.optim.Optimizer``).

    ``params`` is an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter
    groups with their own options, e.g. ``[{"params": a}, {"params": b, "lr": 1e-3}]``);
    ``defaults`` fills options a group leaves out. Raises ValueError for an empty list, a non-leaf
    Tensor or a parameter in two groups; TypeError when ``params`` is a single Tensor or a set.
    Subclasses implement ``step(closure=None)``.

    Example::

        >>> opt = glassgrad.optim.SGD([w], lr=0.1)
        >>> loss = (w * w).sum(); opt.zero_grad(); loss.backward(); opt.step()
    """

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = OrderedDict()
        self._optimizer_step_post_hooks: dict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_state_dict_post_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: dict = OrderedDict()
        self._step_count = 0
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {_typename(params)}"
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.__dict__.setdefault("_step_count", 0)
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # --- step and its hooks ------------------------------------------------------------------
    @staticmethod
    def profile_hook_step(func):
        """Wrap a ``step`` so it runs the global and per-optimizer pre/post hooks, and counts
        real steps (see NOTE [Skipped steps])."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]  # NOTE: hooks see ``args`` with the optimizer first, as in PyTorch
            if self.__dict__.get("_in_step", False):  # a subclass step calling super().step()
                return func(*args, **kwargs)
            for pre_hook in chain(
                _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
            ):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), but "
                            f"got {result}."
                        )
            self._in_step = True
            try:
                out = func(*args, **kwargs)
            finally:
                self._in_step = False
            self._step_count = self.__dict__.get("_step_count", 0) + 1
            self._last_step_skipped = False
            for post_hook in chain(
                self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
            ):
                post_hook(self, args, kwargs)
            return out

        wrapper.hooked = True
        return wrapper

    def _patch_step_function(self) -> None:
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = self.profile_hook_step(cls.step)

    def _note_skipped_step(self) -> None:
        """Record a ``step()`` that a caller deliberately skipped (``amp.GradScaler`` on inf/NaN
        gradients): ``_step_count`` and ``_opt_called`` are unchanged (PyTorch's LR-scheduler
        warning still fires); a scheduler stepped with ``scaler=`` does not advance."""
        self._last_step_skipped = True

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before each ``step``; may return new ``(args, kwargs)``
        (``torch.optim.Optimizer.register_step_pre_hook``)."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after each ``step``
        (``torch.optim.Optimizer.register_step_post_hook``)."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def step(self, closure=None):
        """Perform one optimization step; return ``closure()``'s loss when a closure is given."""
        raise NotImplementedError

    # --- state dicts -------------------------------------------------------------------------
    def _register(self, store: OrderedDict, hook, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(store)
        store[handle.id] = hook
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict()``."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` after ``state_dict()``; may return a new dict."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` before ``load_state_dict``; may return a new dict."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``, PyTorch's
        layout: parameters are numbered in group order; state tensors are not copied."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        # NOTE: state['step'] keeps its dtype; other floating state takes the parameter's dtype
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (also one converted from PyTorch). Raises ValueError when the
        number of groups or of parameters per group differs."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param, value, param_id=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key
                )
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # --- gradients and groups ----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset ``.grad`` of every parameter: to None (default) or to zeros in place
        (``torch.optim.Optimizer.zero_grad``)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()
                if p._sparse:  # a sparse leaf's .grad is read from its values: store it back
                    p._grad = grad

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (``torch.optim.Optimizer.add_param_group``).

        Raises TypeError for a non-dict, a set of parameters or a non-Tensor; ValueError for a
        non-leaf Tensor, a missing required option, or a parameter already in another group."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.grad_fn is None or param._retains_grad
            ):
                raise ValueError(
                    "can't optimize a non-leaf Tensor\nglassgrad: this tensor was made by "
                    f"{param.grad_fn.name()}; optimize the leaf it was computed from, or make it "
                    "a leaf with .detach().requires_grad_()."
                )

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter "
                    f"{name}"
                )
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            warn_user(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )

        param_set: set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param "
                    f"group {which} to the optimizer"
                )
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
