"""``make_dot``: the autograd graph behind a tensor as a Graphviz picture (torchviz's ``make_dot``).

The colours are torchviz's: grey backward nodes, light blue leaves that require grad (their
``.grad`` is filled by backward), orange tensors saved for backward, green the tensors drawn from,
dark green the base of an output that is a view. glassgrad adds what torchviz cannot show: saved
tensors after backward, drawn as dashed ghosts with their former size; the bytes of each saved
tensor; and, when ``params`` come from ``named_parameters()``, one cluster per module.

Building the picture needs only the ``graphviz`` Python package (``dot.source`` is the DOT text);
rendering to SVG or PNG (``dot.pipe(format="svg")``, ``dot.render(...)``) needs the Graphviz
binaries (Debian: ``apt-get install graphviz``).
"""

from __future__ import annotations

from .autograd.graph_inspect import _format_bytes, _Ledger
from .tensor import Tensor

_SAVED = "orange"
_LEAF = "lightblue"
_OUTPUT = "darkolivegreen1"
_VIEW_BASE = "darkolivegreen3"
_GHOST = {"style": "dashed,filled", "fillcolor": "#fff3e0", "color": "#9e9e9e",
          "fontcolor": "#757575"}


def _size(shape) -> str:
    return "(" + ", ".join(str(int(v)) for v in shape) + ")"


def _fn_label(row: dict, show_attrs: bool, max_attr_chars: int) -> str:
    name = row["name"]
    if not show_attrs:
        return name
    attrs = {s["name"]: "[freed tensor]" if s["freed"] else "[saved tensor]" for s in row["saved"]}
    attrs.update(row["attrs"])
    if not attrs:
        return name
    width = max(max_attr_chars, 3)
    values = {k: v if len(v) <= width else v[: width - 3] + "..." for k, v in attrs.items()}
    key_w = max(len(k) for k in values)
    val_w = max(len(v) for v in values.values())
    sep = "-" * max(key_w + val_w + 2, len(name))
    return "\n".join([name, sep] + [f"{k:<{key_w}}: {v:>{val_w}}" for k, v in values.items()])


def _saved_label(s: dict) -> str:
    shape = "?" if s["shape"] is None else _size(s["shape"])
    if s["freed"]:
        return f"{s['name']}\n {shape}\n freed ({_format_bytes(s['nbytes'])})"
    text = f"{s['name']}\n {shape}\n {_format_bytes(s['nbytes'])}"
    if s["param"]:
        text += f"\n = {s['param']}" + (" (view)" if s.get("is_view") else "")
    return text


def _module_of(name: str | None, params: dict) -> str | None:
    if name is None or name not in params or "." not in name:
        return None
    return name.rsplit(".", 1)[0]


def _modules(rows: list, params: dict) -> dict:
    """node index -> module path. A node belongs to a module when the parameters it reads directly
    (or through ops on parameters alone, like ``weight.t()``) all belong to that module."""
    owner: dict = {}
    pure: dict = {}  # nodes computed from one module's parameters alone
    for row in rows:
        i = row["index"]
        if row["kind"] == "leaf":
            mod = _module_of(row.get("param"), params)
            if mod is not None:
                owner[i] = pure[i] = mod
            continue
        ins = [e["node"] for e in row["inputs"] if e is not None and e["node"] is not None]
        mods = {pure[j] for j in ins if j in pure}
        if len(mods) != 1:
            continue
        owner[i] = next(iter(mods))
        if all(e is not None and e["node"] in pure for e in row["inputs"]):
            pure[i] = owner[i]
    return owner


def make_dot(var, params: dict | None = None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50):
    """The autograd graph behind ``var`` (a Tensor or a tuple of them) as a ``graphviz.Digraph``
    (torchviz's ``make_dot``, same signature and colours).

    ``params`` (name -> Tensor, e.g. ``dict(model.named_parameters())``) names the leaves and
    groups nodes into one cluster per module; ``show_attrs`` lists each node's attributes;
    ``show_saved`` draws the tensors saved for backward with their bytes (those of custom
    Functions are always drawn), after backward as dashed ghosts with their former size.
    Raises ImportError without the ``graphviz`` package and TypeError when a value of ``params`` is
    not a Tensor. Example: ``make_dot(z, params={"x": x}).render("graph", format="svg")``.
    """
    try:
        from graphviz import Digraph
    except ImportError as e:  # pragma: no cover - the package is a test dependency
        raise ImportError("make_dot needs the graphviz package: pip install graphviz") from e
    params = dict(params or {})
    for name, p in params.items():
        if not isinstance(p, Tensor):
            raise TypeError(f"make_dot: params[{name!r}] is a {type(p).__name__}, not a Tensor")
    outputs = list(var) if isinstance(var, (tuple, list)) else [var]
    bases = []  # bases of outputs that are views, drawn dark green as torchviz does
    for t in outputs:
        b = t._base
        while b is not None and all(b is not o for o in outputs + bases):
            bases.append(b)
            b = b._base
    drawn = outputs + bases
    # a leaf output is drawn alone, as torchviz does (no AccumulateGrad behind it)
    ledger = _Ledger(tuple(t for t in drawn if t.grad_fn is not None), params)
    data = ledger.build()
    rows = data["nodes"]
    names = {id(t): k for k, t in params.items()}

    dot = Digraph(
        node_attr={"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
                   "ranksep": "0.1", "height": "0.2", "fontname": "monospace"},
        graph_attr={"size": "12,12"},
    )
    owner = _modules(rows, params) if any("." in k for k in params) else {}
    groups: dict = {}  # module path (or None) -> list of (kind, args, kwargs)

    def node(mod, ident, label, **attrs):
        groups.setdefault(mod, []).append((ident, label, attrs))

    edges = []
    drawn_saved: dict = {}  # one node per saved value, however many nodes saved it
    for row, fn in zip(rows, ledger.nodes):
        i = row["index"]
        mod = owner.get(i)
        ident = f"n{i}"
        if row["kind"] == "leaf":
            v = fn.variable
            node(mod, f"v{i}", f"{names.get(id(v), '')}\n {_size(v.shape)}", fillcolor=_LEAF)
            edges.append((f"v{i}", ident, {}))
        # the creating line, shown on hover in SVG output (recorded under record_source())
        node(mod, ident, _fn_label(row, show_attrs, max_attr_chars),
             **({"tooltip": row["source"]} if row["source"] else {}))
        for e in row["inputs"]:
            if e is not None and e["node"] is not None:
                edges.append((f"n{e['node']}", ident, {}))
        if show_saved or row["kind"] == "function":
            for s in row["saved"]:
                sid = drawn_saved.get(s["value"])
                if sid is None:
                    sid = drawn_saved[s["value"]] = f"s{len(drawn_saved)}"
                    attrs = dict(_GHOST) if s["freed"] else {"fillcolor": _SAVED}
                    node(mod, sid, _saved_label(s), **attrs)
                edges.append((ident, sid, {"dir": "none", **({"style": "dashed"}
                                                              if s["freed"] else {})}))
    for k, t in enumerate(drawn):
        colour = _OUTPUT if k < len(outputs) else _VIEW_BASE
        node(None, f"t{k}", f"{names.get(id(t), '')}\n {_size(t.shape)}", fillcolor=colour)
        if t.grad_fn is not None:
            edges.append((f"n{ledger.index[t.grad_fn]}", f"t{k}", {}))
        if t._base is not None:
            j = next((j for j, o in enumerate(drawn) if o is t._base), None)
            if j is not None:
                edges.append((f"t{j}", f"t{k}", {"style": "dotted"}))

    for c, (mod, items) in enumerate(sorted(groups.items(), key=lambda kv: kv[0] or "")):
        if mod is None:
            for ident, label, attrs in items:
                dot.node(ident, label, **attrs)
            continue
        with dot.subgraph(name=f"cluster_{c}") as sub:
            sub.attr(label=mod, style="rounded,dashed", color="#607d8b", fontname="monospace",
                     fontsize="10")
            for ident, label, attrs in items:
                sub.node(ident, label, **attrs)
    for a, b, attrs in edges:
        dot.edge(a, b, **attrs)
    _resize(dot)
    return dot


def _resize(dot, size_per_element: float = 0.15, min_size: float = 12) -> None:
    """Grow the drawing size with its content, as torchviz does."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
