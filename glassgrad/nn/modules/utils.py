"""``torch.nn.modules.utils``: the argument parsers layer code imports (``_pair`` ...) and
``consume_prefix_in_state_dict_if_present``. Plain Python, no tensors."""

from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A parser: an iterable becomes a tuple, anything else is repeated ``n`` times
    (``_pair(3) == (3, 3)``, ``_pair([1, 2]) == (1, 2)``)."""

    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed with each entry repeated ``n`` times: a layer's padding as ``F.pad`` takes
    it."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's ``output_size`` with each None taken from ``defaults`` (the input's
    trailing sizes). Raises ValueError when the input has too few dims."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` in place, and from its ``_metadata``
    if any (``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``): how a
    checkpoint of ``DataParallel(model)`` (keys ``module.*``) loads into ``model``."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # '' is the wrapper itself; 'module' (no dot) and 'module.*' are the wrapped model
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
