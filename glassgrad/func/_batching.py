"""vmap's machinery: levels, the primitives that add and remove a batch dim, the per-primitive
fallback, the engine hook for gradients of unbatched inputs, and vmap's randomness modes.

NOTE [Dead levels]: autograd records on logical tensors (NOTE [Batched arrays]). A gradient that
reaches an input *not* batched at some level L must be summed over L when L's ``vmap`` has already
returned (``grad(vmap(f))`` with a closed-over weight: the weight gets the sum over the batch), but
kept when L is still running (``vmap(grad(f))``: per-sample gradients; ``vmap(vjp_fn)`` in jacrev:
one gradient per basis vector). The engine calls ``reduce_grad`` for every batched gradient it
delivers; it compares the gradient's levels with the input's (recorded in the node's metadata).
"""

from __future__ import annotations

import itertools
import sys
import threading

from ..autograd import engine
from ..ops import primitive
from ..ops.primitive import Primitive
from ._batched_array import BatchedArray, add_level, remove_level
from ._batched_rules import batched_forward

_levels = itertools.count(1)


class _State(threading.local):
    def __init__(self):
        self.active: list = []  # (level, batch_size) of the vmap calls now running, innermost last


_state = _State()


def new_level() -> int:
    """A fresh vmap level: later (inner) calls get higher numbers, so they wrap outer ones."""
    return next(_levels)


def active_levels() -> set:
    return {lvl for lvl, _ in _state.active}


class AddBatchDim(Primitive):
    """Dim ``dim`` of ``x`` becomes the hidden batch dim of vmap level ``level``."""

    @staticmethod
    def forward(xp, x, *, level, dim, size):
        return add_level(x, level, dim)

    @staticmethod
    def backward(grad, *, level, dim, size):
        return (RemoveBatchDim.apply(grad, level=level, dim=dim, size=size),)


class RemoveBatchDim(Primitive):
    """The hidden batch dim of ``level`` becomes dim ``dim`` again (repeated if ``x`` has none)."""

    @staticmethod
    def forward(xp, x, *, level, dim, size):
        return remove_level(x, level, dim, size)

    @staticmethod
    def backward(grad, *, level, dim, size):
        return (AddBatchDim.apply(grad, level=level, dim=dim, size=size),)


def reduce_grad(grad, in_shape):
    """NOTE [Dead levels]: sum ``grad`` over the finished vmap levels its input does not have."""
    arr = grad._array
    if type(arr) is not BatchedArray or in_shape is None:
        return grad
    keep = getattr(in_shape, "levels", ())
    live = active_levels()
    for lvl in arr.levels:
        if lvl not in keep and lvl not in live:
            size = _level_size(grad._array, lvl)
            grad = RemoveBatchDim.apply(grad, level=lvl, dim=0, size=size).sum(0)
    return grad


def _level_size(arr, level):
    while type(arr) is BatchedArray:
        if arr.level == level:
            return arr.phys.shape[0]
        arr = arr.phys
    raise AssertionError("level not found")  # pragma: no cover


primitive._vmap_fallback = batched_forward
sys.modules[__name__.rsplit(".", 2)[0] + ".tensor"]._BatchedArray = BatchedArray
engine._reduce_batched_grad = reduce_grad


# --- randomness ---------------------------------------------------------------------------------
# position of the ``size`` argument of the generator engine's samplers (_sampling.Samplers)
_SIZE_ARG = {
    "uniform": 0, "normal": 0, "integers": 0, "random": 0, "bernoulli": 0, "exponential": 0,
    "geometric": 0, "log_normal": 0, "cauchy": 0, "permutation": -1, "multinomial": -1,
    "poisson": -1,
}


class RandomProxy:
    """Stands in for the default generator's engine inside ``vmap``: 'error' refuses
    to sample, 'different' draws one sample per batch entry (a batched array)."""

    def __init__(self, inner, level: int, size: int, mode: str):
        self._inner = inner
        self._level = level
        self._size = size
        self._mode = mode

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if name not in _SIZE_ARG:
            return attr
        if self._mode == "error":
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either use "
                "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                "operation out of vmap"
            )
        pos = _SIZE_ARG[name]
        if pos < 0:
            raise RuntimeError(
                f"vmap: randomness='different' is not supported for Generator.{name} in glassgrad;"
                " use randomness='same' or draw the samples outside vmap"
            )

        def sample(*args, **kwargs):
            args = list(args)
            if "size" in kwargs:
                size = kwargs.pop("size")
            elif len(args) > pos:
                size = args.pop(pos)
            else:
                size = None
            size = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
            args.insert(pos, (self._size,) + size)
            out = attr(*args, **kwargs)
            return BatchedArray(out, self._level)

        return sample


class VmapScope:
    """Marks a vmap level as running and installs its randomness mode on the default generator."""

    def __init__(self, level: int, size: int, randomness: str):
        self.level, self.size, self.randomness = level, size, randomness
        self._gen = self._prev = self._proxy = None

    def __enter__(self):
        _state.active.append((self.level, self.size))
        if self.randomness != "same":
            from .. import _factories

            self._gen = _factories.default_generator
            self._prev = self._gen._rng
            self._proxy = RandomProxy(self._prev, self.level, self.size, self.randomness)
            self._gen._rng = self._proxy
        return self

    def __exit__(self, *exc):
        _state.active.pop()
        if self._gen is not None and self._gen._rng is self._proxy:
            self._gen._rng = self._prev
