"""The engine's gradient hooks: a node's incoming-gradient hooks (tensor hooks, retain_grad,
the node's pre-hooks), AccumulateGrad's post-hooks, and PyTorch's checks on what a hook returns.
Split from ``engine.py`` by concept; ``engine`` re-exports these names for ``engine_arrays``."""

from __future__ import annotations

import sys

from .. import dtypes
from .graph import AccumulateGrad


def _engine():
    # NOTE: engine binds _Tensor late (it never imports tensor.py) and imports this module
    return sys.modules[__package__ + ".engine"]


def _pre_hooks(node, grads, create_graph, runs=True, capture=None):
    """The hooks on ``node``'s incoming gradients: its tensors' hooks and retain_grad, then
    (``capture``: the (captured, slot) that takes the gradient there) if the node ``runs``
    (PyTorch calls them only then) its own pre-hooks."""
    if type(node) is AccumulateGrad:  # the leaf's tensor hooks, then the node's own pre-hooks
        hooks = node.variable._hooks
        if hooks:
            grads[0] = _apply_tensor_hooks(hooks, grads[0])
        if runs and node._pre_hooks:
            for hook in list(node._pre_hooks.values()):
                new = hook(tuple(grads))
                if new is not None:
                    grads = _hook_values(hook, grads, new)
        return grads
    if node._tensor_hooks:
        for nr, hooks in node._tensor_hooks.items():
            if hooks and grads[nr] is not None:
                grads[nr] = _apply_tensor_hooks(hooks, grads[nr])
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            g = grads[nr]
            if t is not None and g is not None:
                g = g if create_graph else g.detach()
                t._grad = _engine()._Tensor._make(g._array.copy()) if t._grad is None else t._grad + g
    if capture is not None:
        _engine()._capture(*capture, grads)
    if runs and node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = _hook_values(hook, grads, new)
    return grads


def _accumulate_post_hooks(node, grads) -> None:
    """An AccumulateGrad node's own post-hooks, after accumulating: ``hook((), grad_outputs)``,
    as PyTorch calls them (the node has no inputs)."""
    for hook in list(node._post_hooks.values()):
        hook((), tuple(grads))


def _apply_tensor_hooks(hooks, g):
    for hook in list(hooks.values()):
        new = hook(g)
        if new is not None:
            g = _hook_value(hook, g, new)
    return g


def _hook_values(hook, old, new) -> list:
    """A pre- or post hook's replacement gradients, checked one by one (``_hook_value``)."""
    new = list(new)
    for k, (a, b) in enumerate(zip(old, new)):
        if a is not None and b is not None:
            new[k] = _hook_value(hook, a, b)
    return new


def _hook_value(hook, old, new):
    """PyTorch's errors for a hook whose gradient changed its size or its dtype."""
    name = getattr(hook, "__name__", hook)
    if new._array.shape != old._array.shape:
        raise RuntimeError(
            f"hook '{name}' has changed the size of value (from {list(old.shape)} to "
            f"{list(new.shape)})"
        )
    if new._array.dtype != old._array.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {dtypes.type_name(old.dtype)} got "
            f"{dtypes.type_name(new.dtype)})\nglassgrad: a gradient keeps its tensor's dtype; "
            f"return it as {old.dtype} (e.g. g.to(grad.dtype)) from the hook."
        )
    return new
