"""``diff(prev_root, root)``: what a step's graph added to the previous step's, and where they link.

A graph that grows across iterations (an RNN hidden state carried without ``.detach()``,
``total_loss += loss``) shares every node of the earlier graph; the link is the first shared node."""
from __future__ import annotations

from ._graph_walk import walk


def _root(x):
    return getattr(x, "grad_fn", x)


class GraphDiff:
    """Result of :func:`diff`: ``.added`` (nodes only in the new graph), ``.shared`` (in both),
    ``.link`` (the shared node the new graph reaches first, or None)."""

    def __init__(self, added, shared, link):
        self.added, self.shared, self.link = added, shared, link

    def __str__(self):
        names = ", ".join(type(n).__name__ for n in self.added[:10])
        if self.link is None:
            return f"graphs are disjoint; new graph has {len(self.added)} nodes ({names})"
        return (f"new graph adds {len(self.added)} nodes ({names}) and shares {len(self.shared)} with "
                f"the previous one through {type(self.link).__name__}: a tensor carried across steps "
                "without .detach()")

    __repr__ = __str__


def diff(prev_root, root) -> GraphDiff:
    """Compare two graphs (tensors or nodes). Returns a :class:`GraphDiff`; no torch counterpart."""
    return _diff_ids({id(n) for n in walk(_root(prev_root))}, root)


def _diff_ids(old, root) -> GraphDiff:
    """``diff`` against the node ids ``old`` (a set, or a WeakValueDictionary of a graph that may
    be gone: an id there is the same node while it lives)."""
    added, shared, link = [], [], None
    # breadth-first: the shared node nearest the new root is the link
    for n in walk(_root(root), breadth_first=True):
        if id(n) in old:
            shared.append(n)
            # parameters' accumulators are shared by every step legitimately; they are not the link
            if link is None and type(n).__name__ != "AccumulateGrad":
                link = n
        else:
            added.append(n)
    return GraphDiff(added, shared, link)
