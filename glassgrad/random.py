"""``glassgrad.random`` (``torch.random``): the default generator's seed and state, and
``fork_rng``. The generator is torch's CPU mt19937 (NOTE [Torch's stream] in _generator.py)."""

from __future__ import annotations

import contextlib

from ._generator import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Restore the default generator's state on leaving the block (``torch.random.fork_rng``):
    draws inside do not move the stream outside. ``enabled=False`` and ``device_type='meta'``
    fork nothing; glassgrad runs on the CPU, so ``devices`` has no device stream to fork.

    Example::

        >>> with glassgrad.random.fork_rng():
        ...     noise = glassgrad.randn(3)  # the next draw outside is as if this never ran
    """
    if device_type == "meta" or not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator():
    """The generator of a DataLoader thread worker, else None (``torch.random.
    thread_safe_generator``). glassgrad's DataLoader worker is a process-style one (its stream
    replaces the default generator's while it runs), so this is None: samplers called with
    ``generator=None`` use that stream, as in a torch process worker."""
    return None
