"""``Module.state_dict`` / ``load_state_dict`` with PyTorch's keys, order and error messages."""

from __future__ import annotations


from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .parameter import is_lazy
from .._user_warning import warn_user

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match (``torch.nn.modules.module``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _has_extra_state(module) -> bool:
    from .module import Module

    return type(module).get_extra_state is not Module.get_extra_state


def save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
    for name, param in self._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in self._buffers.items():
        if buf is not None and name not in self._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if _has_extra_state(self):
        destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()


def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
    """An ordered dict of every parameter and persistent buffer by dotted name (detached unless
    ``keep_vars``), in PyTorch's order: a module's own entries, then its children's."""
    if args:  # PyTorch's deprecated positional form state_dict(destination, prefix, keep_vars)
        warn_user(
            "Positional args are being deprecated, use kwargs instead. Refer to "
            "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
            " for details.", FutureWarning, stacklevel=2,
        )
        destination = args[0]
        if len(args) > 1:
            prefix = args[1]
        if len(args) > 2:
            keep_vars = args[2]
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    metadata = getattr(destination, "_metadata", None)
    local_metadata = {"version": self._version}
    if metadata is not None:
        metadata[prefix[:-1]] = local_metadata
    for hook in self._state_dict_pre_hooks.values():
        hook(self, prefix, keep_vars)
    self._save_to_state_dict(destination, prefix, keep_vars)
    for name, module in self._modules.items():
        if module is not None:
            module.state_dict(destination=destination, prefix=prefix + name + ".",
                              keep_vars=keep_vars)
    for hook in self._state_dict_hooks.values():
        result = hook(self, destination, prefix, local_metadata)
        if result is None:
            continue
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("state_dict post-hook must return None")
        destination = result
    return destination


def load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                         unexpected_keys, error_msgs) -> None:
    """Copy this module's own entries from ``state_dict`` (PyTorch's ``_load_from_state_dict``)."""
    for hook in self._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    persistent = {k: v for k, v in self._buffers.items()
                  if k not in self._non_persistent_buffers_set}
    local_state = {k: v for k, v in [*self._parameters.items(), *persistent.items()]
                   if v is not None}
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        value = state_dict[key]
        if not isinstance(value, Tensor):
            error_msgs.append(
                f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                f"object from checkpoint but received {type(value)}"
            )
            continue
        # NOTE: an uninitialized (lazy) entry has no shape; a lazy module's load pre-hook has
        # already materialized it to the checkpoint's shape, and lazy-into-lazy copies nothing
        if not is_lazy(param) and value.shape != param.shape:
            error_msgs.append(
                f"size mismatch for {key}: copying a param with shape {value.shape} from "
                f"checkpoint, the shape in current model is {param.shape}."
            )
            continue
        try:
            if local_metadata.get("assign_to_params_buffers", False):
                _assign(self, name, param, value)
                continue
            if is_lazy(param):
                continue
            with no_grad():
                param.copy_(value)
        except Exception as ex:  # noqa: BLE001 - PyTorch reports any failure the same way
            error_msgs.append(
                f'While copying the parameter named "{key}", whose dimensions in the model are '
                f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
                f"exception occurred : {ex.args}."
            )
    from .module import Module

    extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
    # NOTE: torch keys loading on set_extra_state being overridden (saving on get_extra_state)
    if type(self).set_extra_state is not Module.set_extra_state:
        if extra_key in state_dict:
            self.set_extra_state(state_dict[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in state_dict:
        unexpected_keys.append(extra_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                head = key[len(prefix):].split(".", 1)
                if len(head) > 1:
                    if head[0] not in self._modules:
                        unexpected_keys.append(key)
                elif head[0] not in local_state:
                    unexpected_keys.append(key)


def _assign(module, name: str, old, value) -> None:
    """``load_state_dict(assign=True)``: the loaded tensor replaces the old one (keeping the
    parameter's ``requires_grad``) instead of being copied into it."""
    from .parameter import Parameter

    if name in module._parameters:
        module._parameters[name] = Parameter(value.detach(), requires_grad=old.requires_grad)
    else:
        module._buffers[name] = value


def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
    """Copy parameters and buffers from ``state_dict`` in place (``torch.nn.Module.load_state_dict``).

    Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``. With ``strict`` (default), missing
    or unexpected keys raise RuntimeError "Error(s) in loading state_dict for <Class>:"; a shape
    mismatch raises in either mode.
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing, unexpected, errors = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    stack = [(self, state_dict, "")]
    while stack:
        module, local, prefix = stack.pop()
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected,
                                     errors)
        children = []
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                sub = {k: v for k, v in local.items() if k.startswith(child_prefix)}
                children.append((child, sub, child_prefix))
        stack.extend(reversed(children))  # NOTE: depth first in registration order, as PyTorch
    result = _IncompatibleKeys(missing, unexpected)
    for module in self.modules():
        for hook in module._load_state_dict_post_hooks.values():
            hook(module, result)
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(self).__name__, "\n\t".join(errors)))
    return result
