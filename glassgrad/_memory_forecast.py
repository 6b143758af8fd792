"""``glassgrad.memory.forecast``: the memory of one forward + backward, measured on zero-filled inputs.

A dry run on shapes alone would need a shape rule per op; running the real code on zeros of the
given shapes gives exactly the buffers a real run allocates (same shapes, same dtypes, same ops),
while forward hooks on every module note the bytes each one saves for backward. Data-dependent
shapes (``nonzero``, ``masked_select``, boolean indexing) see zeros, and so may differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import memory as _memory
from .autograd import graph as _graph
from .autograd.diagnostics import format_bytes, saved_bytes
from .autograd.graph import AccumulateGrad
from .tensor import Tensor


@dataclass
class Forecast:
    """What ``forecast`` predicts; byte counts follow ``memory_allocated()``'s rules."""

    peak_bytes: int  # max_memory_allocated() of a run that starts now, inputs freshly allocated
    peak_increase_bytes: int  # the peak above memory_allocated() with the inputs allocated
    forward_peak_increase_bytes: int  # the same, up to the end of forward
    saved_bytes: int  # kept for backward when forward ends (parameters' own buffers excluded)
    gradient_bytes: int  # new .grad buffers (a first step, or after zero_grad(set_to_none=True))
    per_module: dict = field(default_factory=dict)  # module name -> bytes saved in its calls

    def __str__(self) -> str:
        head = (f"forecast: peak {format_bytes(self.peak_bytes)} "
                f"(+{format_bytes(self.peak_increase_bytes)} over the inputs; forward "
                f"+{format_bytes(self.forward_peak_increase_bytes)}), saved for backward "
                f"{format_bytes(self.saved_bytes)}, gradients {format_bytes(self.gradient_bytes)}")
        lines = [head]
        width = max((len(k) for k in self.per_module), default=6)
        for name, nbytes in self.per_module.items():
            lines.append(f"  {name:<{width}}  {format_bytes(nbytes):>10} saved")
        return "\n".join(lines)


def forecast(fn, *example_shapes, dtype=None, backward: bool = True) -> Forecast:
    """Predict peak memory and per-module saved bytes of ``fn(*inputs)`` (and its backward) by
    running it once on zero-filled inputs of ``example_shapes`` (tuples, ``Size`` or Tensors, whose
    shape and dtype are used); ``dtype`` defaults to the default float dtype. ``fn`` is a Module or
    a callable; it should return the loss (otherwise its sum is differentiated). Gradients and the
    peak counter are restored afterwards. glassgrad's addition; PyTorch has no counterpart.

    Example::

        >>> f = glassgrad.memory.forecast(lambda x: model(x).pow(2).mean(), (64, 784))
        >>> f.peak_increase_bytes, f.per_module["0"]   # for an nn.Sequential model
    """
    from . import _factories
    from .nn._module_hooks import register_module_forward_hook, register_module_forward_pre_hook

    was_on = _memory.is_tracking()
    _memory._ensure()
    track = _memory._Track
    inputs = [_factories.zeros(*_shape_of(s), dtype=_dtype_of(s, dtype)) for s in example_shapes]
    names = _module_names(fn)
    per_module: dict = {}
    open_calls: list = []

    def pre(module, args):
        if id(module) not in names:  # a function's modules are named by class, in call order
            names[id(module)] = _fresh_name(type(module).__name__, names)
        open_calls.append(next(_graph._sequence))

    def post(module, args, output):
        start = open_calls.pop()
        nbytes = saved_bytes(_nodes_since(_tensors(output), start))
        name = names[id(module)]
        per_module[name] = per_module.get(name, 0) + nbytes

    saved_peak = track.peak
    base = track.current
    track.peak = base
    handles = (register_module_forward_pre_hook(pre), register_module_forward_hook(post))
    try:
        with np.errstate(all="ignore"):
            out = fn(*inputs)
        forward_peak = track.peak
        outs = _tensors(out)
        graph = _nodes_since(outs, -1)
        kept = saved_bytes(graph)
        grad_bytes = 0
        if backward and outs and outs[0]._requires_grad:
            loss = outs[0] if outs[0]._array.size == 1 else outs[0].sum()
            leaves = [n.variable for n in graph if type(n) is AccumulateGrad]
            old = [(v, v._grad) for v in leaves]
            for v in leaves:
                v._grad = None
            try:
                with np.errstate(all="ignore"):
                    loss.backward()
                grad_bytes = sum(v._grad._array.nbytes for v in leaves if v._grad is not None)
            finally:
                for v, g in old:
                    v._grad = g
        peak = track.peak
    finally:
        for h in handles:
            h.remove()
        track.peak = max(saved_peak, track.current)
    if not was_on:
        _memory.set_tracking(False)
    return Forecast(peak, peak - base, forward_peak - base, kept, grad_bytes,
                    {n: per_module[n] for n in sorted(per_module, key=_order(names))})


def _shape_of(s) -> tuple:
    if isinstance(s, Tensor):
        return tuple(s.shape)
    if isinstance(s, int):
        return (s,)
    return tuple(s)


def _dtype_of(s, dtype):
    if dtype is not None:
        return dtype
    return s.dtype if isinstance(s, Tensor) else None


def _module_names(fn) -> dict:
    if hasattr(fn, "named_modules"):
        return {id(m): (name or type(m).__name__) for name, m in fn.named_modules()}
    return {}


def _fresh_name(base: str, names: dict) -> str:
    taken = set(names.values())
    if base not in taken:
        return base
    k = 2
    while f"{base}#{k}" in taken:
        k += 1
    return f"{base}#{k}"


def _order(names: dict):
    rank = {name: i for i, name in enumerate(names.values())}
    return lambda name: rank.get(name, len(rank))


def _tensors(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _nodes_since(tensors, start: int) -> set:
    """Nodes behind ``tensors`` created after sequence number ``start``, and the leaves they use."""
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None and t.grad_fn._seq > start]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen and nxt._seq > start:
                seen.add(nxt)
                stack.append(nxt)
    return seen
