"""What ``glassgrad inspect`` records of each training step: the graph with the module that made
each node, the saved-tensor ledger, the memory timeline, the step diff and the warnings.

A step is a ``backward()`` and ends at the ``optimizer.step()`` after it, or, when a forward or
another backward comes first, where its backward returned. Its memory window starts at the first
module call after the previous step ended (so ``zero_grad`` and data loading between steps stay
out), or at that end when no module is called. Nodes are
given to modules by sequence number: a global forward pre-hook notes the next node number, the
post-hook the number after the module's last node, and a node belongs to the innermost call whose
range holds it; a parameter's leaf belongs to the module whose ``_parameters`` holds it.
"""

from __future__ import annotations

import linecache
import weakref

from .. import _memory_timeline as _mt
from ..autograd import graph as _graph
from ..autograd._graph_walk import walk

def _code(source: str | None) -> str:
    """The text of the line ``source`` ("file:line") names, as torch's warnings show it."""
    if not source:
        return ""
    filename, _, line = source.rpartition(":")
    return linecache.getline(filename, int(line)).strip() if line.isdigit() else ""


class Recorder:
    """The records of the first ``steps`` steps; ``glassgrad.inspect.run`` installs the hooks
    that feed it."""

    def __init__(self, steps: int):
        self.steps = steps
        self.records: list = []
        self.warnings: list = []
        self.modules: dict = {}  # path -> {"type", "params": [names]}
        self.calls: list = []  # open module calls: [module, path, first seq]
        self.ranges: list = []  # (first seq, end seq, depth, path) of the recorded module calls
        self.param_path: dict = {}  # id(parameter) -> (module path, name)
        self.params: dict = {}  # "path.name" -> parameter
        self.roots: list = []  # (module called from user code, its path)
        self.prev_nodes = None  # id -> node of the last step's graph (weak values)
        self.pending = None  # the record whose backward ran and whose step has not ended
        self.backward_end = None  # (t, live ranks) when that backward returned
        self.history = None
        self.start = None  # (t0, live blocks) where this step's memory window begins
        self.tentative = True  # the start is the last boundary, not yet a module call

    @property
    def active(self) -> bool:
        return len(self.records) < self.steps or self.pending is not None

    def begin(self) -> None:
        self.history, self.own, self.restore = _mt._full()
        self.history.tag = lambda: self.calls[-1][1] if self.calls else None
        self.old_source = _graph._Hooks.record_source
        _graph._Hooks.record_source = True  # every node keeps the user's line that made it
        self._boundary()

    def end(self) -> None:
        if self.pending is not None:
            self._finish(self.pending)
        self._release()
        _graph._Hooks.record_source = self.old_source
        self.params.clear()
        self.roots.clear()

    def _boundary(self) -> None:
        h = self.history
        h.classify()
        h.phase = None
        self.start = (h.t, h.live_ranks())
        self.tentative = True

    def pre(self, module, args):
        if not self.active:
            return None
        if not self.calls and self.pending is not None:  # a forward, and no optimizer stepped:
            self._finish(self.pending, self.backward_end)  # the step ended with its backward
        if self.history is None:
            return None
        if self.tentative and not self.calls:
            self._boundary()
            self.tentative = False
        parent = self.calls[-1] if self.calls else None
        path = None
        if parent is not None:
            for name, child in parent[0]._modules.items():
                if child is module:
                    path = f"{parent[1]}.{name}"
                    break
            if path is None:
                path = f"{parent[1]}.{type(module).__name__}"
        else:
            path = self._root_path(module)
        info = self.modules.setdefault(path, {"type": type(module).__name__, "params": []})
        for name, p in module.__dict__.get("_parameters", {}).items():
            if p is not None and id(p) not in self.param_path:
                self.param_path[id(p)] = (path, name)
                self.params[f"{path}.{name}"] = p  # (held: the ids above stay theirs)
                info["params"].append(name)
        self.calls.append([module, path, next(_graph._sequence)])
        return None

    def _root_path(self, module) -> str:
        """A module called from user code is named by its class; a second one of the same
        class gets ``#2`` (``Linear``, ``Linear#2``)."""
        for m, path in self.roots:
            if m is module:
                return path
        base = type(module).__name__
        taken = {p for _, p in self.roots}
        path, k = base, 2
        while path in taken:
            path, k = f"{base}#{k}", k + 1
        self.roots.append((module, path))
        return path

    def post(self, module, args, output):
        if not self.calls or self.calls[-1][0] is not module:
            return None
        _, path, first = self.calls.pop()
        self.ranges.append((first, next(_graph._sequence), len(self.calls), path))
        return None

    def _module_of(self, seq) -> str | None:
        best = None
        for first, end, depth, path in self.ranges:
            if first < seq < end and (best is None or depth > best[0]):
                best = (depth, path)
        return None if best is None else best[1]

    def on_backward(self, roots, frame=None) -> dict | None:
        if self.pending is not None:  # no optimizer step came between two backwards
            self._finish(self.pending, self.backward_end)
        if len(self.records) >= self.steps:
            return None
        from ..autograd.graph_inspect import _Ledger
        from ..tensor import Tensor
        ledger = _Ledger(tuple(roots), self.params)
        led = ledger.build()
        for row, node in zip(led["nodes"], ledger.nodes):
            if row["kind"] == "leaf":
                var = node.variable
                row["module"] = self.param_path.get(id(var), (None,))[0]
            else:
                row["module"] = self._module_of(row["seq"]) if row["seq"] is not None else None
            row["code"] = _code(row["source"])
        root = roots[0].grad_fn if isinstance(roots[0], Tensor) else roots[0]
        rec = {"step": len(self.records) + 1, "nodes": led["nodes"], "totals": led["totals"],
               "modules": dict(self.modules), "diff": self._diff(root, led["nodes"])}
        rec["diff"]["carried"] = self._carried(frame) if frame is not None else []
        # the graph's nodes, held weakly: the recorder must not keep a step's graph alive
        self.prev_nodes = weakref.WeakValueDictionary({id(n): n for n in walk(root)})
        self.records.append(rec)
        self.pending = rec
        return rec

    def _diff(self, root, nodes) -> dict:
        from ..autograd.graph_diff import _diff_ids
        prev = self.records[-1] if self.records else None
        out = {"previous": None if prev is None else prev["step"], "added_ops": [],
               "removed_ops": [], "link": None, "shared": 0, "text": "first recorded step"}
        if prev is None:
            return out
        key = lambda n: (n["name"], n.get("module") or "", n.get("source") or "")  # noqa: E731
        old = {key(n) for n in prev["nodes"]}
        new = {key(n) for n in nodes}
        out["added_ops"] = sorted(map(list, new - old))
        out["removed_ops"] = sorted(map(list, old - new))
        if self.prev_nodes and root is not None:
            d = _diff_ids(self.prev_nodes, root)
            out["shared"] = len(d.shared)
            out["text"] = str(d)
            if d.link is not None:
                src = d.link.source
                out["link"] = {"name": d.link.name(), "source": src, "code": _code(src)}
        else:
            out["text"] = "the previous step's graph is gone: nothing links the two steps"
        return out

    def _carried(self, frame) -> list:
        """The user's variables (in the frame that called backward) whose graphs reach into the
        last step's graph: each with the op and line that linked them, and the node reached."""
        from ..tensor import Tensor
        out = []
        if not self.prev_nodes:
            return out
        for name, value in list(frame.f_locals.items()):
            items = [(name, value)]
            if isinstance(value, (list, tuple)):
                items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
            for label, v in items:
                if isinstance(v, Tensor) and v.grad_fn is not None:
                    found = _link(self.prev_nodes, v.grad_fn)
                    if found is not None:
                        new, old = found
                        out.append({"variable": label, "op": new.name(), "source": new.source,
                                    "code": _code(new.source), "reaches": old.name(),
                                    "reaches_source": old.source})
                        break  # one element of a list names the list
        return out

    def after_step(self) -> None:
        if self.pending is not None:
            self._finish(self.pending)

    def backward_done(self) -> None:
        """A recorded step's backward returned: where its window ends unless a step follows."""
        h = self.history
        if self.pending is not None and h is not None:
            h.classify()
            self.backward_end = (h.t, h.live_ranks())

    def _finish(self, rec, end=None) -> None:
        """Cut the step's memory window, up to ``end`` ((t, live ranks); default now)."""
        self.pending = None
        h = self.history
        if h is None:
            return
        if end is None:
            h.classify()
            end = (h.t, h.live_ranks())
        t0, blocks = self.start
        tl = _mt.window(blocks, h, t0, f"step {rec['step']}", end[0])
        data = tl.to_dict()
        for p in [data["peak"], *data["phase_peaks"], *data["peak"]["top"]]:
            p["code"] = _code(p.get("source"))
        rec["memory"] = data
        rec["timeline"] = tl
        self.start, self.tentative = end, True  # the next step's forward starts after it
        if len(self.records) >= self.steps:
            self._release()  # the rest of the script runs without the history's cost
            _graph._Hooks.record_source = self.old_source

    def _release(self) -> None:
        h, self.history = self.history, None
        if h is not None:
            h.tag = None
        if h is not None and _mt._HISTORY[0] is h:
            if self.own:
                _mt._stop()
            elif self.restore is not None:  # the script's own (_record_memory_history)
                h.configure(*self.restore)

    def error(self, exc) -> None:
        """Note the exception that ended the script, at the user's innermost line in it."""
        import traceback
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if not f.filename.startswith(_mt._PKG)]
        self.warn(type(exc), exc, frames[-1].filename if frames else "<unknown>",
                  frames[-1].lineno if frames else 0)

    def warn(self, category, message, filename, lineno) -> None:
        source = f"{filename}:{lineno}"
        self.warnings.append({"category": category.__name__, "message": str(message),
                              "source": source, "code": _code(source),
                              "step": len(self.records) + (self.pending is None)})


def _link(old, root):
    """(the new node nearest ``root`` with an input in ``old``, that input), or None. Leaves'
    accumulators are shared by every step and link nothing; ``old``'s nodes are not entered."""
    from ..autograd.graph import AccumulateGrad
    for node in walk(root, breadth_first=True, stop=lambda n: id(n) in old):
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) in old and type(nxt) is not AccumulateGrad:
                return node, nxt
    return None
