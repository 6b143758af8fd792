"""Nested containers of tensors ("pytrees"), as ``torch.utils._pytree`` sees them.

Tuples, lists, dicts (key order kept), OrderedDicts and namedtuples are nodes; ``None`` is a node
with no children; everything else is a leaf. ``vmap``'s ``in_dims``/``out_dims`` and the
``argnums`` of the autograd transforms are matched against these structures.
"""

from __future__ import annotations

from collections import OrderedDict


class TreeSpec:
    """The structure of a pytree without its leaves: a kind, node data (keys, type) and children."""

    __slots__ = ("children", "data", "kind", "num_leaves")

    def __init__(self, kind: str, data, children: tuple):
        self.kind = kind
        self.data = data
        self.children = children
        self.num_leaves = 1 if kind == "leaf" else sum(c.num_leaves for c in children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.kind == other.kind and self.data == other.data
                and self.children == other.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict" or self.kind == "odict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.data, self.children))
            return "{" + inner + "}"
        if self.kind == "list":
            return "[" + inner + "]"
        if self.kind == "namedtuple":
            return f"{self.data.__name__}({inner})"
        return "(" + inner + ("," if len(self.children) == 1 else "") + ")"


_LEAF = TreeSpec("leaf", None, ())


def _kind(tree):
    if tree is None:
        return "none"
    t = type(tree)
    if t is tuple:
        return "tuple"
    if t is list:
        return "list"
    if t is dict:
        return "dict"
    if t is OrderedDict:
        return "odict"
    if isinstance(tree, tuple) and hasattr(t, "_fields"):
        return "namedtuple"
    return "leaf"


def _children(tree, kind):
    if kind in ("dict", "odict"):
        return list(tree.keys()), list(tree.values())
    if kind == "namedtuple":
        return type(tree), list(tree)
    if kind == "none":
        return None, []
    return None, list(tree)


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves in order, and the structure to rebuild the tree with ``tree_unflatten``."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeSpec:
    kind = _kind(tree)
    if kind == "leaf":
        leaves.append(tree)
        return _LEAF
    data, kids = _children(tree, kind)
    return TreeSpec(kind, tuple(data) if kind in ("dict", "odict") else data,
                    tuple(_flatten(k, leaves) for k in kids))


def tree_unflatten(leaves, spec: TreeSpec):
    """The tree of structure ``spec`` holding ``leaves`` in order."""
    it = iter(leaves)
    out = _unflatten(it, spec)
    return out


def _unflatten(it, spec):
    kind = spec.kind
    if kind == "leaf":
        return next(it)
    if kind == "none":
        return None
    kids = [_unflatten(it, c) for c in spec.children]
    if kind == "tuple":
        return tuple(kids)
    if kind == "list":
        return kids
    if kind == "dict":
        return dict(zip(spec.data, kids))
    if kind == "odict":
        return OrderedDict(zip(spec.data, kids))
    return spec.data(*kids)


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_to_and_flatten(prefix, spec: TreeSpec):
    """Flatten ``prefix`` (a tree that is a prefix of ``spec``'s structure) to one value per leaf
    of ``spec``: a leaf of ``prefix`` covers a whole subtree. None when the structures clash."""
    out: list = []
    return out if _broadcast(prefix, spec, out) else None


def _broadcast(prefix, spec, out) -> bool:
    kind = _kind(prefix)
    if kind == "leaf" or (kind == "none" and spec.kind != "none"):
        out.extend([prefix] * spec.num_leaves)
        return True
    if kind != spec.kind:
        return False
    data, kids = _children(prefix, kind)
    if kind in ("dict", "odict"):
        if set(data) != set(spec.data):
            return False
        by_key = dict(zip(data, kids))
        kids = [by_key[k] for k in spec.data]
    elif len(kids) != len(spec.children) or (kind == "namedtuple" and data is not spec.data):
        return False
    return all(_broadcast(k, c, out) for k, c in zip(kids, spec.children))
