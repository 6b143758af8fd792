"""The saved-value ledger: every node behind a tensor, what it saved, how many bytes, where it was made.

``to_dict(t)`` walks the graph behind ``t`` (leaves, then the ops in forward order) and returns it as
JSON-ready data; ``summary(t)`` prints it as a table with totals. Bytes are counted once per
underlying buffer: a saved view (``W.t()``, a slice, a broadcast) counts the buffer it keeps alive,
found through NumPy's ``base`` chain, and a buffer saved by several nodes counts once. After a
backward that did not retain the graph, the saved tensors are gone; the ledger still lists them as
freed, with their former shape and size (derived from the op's ``saves`` declaration and the
recorded input shapes), deduplicated through the graph's edges.

Re-exported as ``glassgrad.autograd.graph.summary`` / ``to_dict``; ``viz.make_dot`` and
``viz_html`` draw from the same data.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

from . import engine
from . import graph as _graph
from .graph import AccumulateGrad, Node, SavedTensor, _Hooks


def _dtype_name(np_dtype) -> str:
    return np.dtype(np_dtype).name


def _root_buffer(arr):
    """The array that owns the memory ``arr`` looks at (the end of its ``base`` chain)."""
    base = arr
    while isinstance(getattr(base, "base", None), np.ndarray):
        base = base.base
    return base


def _address(arr) -> int:
    return arr.__array_interface__["data"][0] if isinstance(arr, np.ndarray) else 0


def _format_bytes(n) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def graph_nodes(roots) -> list:
    """Every node reachable from ``roots`` (tensors or nodes): each leaf's ``AccumulateGrad`` just
    before its first consumer, ops in forward (creation) order. Iterative: deep graphs are fine."""
    start = []
    for r in roots:
        node = r if isinstance(r, Node) else r.grad_fn
        if node is None and isinstance(r, engine._Tensor) and r._requires_grad:
            node = _graph.grad_accumulator(r)
        if node is not None:
            start.append(node)
    seen = set(start)
    stack = list(start)
    first_use: dict = {}  # leaf -> (seq of its first consumer, edge position there)
    while stack:
        node = stack.pop()
        for k, (nxt, _) in enumerate(node.next_functions):
            if nxt is None:
                continue
            if type(nxt) is AccumulateGrad:
                use = (node._seq, k)
                if nxt not in first_use or use < first_use[nxt]:
                    first_use[nxt] = use
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)

    def order(n):
        use = first_use.get(n)
        return (use[0], 0, use[1]) if use is not None else (n._seq, 1, 0)

    return sorted(seen, key=order)


def _as_roots(var) -> tuple:
    if isinstance(var, (engine._Tensor, Node)):
        return (var,)
    return tuple(var)


def _saved_array(s):
    """(array or None, packed by hooks?) of one saved entry, without unpacking it."""
    if isinstance(s, engine._Tensor):
        return s._array, False
    if not isinstance(s, SavedTensor):
        return None, False
    if s._unpack_hook is None:
        return s._peek(), False
    packed = s._packed
    for p in packed if isinstance(packed, (tuple, list)) else (packed,):
        if isinstance(p, engine._Tensor):
            return p._array, True
        if isinstance(p, np.ndarray):
            return p, True
    return None, True


def _short(value, limit: int = 50) -> str:
    text = str(tuple(value)) if isinstance(value, list) else str(value)
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


_VIEW_PRIMS = {"Permute", "Reshape", "Expand", "Diagonal"}  # outputs are views of a leaf input
_CTX_INTERNALS = {"to_save", "saved_for_forward", "dirty_tensors", "non_differentiable",
                  "materialize_grads"}


def _attrs(node) -> dict:
    attrs = node._attrs if type(node._attrs) is dict else {}
    extra = getattr(node, "__dict__", None)  # a custom Function's ctx: what the user stored on it
    if extra:
        attrs = dict(attrs, **{k: v for k, v in extra.items()
                               if not k.startswith("_") and k not in _CTX_INTERNALS
                               and not isinstance(v, engine._Tensor)})
    return {k: _short(v, 200) for k, v in attrs.items()}


class _Ledger:
    """Builds ``to_dict``'s data; holds the buffers alive while it counts them by identity."""

    def __init__(self, roots, params):
        self.roots = roots
        self.nodes = graph_nodes(roots)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.buffers: dict = {}  # id(root buffer) -> [buffer, number, nbytes]
        self.param_buffers: dict = {}  # id(root buffer) -> name
        self.names = {id(t): name for name, t in (params or {}).items()}
        leaf_no = 0
        for n in self.nodes:
            if type(n) is AccumulateGrad:
                v = n.variable
                name = self.names.get(id(v))
                if name is None:
                    name = f"leaf {leaf_no}"
                    leaf_no += 1
                self.param_buffers.setdefault(id(_root_buffer(v._array)), name)
        for name, t in (params or {}).items():
            self.param_buffers.setdefault(id(_root_buffer(t._array)), name)
        self.out_meta = self._output_meta()

    def _output_meta(self) -> dict:
        meta: dict = {}
        for r in self.roots:
            if isinstance(r, engine._Tensor) and r.grad_fn is not None:
                meta[(r.grad_fn, r._output_nr)] = (r._array.shape, r._array.dtype)
        for n in self.nodes:
            if type(n) is AccumulateGrad:
                meta[(n, 0)] = (n.variable._array.shape, n.variable._array.dtype)
            for nr, m in enumerate(getattr(n, "_out_meta", None) or ()):
                if m is not None:
                    meta.setdefault((n, nr), m)
            if n._in_meta:
                for (nxt, nr), m in zip(n.next_functions, n._in_meta):
                    if nxt is not None:
                        meta.setdefault((nxt, nr), m)
        for n in self.nodes:  # a saved output knows its own shape
            for s in n._saved or ():
                if type(s) is SavedTensor and s._is_output:
                    arr, _ = _saved_array(s)
                    if arr is not None:
                        meta.setdefault((n, s._output_nr), (arr.shape, arr.dtype))
        return meta

    def _buffer(self, arr) -> dict:
        root = _root_buffer(arr)
        entry = self.buffers.get(id(root))
        first = entry is None
        if first:
            entry = self.buffers[id(root)] = [root, len(self.buffers), int(root.nbytes)]
        return {"buffer": entry[1], "buffer_bytes": entry[2], "counted": first,
                "param": self.param_buffers.get(id(root))}

    def _saved_live(self, node) -> list:
        prim = node._prim
        names = prim.saves if prim is not None else ()
        out = []
        for k, s in enumerate(node._saved):
            if s is None:
                continue
            arr, packed = _saved_array(s)
            name = names[k] if k < len(names) else f"saved[{k}]"
            is_output = type(s) is SavedTensor and s._is_output
            entry = {"name": name, "freed": False, "packed": packed, "is_output": is_output}
            if arr is None:
                entry.update(shape=None, dtype=None, nbytes=None, buffer=None, buffer_bytes=None,
                             counted=False, param=None, value=f"n{self.index[node]}.{k}")
            else:
                entry.update(shape=list(arr.shape), dtype=_dtype_name(arr.dtype),
                             nbytes=int(arr.nbytes), is_view=_root_buffer(arr) is not arr)
                entry.update(self._buffer(arr))
                offset = _address(arr) - _address(_root_buffer(arr))
                entry["value"] = f"b{entry['buffer']}+{offset}:{arr.shape}:{arr.strides}"
            entry["aliases"] = self._aliases(node, k, entry)
            out.append(entry)
        return out

    def _saved_ghosts(self, node) -> list:
        """A freed node's former saved tensors, from its op's ``saves`` and its recorded shapes."""
        prim = node._prim
        if prim is None:  # a custom Function: nothing records what it had saved
            return [{"name": "saved", "freed": True, "shape": None, "dtype": None, "nbytes": None,
                     "buffer": None, "buffer_bytes": None, "counted": False, "param": None,
                     "packed": False, "is_output": False, "aliases": [],
                     "value": f"in{self.index[node]}.?"}]
        out = []
        when = prim._save_when  # NOTE [Saved when needed] in ops/primitive.py
        for k, (name, i) in enumerate(zip(prim.saves, prim._save_idx)):
            if when is not None and when[k] is not None and \
                    all(node.next_functions[j][0] is None for j in when[k]):
                continue  # never saved: no input that needed it required grad
            edge = None
            if i < 0:
                meta = self.out_meta.get((node, 0))
            else:
                meta = node._in_meta[i] if node._in_meta else None
                edge = node.next_functions[i]
            shape, dtype = meta if meta is not None else (None, None)
            nbytes = None if meta is None else math.prod(shape) * np.dtype(dtype).itemsize
            param = None if edge is None else self._param_behind(edge[0])
            entry = {"name": name, "freed": True, "packed": False, "is_output": i < 0,
                     "shape": None if meta is None else list(shape),
                     "dtype": None if meta is None else _dtype_name(dtype), "nbytes": nbytes,
                     "buffer": None, "buffer_bytes": nbytes, "counted": False, "param": param}
            # the same value saved twice (an output saved as result, and as input by its consumer)
            # counts once: key it by the edge that produced it
            if i < 0:
                entry["value"] = f"out{self.index[node]}.0"
            elif edge[0] is not None:
                entry["value"] = f"out{self.index[edge[0]]}.{edge[1]}"
            else:
                entry["value"] = f"in{self.index[node]}.{i}"
            entry["aliases"] = self._aliases(node, len(out), entry, input_index=i)
            out.append(entry)
        return out

    def _param_behind(self, node):
        """The parameter whose buffer ``node``'s output shares: the leaf itself, or a view of it
        made by ops that always return views (transpose, reshape of a parameter, expand)."""
        while node is not None and type(node) is not AccumulateGrad:
            if node._prim is None or not any(c.__name__ in _VIEW_PRIMS for c in node._prim.__mro__):
                return None
            node = node.next_functions[0][0]
        if node is None:
            return None
        return self.param_buffers.get(id(_root_buffer(node.variable._array)))

    def _aliases(self, node, k, entry, input_index=None) -> list:
        notes = []
        if entry["is_output"]:
            notes.append("output")
        elif node._prim is not None:
            idx = node._prim._save_idx[k] if input_index is None else input_index
            if idx >= 0:
                edge = node.next_functions[idx]
                src = self.index.get(edge[0]) if edge[0] is not None else None
                notes.append(f"input {idx}" + (f" (output of #{src})" if src is not None else ""))
        if entry.get("param"):
            notes.append(_leaf_label(entry["param"]))
        if entry.get("packed"):
            notes.append("packed by saved_tensors_hooks")
        return notes

    def build(self) -> dict:
        rows = []
        freed_keys: dict = {}
        for i, n in enumerate(self.nodes):
            meta = self.out_meta.get((n, 0))
            row = {"index": i, "name": n.name(), "kind": _kind(n),
                   "seq": None if type(n) is AccumulateGrad else n._seq,
                   "output": None if meta is None else
                   {"shape": list(meta[0]), "dtype": _dtype_name(meta[1])},
                   "inputs": [{"node": self.index.get(nxt), "output_nr": nr} if nxt is not None
                              else None for nxt, nr in n.next_functions],
                   "freed": bool(n._freed), "source": n.source, "attrs": _attrs(n), "saved": []}
            if type(n) is AccumulateGrad:
                v = n.variable
                name = self.param_buffers.get(id(_root_buffer(v._array)))
                row["param"] = self.names.get(id(v), name)
                row["grad_norm"] = _norm(v._grad)
            elif n._saved:
                row["saved"] = self._saved_live(n)
            elif n._freed:
                row["saved"] = self._saved_ghosts(n)
                for s in row["saved"]:
                    key = s["value"]
                    if s["nbytes"] is not None and key not in freed_keys:
                        freed_keys[key] = 0 if s["param"] else s["nbytes"]
                        s["counted"] = True
            rows.append(row)
        return {"roots": [_root_info(r, self.index) for r in self.roots], "nodes": rows,
                "totals": self._totals(rows, freed_keys)}

    def _totals(self, rows, freed_keys) -> dict:
        live = [s for r in rows for s in r["saved"] if not s["freed"]]
        counted = [s for s in live if s["counted"]]
        saved = sum(s["buffer_bytes"] for s in counted)
        params = sum(s["buffer_bytes"] for s in counted if s["param"])
        return {
            "nodes": len(rows),
            "leaves": sum(r["kind"] == "leaf" for r in rows),
            "saved_tensors": len(live),
            "saved_buffers": len(counted),
            "saved_bytes": saved,
            "saved_param_bytes": params,
            "saved_graph_only_bytes": saved - params,
            "freed_nodes": sum(r["freed"] for r in rows),
            "freed_tensors": sum(s["freed"] for r in rows for s in r["saved"]),
            "freed_bytes": sum(freed_keys.values()),
        }


def _leaf_label(name: str) -> str:
    return name if name.startswith("leaf ") else f"param {name}"


def _kind(node) -> str:
    if type(node) is AccumulateGrad:
        return "leaf"
    if node._prim is not None:
        return "op"
    return "function" if hasattr(node, "_forward_cls") else "node"


def _norm(grad):
    if grad is None:
        return None
    return float(np.sqrt(np.sum(np.square(grad._array, dtype=np.float64))))


def _root_info(r, index) -> dict:
    if isinstance(r, Node):
        return {"node": index.get(r), "shape": None, "dtype": None, "output_nr": None}
    node = r.grad_fn
    if node is None and r._requires_grad:
        node = _graph.grad_accumulator(r)
    return {"node": index.get(node), "shape": list(r.shape), "dtype": _dtype_name(r._array.dtype),
            "output_nr": r._output_nr}


def to_dict(t, params: dict | None = None) -> dict:
    """The ledger of the graph behind ``t`` (a Tensor, a Node, or a sequence of them) as JSON-ready
    data: ``{"roots", "nodes", "totals"}``. Each node has its op ``name``, ``output`` shape/dtype,
    ``inputs`` (node indices), ``saved`` tensors (shape, dtype, ``nbytes``, the ``buffer`` they keep
    alive, ``counted`` once per buffer, aliasing with inputs and parameters, ``freed``) and its
    ``source`` line (recorded when ``_Hooks.record_source`` or anomaly mode is on). ``params``
    (name -> tensor, e.g. ``dict(model.named_parameters())``) names the leaves.
    glassgrad's addition: PyTorch exposes saved tensors only as private ``_saved_*`` attributes.
    """
    return _Ledger(_as_roots(t), params).build()


def summary(t, params: dict | None = None, file=None, max_rows: int = 500) -> None:
    """Print the ledger of the graph behind ``t`` as a table with totals (see ``to_dict``):
    one row per node and saved tensor, bytes per buffer, freed tensors marked, source lines.
    glassgrad's addition; nothing in PyTorch prints this."""
    print(format_summary(to_dict(t, params), max_rows), file=file or sys.stdout)


def format_summary(data: dict, max_rows: int = 500) -> str:
    """The table ``summary`` prints, from ``to_dict``'s data."""
    tot = data["totals"]
    head = (f"autograd graph: {tot['nodes']} nodes ({tot['leaves']} leaves), "
            f"{tot['saved_tensors']} saved tensors in {tot['saved_buffers']} buffers = "
            f"{_format_bytes(tot['saved_bytes'])} (leaves {_format_bytes(tot['saved_param_bytes'])}"
            f", graph only {_format_bytes(tot['saved_graph_only_bytes'])})")
    if tot["freed_tensors"]:
        head += (f"; freed by backward: {tot['freed_tensors']} tensors in {tot['freed_nodes']} "
                 f"nodes, {_format_bytes(tot['freed_bytes'])}")
    lines = [head, f"{'#':>4} {'node':<26} {'output':<20} {'saved':<34} {'bytes':>10}  source"]
    cwd = os.getcwd() + os.sep
    for row in data["nodes"][:max_rows]:
        out = row["output"]
        out_s = f"{out['shape']} {out['dtype']}" if out else "?"
        src = row["source"] or (_leaf_label(row["param"]) if row.get("param") else "")
        src = src.removeprefix(cwd)
        saved = row["saved"] or [None]
        for k, s in enumerate(saved):
            first = k == 0
            cells = [f"{row['index']:>4}" if first else " " * 4,
                     f"{row['name'] if first else '':<26.26}", f"{out_s if first else '':<20.20}"]
            if s is None:
                cells += [f"{'':<34}", f"{'':>10}"]
            else:
                what = f"{s['name']} {s['shape']} {s['dtype']}"
                if s["freed"]:
                    what = "(freed) " + what
                b = s["buffer_bytes"] if s["freed"] else s["nbytes"]
                note = "" if s["counted"] else " ="
                cells += [f"{what:<34.34}", f"{_format_bytes(b) + note:>10}"]
            alias = ", ".join(s["aliases"]) if s is not None and s["aliases"] else ""
            tail = src if first else ""
            if alias:
                tail = (tail + "  " if tail else "") + f"[{alias}]"
            lines.append(" ".join(cells) + "  " + tail)
    if len(data["nodes"]) > max_rows:
        lines.append(f"... {len(data['nodes']) - max_rows} more nodes")
    lines.append("bytes: the saved tensor's own size; '=' marks a buffer already counted above")
    if not any(row["source"] for row in data["nodes"]):
        lines.append("source lines: record them with glassgrad.autograd.graph_inspect."
                     "record_source() (or anomaly mode) before the forward")
    return "\n".join(line.rstrip() for line in lines)


class record_source:
    """Remember the user's ``file:line`` that creates each node from now on (``node.source``, shown
    by ``summary`` and ``make_dot``), as a call or a context manager: ``record_source()`` /
    ``with record_source(): ...``. Off by default: it costs about 1.5 us per recorded op (a frame
    walk), 10-20% of the smallest ops' overhead; anomaly mode turns it on as well.
    glassgrad's addition."""

    def __init__(self, mode: bool = True) -> None:
        self._prev = _Hooks.record_source
        _Hooks.record_source = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _Hooks.record_source = self._prev
