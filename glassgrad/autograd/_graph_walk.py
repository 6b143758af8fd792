"""The one walk over a graph's nodes that ``explain_grad`` and ``graph.diff`` share (it imports
nothing from glassgrad, so any module of ``autograd`` may use it)."""
from __future__ import annotations

from collections import deque


def walk(root, breadth_first: bool = False, stop=None):
    """Every node reachable from ``root`` through ``next_functions``, each once (by identity),
    depth first or, with ``breadth_first``, nearest first; nodes for which ``stop(node)`` is true
    are neither yielded nor entered. Iterative: deep graphs are fine."""
    seen, todo = set(), deque([root] if root is not None else [])
    take = todo.popleft if breadth_first else todo.pop
    while todo:
        n = take()
        if n is None or id(n) in seen or (stop is not None and stop(n)):
            continue
        seen.add(id(n))
        yield n
        todo.extend(e[0] for e in getattr(n, "next_functions", ()) or ())
