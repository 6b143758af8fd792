"""Per-module events for the profilers: forward spans ``nn.Module: Linear_0`` (the name torch's
Python tracer gives a module call with ``with_stack=True``) and, glassgrad's own, backward spans
``nn.Module: Linear_0.backward``.

While a profile wants them, two global module hooks (``nn.modules.module``'s
``register_module_forward_pre_hook`` / ``register_module_forward_hook``) time each module call;
nothing is installed otherwise, so no module call pays. A module instance is numbered per class in
the order it is first called (``Linear_0``, ``Linear_1``), as torch's tracer does. Backward spans
are made after the profile ends: each backward node event (``AddmmBackward0``) belongs to the
innermost module whose forward span holds the forward event of the same ``sequence_nr``; runs of
consecutive node events of one module become one span over them.
"""

from __future__ import annotations

import threading


class ModuleSpans:
    """The module spans of one profile: ``start()`` installs the hooks, ``stop()`` removes them."""

    def __init__(self, prof, backward: bool) -> None:
        self.prof = prof
        self.backward = backward
        self.names: dict = {}  # id(module) -> "Linear_0"
        self.counts: dict = {}  # class name -> modules of that class seen
        self.open: list = []  # (module, start ns) of the calls not yet returned
        self.spans: list = []  # (name, start us, end us) of the forward calls
        self.handles: list = []

    def _name(self, module) -> str:
        name = self.names.get(id(module))
        if name is None:
            cls = type(module).__name__
            k = self.counts.get(cls, 0)
            self.counts[cls] = k + 1
            name = self.names[id(module)] = f"{cls}_{k}"
        return name

    def _pre(self, module, args):
        if threading.get_ident() == self.prof._ident:
            self.open.append((module, self.prof._clock()))

    def _post(self, module, args, output):
        if self.open and self.open[-1][0] is module:
            _, start = self.open.pop()
            label = f"nn.Module: {self._name(module)}"
            self.spans.append((label, start, self.prof._clock()))
            self.prof._add_span(label, start, self.spans[-1][2])

    def start(self) -> None:
        from ..nn._module_hooks import register_module_forward_hook, \
            register_module_forward_pre_hook

        self.handles = [register_module_forward_pre_hook(self._pre),
                        register_module_forward_hook(self._post, always_call=True)]

    def stop(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []

    def backward_spans(self, raw: list) -> list:
        """(name, start, end) spans over runs of one module's backward node events in ``raw``
        (the profile's records: [name, start, end, ..., sequence_nr at 8, ...])."""
        if not self.backward or not self.spans:
            return []
        # a node's backward event carries its forward's thread (index 9), a forward event 0
        forward_at = {r[8]: r[1] for r in raw if r[8] >= 0 and not r[9]}
        spans = sorted(self.spans, key=lambda s: (s[1], -s[2]))
        out, run = [], None
        for r in sorted((r for r in raw if r[8] in forward_at and r[9]), key=lambda r: r[1]):
            t = forward_at[r[8]]
            owner = None
            for name, s, e in spans:  # the innermost span holding the forward event
                if s <= t <= e and (owner is None or s >= owner[1]):
                    owner = (name, s, e)
            if owner is None:
                run = None
                continue
            if run is not None and run[0] == owner[0]:
                run[2] = r[2]
            else:
                run = [owner[0], r[1], r[2]]
                out.append(run)
        return [(f"{name}.backward", s, e) for name, s, e in out]
