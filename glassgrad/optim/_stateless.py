"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state for the
length of a ``with`` block (``torch.optim.swap_in_optimizer_params_and_state``, new in 2.13)."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any

from ..tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter "
            f"ids to per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids."
        )
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            f"{_NAME} requires per-parameter optimizer state entries to be dictionaries."
        )
    return state


def _check_group(index: int, live: dict, saved) -> list:
    """The packed ids of ``saved``, a state-dict group checked against the live group."""
    if not isinstance(saved, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = saved.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
            "keyed by packed parameter ids."
        )
    if len(ids) != len(live["params"]):
        raise RuntimeError(
            f"swapin_optim_state param group {index} has a different number of params than the "
            "live optimizer param group."
        )
    only_saved = [k for k in saved if k not in live]
    only_live = [k for k in live if k not in saved]
    if only_saved or only_live:
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
            f"the live optimizer group keys for group {index}. Keys only in swap-in: "
            f"{only_saved}. Keys only in live: {only_live}."
        )
    return ids


def _plan(optimizer, parameters: dict, optim_state) -> tuple[dict, list]:
    """Validate the arguments; return the packed state and ``(live group, saved group, tensors)``
    per group, tensors taken from ``parameters`` in group order."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(optim_state.get("state"))
    saved_groups = optim_state.get("param_groups")
    if not isinstance(saved_groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
            f"dicts, got {type(saved_groups).__name__}."
        )
    if len(saved_groups) != len(optimizer.param_groups):
        raise RuntimeError(
            "swapin_optim_state has a different number of parameter groups than the live "
            "optimizer."
        )
    tensors = list(parameters.values())
    plan, used, start = [], set(), 0
    for index, (live, saved) in enumerate(zip(optimizer.param_groups, saved_groups)):
        ids = _check_group(index, live, saved)
        used.update(ids)
        if start + len(ids) > len(tensors):
            raise RuntimeError(
                f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                "ordering."
            )
        plan.append((live, saved, tensors[start:start + len(ids)]))
        start += len(ids)
    extra = [k for k in state if k not in used]
    if extra:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter "
            f"ids from param_groups[*]['params']; got extra keys {extra!r}."
        )
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]):
    """Within the block, ``optimizer`` steps ``swapin_parameters`` (a dict of Tensors in the order
    of the optimizer's parameters, e.g. ``dict(model.named_parameters())``) with the state and
    group options of ``swapin_optim_state`` (an ``optimizer.state_dict()``); on exit the live
    parameters, options and state come back. Unlike ``load_state_dict`` the parameters are
    swapped too. In-place updates reach the tensors of ``swapin_optim_state``; new entries and
    re-bound tensors stay local to the block.

    Raises RuntimeError when the optimizer has no state yet, or when the state dict's layout
    (groups, ids, option keys) does not match the optimizer's
    (``torch.optim.swap_in_optimizer_params_and_state``).

    Example::

        >>> with glassgrad.optim.swap_in_optimizer_params_and_state(opt, params, opt_sd):
        ...     opt.step()                      # updates params and opt_sd's tensors in place
    """
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]  # keeps each params list
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, saved, tensors in plan:
            live.update({k: v for k, v in saved.items() if k != "params"})
            live["params"] = tensors
            for tensor, packed_id in zip(tensors, saved["params"]):
                swapped[tensor] = dict(state.get(packed_id, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
