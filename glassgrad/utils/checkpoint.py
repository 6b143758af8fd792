"""Activation checkpointing: trade compute for memory (``torch.utils.checkpoint``).

``checkpoint(fn, *args)`` keeps none of ``fn``'s intermediate tensors for backward; backward runs
``fn`` again to get them. Two variants, as in PyTorch:

- ``use_reentrant=False`` (the default here; see ``checkpoint``): ``fn`` runs normally, so the graph
  has all its nodes, but under saved-tensor hooks whose ``pack`` keeps only an index and the
  metadata. The first ``unpack`` in a backward re-runs ``fn`` (RNG state restored, grad enabled)
  and collects the same tensors in the same order. Works with ``autograd.grad``, keyword arguments,
  parameters closed over by ``fn``, nested checkpoints and double backward; recomputed tensors that
  differ in shape or dtype raise ``CheckpointError``.
- ``use_reentrant=True``: a custom ``autograd.Function`` runs ``fn`` under ``no_grad`` and records
  one ``CheckpointFunctionBackward`` node; its backward re-runs ``fn`` with grad enabled and calls
  ``backward()`` inside (so parameters get ``.grad`` directly: use ``.backward()``, not
  ``autograd.grad``; no double backward).
"""

from __future__ import annotations

import contextlib

from .. import _factories
from ..autograd import engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..amp.autocast import autocast as _autocast
from ..amp.autocast import state as _autocast_state
from ..autograd.graph import _NEEDED, saved_tensors_hooks
from ..autograd.graph_hooks import _engine_task
from ..tensor import Tensor
from .._user_warning import warn_user

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "set_checkpoint_debug_enabled",
           "set_checkpoint_early_stop"]

_EARLY_STOP = [True]
_DEBUG = [None]
_DEBUG_HINT = (
    "\nYou are seeing this error because you passed `debug=True` to checkpoint (or set "
    "set_checkpoint_debug_enabled(True)). glassgrad records no operator trace: compare the "
    "function's code paths between the two calls (the positions above count saved tensors in "
    "the order the ops saved them).\n"
)


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within the block, every non-reentrant checkpoint behaves as if given ``debug=enabled``
    (None: each call's own ``debug``) (``torch.utils.checkpoint.set_checkpoint_debug_enabled``)."""
    outer = _DEBUG[0]
    _DEBUG[0] = enabled
    try:
        yield
    finally:
        _DEBUG[0] = outer


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Within the block, non-reentrant checkpoints recompute the whole function in backward
    (``enable=False``) instead of stopping once every saved tensor is recomputed (the default;
    ``torch.utils.checkpoint.set_checkpoint_early_stop``). The setting is taken when
    ``checkpoint`` is called, so it holds for backwards run after the block has exited."""
    outer = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = outer


class _StopRecomputation(BaseException):
    """Raised from the recompute's pack hook once every saved tensor is back (early stop);
    BaseException so that no ``except Exception`` inside the user's function swallows it."""


class CheckpointError(RuntimeError):
    """Recomputation in backward did not reproduce the forward (``torch.utils.checkpoint``)."""


def _meta(t) -> dict:
    from ..backend import device

    return {"shape": t.shape, "dtype": t.dtype, "device": device("cpu")}


_CHECKS = {"default": _meta, "none": lambda t: None}


class _fork_rng:
    """Run with the default generator at ``state``; restore the surrounding state after."""

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        if self.state is not None:
            self.outer = _factories.get_rng_state()
            _factories.set_rng_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            _factories.set_rng_state(self.outer)


class _Frame:
    """One non-reentrant checkpoint call: what is needed to recompute, and the recomputed
    tensors (each dropped once unpacked; a later backward recomputes again)."""

    def __init__(self, fn, args, kwargs, rng_state, metadata_fn, early_stop, debug):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.early_stop = early_stop
        self.rng_state = rng_state
        self.metadata_fn = metadata_fn
        self.metas: list = []
        self.recomputed: dict = {}  # {backward's key (graph_hooks._engine_task): {index: tensor}}
        self.autocast = (_autocast_state.enabled["cpu"], _autocast_state.dtype["cpu"])
        self.debug = debug
        self.forward_completed = False

    def pack(self, t):
        self.metas.append(self.metadata_fn(t))
        return (self, len(self.metas) - 1)

    @staticmethod
    def unpack(handle):
        frame, idx = handle
        task = _engine_task()
        key = None if task is None else task[0]
        # NOTE: one set of recomputed tensors per backward (a hook may run another backward
        # through the same checkpoint halfway through this one)
        recomputed = frame.recomputed.get(key)
        if recomputed is None or key is None:
            recomputed = frame.recomputed[key] = frame.recompute()
            while len(frame.recomputed) > 8:  # forget old backwards (dicts keep insertion order)
                del frame.recomputed[next(iter(frame.recomputed))]
        elif idx not in recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do "
                "so only once. Otherwise please open an issue with details on your use case.\n"
                "glassgrad: a recomputed tensor is dropped once it is unpacked; read "
                "ctx.saved_tensors once and keep the tuple."
            )
        return recomputed.pop(idx)

    def recompute(self) -> dict:
        captured: list = []
        ignored: list = []
        expected = len(self.metas)

        def pack(t):
            if len(captured) >= expected:
                if not self.forward_completed:  # backward inside the checkpointed function
                    ignored.append(t)
                    return t.detach()
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass.\nglassgrad: the checkpointed "
                    "function must run the same ops each time it is called."
                )
            captured.append(t)
            if self.early_stop and len(captured) == expected:
                raise _StopRecomputation
            # NOTE: the function may itself run backward during recomputation, so the tensor is
            # handed back; detached, because an output is packed before apply sets its grad_fn
            # (its node would hold it and it the node: a cycle that outlives the graph)
            return t.detach()

        enabled, dtype = self.autocast
        with _fork_rng(self.rng_state), enable_grad(), saved_tensors_hooks(pack, lambda t: t), \
                _autocast("cpu", dtype=dtype, enabled=enabled):
            try:
                self.fn(*self.args, **self.kwargs)
            except _StopRecomputation:
                pass
        if len(captured) != expected and not ignored:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {expected}\n"
                f"Number of tensors saved during recomputation: {len(captured)}.\n"
            )
        bad = [(i, m, self.metadata_fn(t)) for i, (m, t) in enumerate(zip(self.metas, captured))
               if m != self.metadata_fn(t)]
        if bad:
            lines = "".join(f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: "
                            f"{r}\n" for i, m, r in bad)
            if self.debug:
                lines += _DEBUG_HINT
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{lines}.\nglassgrad: the "
                "function gave different shapes or dtypes when re-run in backward; make it "
                "deterministic in its shapes (no data-dependent sizes, no state changed between "
                "the calls)."
            )
        return {i: t.detach() if t.requires_grad else t for i, t in enumerate(captured)}


class CheckpointFunction(Function):
    """The reentrant variant's node (``torch.utils.checkpoint.CheckpointFunction``)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warn_user("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=4)
        ctx.run_function = run_function
        ctx.rng_state = _factories.get_rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if _NEEDED[0] is not None:  # set by the engine while autograd.grad / backward(inputs=)
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the `inputs` "
                "argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _fork_rng(ctx.rng_state):
            detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                        for a in inputs]
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        roots = [o for o, _ in pairs]
        seeds = [g if g is not None else o.detach() * 0 for o, g in pairs]
        engine.backward(roots, seeds)
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in detached)


def checkpoint(function, *args, use_reentrant=None, context_fn=None,
               determinism_check: str = "default", debug: bool = False, **kwargs):
    """``function(*args, **kwargs)`` without keeping its intermediate tensors for backward, which
    recomputes them (``torch.utils.checkpoint.checkpoint``).

    ``preserve_rng_state=True`` (a keyword) replays the RNG state, so dropout draws the same mask;
    ``determinism_check="none"`` skips the shape/dtype check that raises ``CheckpointError``.
    ``use_reentrant`` should be passed: with None it warns like PyTorch and, unlike PyTorch 2.x
    (which still defaults to the reentrant variant), uses the non-reentrant one, which supports
    everything the reentrant one does and more. See the module docstring for the two variants.

    Example: ``y = checkpoint(block, x, use_reentrant=False)``.
    """
    if use_reentrant is None:
        warn_user(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.\nglassgrad: using "
            "use_reentrant=False.",
            stacklevel=2,
        )
        use_reentrant = False
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not None or debug:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in _CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_CHECKS)}, but got {determinism_check}"
        )
    if context_fn is not None:
        raise NotImplementedError("glassgrad: checkpoint(context_fn=...) is not supported")
    state = _factories.get_rng_state() if preserve else None
    frame = _Frame(function, args, kwargs, state, _CHECKS[determinism_check], _EARLY_STOP[0],
                   debug if _DEBUG[0] is None else _DEBUG[0])
    with saved_tensors_hooks(frame.pack, _Frame.unpack):
        out = function(*args, **kwargs)
    frame.forward_completed = True
    return out


def checkpoint_sequential(functions, segments: int, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in order, checkpointing each of the first
    ``segments - 1`` equal chunks; the last chunk runs normally
    (``torch.utils.checkpoint.checkpoint_sequential``)."""
    if use_reentrant is None:
        warn_user(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
            "the differences between the two variants.\nglassgrad: using use_reentrant=False.",
            stacklevel=2,
        )
        use_reentrant = False
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
