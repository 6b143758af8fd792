"""``why_alive(obj)``: who keeps a tensor or graph node alive, as a chain of named holders.

The walk follows ``gc.get_referrers`` outwards from ``obj`` and names what each holder is in
autograd's terms (a node's saved tensor, a custom Function's ``ctx`` attribute, the graph a
``retain_graph=True`` backward kept, the ``.grad`` <-> ``AccumulateGrad`` cycle ``create_graph``
makes) rather than as raw Python objects. Tuples (edges, ``next_functions``, saved lists) are walked
through without a line of their own; glassgrad's own frames and the walk's containers are skipped.
"""
from __future__ import annotations

import gc
import os
import sys
import types

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_frame(f) -> bool:
    return not os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE_DIR)


def _node_name(node) -> str:
    name = getattr(node, "name", None)
    return name() if callable(name) else type(node).__name__


def _retained_note(node) -> str:
    rec = getattr(node, "_retained", None)
    if rec is None:
        return ""
    return (f"; its graph was kept by backward(retain_graph=True) at {rec.where}: the graph lives "
            "while its output does (del the output, or drop retain_graph=True)")


def _grad_cycle(t) -> str | None:
    """The create_graph cycle: leaf -> .grad -> grad_fn -> ... -> AccumulateGrad -> leaf."""
    from ..tensor import Tensor
    g = getattr(t, "_grad", None) if isinstance(t, Tensor) else None
    if g is None or g.grad_fn is None:
        return None
    stack, seen, path = [g.grad_fn], set(), []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if getattr(n, "variable", None) is t:
            path = [_node_name(g.grad_fn), "...", "AccumulateGrad"] if len(seen) > 2 else \
                [_node_name(g.grad_fn), "AccumulateGrad"]
            return ("reference cycle made by backward(create_graph=True): parameter -> .grad -> "
                    f"grad_fn ({' -> '.join(path)}) -> parameter; set .grad = None after use "
                    "(zero_grad(set_to_none=True)) or take the gradient with autograd.grad")
        stack.extend(e[0] for e in (n.next_functions or ()) if e is not None)
    return None


def _saves(node, t) -> bool:
    for s in node._saved or ():
        if s is t or getattr(s, "_tensor", None) is t:
            return True
    return False


def _closure_owner(cell):
    for tup in gc.get_referrers(cell):
        if isinstance(tup, tuple):
            for fn in gc.get_referrers(tup):
                if isinstance(fn, types.FunctionType) and fn.__closure__ is tup:
                    return fn
    return None


def _describe(ref, target, walk):
    """(text or None to walk through silently, follow: bool), or None to skip the referrer."""
    from ..tensor import Tensor
    from .graph import AccumulateGrad, Node, SavedTensor
    if isinstance(ref, types.FrameType):
        if not _user_frame(ref):
            return None
        names = [k for k, v in ref.f_locals.items() if v is target]
        return (f"variable {names} in {ref.f_code.co_name} ({ref.f_code.co_filename}:"
                f"{ref.f_lineno})", False)
    if isinstance(ref, SavedTensor):
        return (None, True)
    if isinstance(ref, AccumulateGrad):
        return ("the AccumulateGrad node of this leaf (it lives while a graph using the leaf does)",
                True)
    if isinstance(ref, Node):
        if _saves(ref, walk["origin"]):
            return (f"saved for backward by {_node_name(ref)}{_retained_note(ref)}", True)
        attrs = getattr(ref, "__dict__", None) or {}
        keys = [k for k, v in attrs.items() if v is walk["origin"]]
        if keys:
            return (f"attribute ctx.{keys[0]} of {_node_name(ref)} (set in the Function's "
                    f"forward){_retained_note(ref)}", True)
        return (f"an edge of {_node_name(ref)} (its input's node){_retained_note(ref)}", True)
    if isinstance(ref, Tensor):
        if ref.grad_fn is target:
            return (f"grad_fn of a tensor of shape {list(ref.shape)}", True)
        if getattr(ref, "_grad", None) is target:
            return (f"the .grad of a tensor of shape {list(ref.shape)}", True)
        return (f"a tensor of shape {list(ref.shape)} (its view base or hook)", True)
    if isinstance(ref, tuple):
        return (None, True)
    if isinstance(ref, list):
        return (f"a list of {len(ref)} items", True)
    if isinstance(ref, dict):
        keys = [k for k, v in ref.items() if v is target]
        for owner in gc.get_referrers(ref):
            if getattr(owner, "__dict__", None) is ref and owner is not walk:
                if isinstance(owner, Node):
                    return (f"attribute ctx.{keys[0] if keys else '?'} of {_node_name(owner)}"
                            f"{_retained_note(owner)}", True)
                if isinstance(owner, types.ModuleType):
                    return (f"global {keys} of module {owner.__name__}", False)
        return (f"a dict under {keys}", True)
    if type(ref).__name__ == "cell":
        fn = _closure_owner(ref)
        if fn is None:
            return None  # a cell of a running frame (glassgrad's own, or the walk's)
        code = fn.__code__
        if not os.path.abspath(code.co_filename).startswith(_PACKAGE_DIR):
            return (f"a closure cell of function {fn.__qualname__} ({code.co_filename}:"
                    f"{code.co_firstlineno}): a hook or callback", True)
        return ("a closure of glassgrad's " + fn.__qualname__ + " (a hook it registered)", True)
    if isinstance(ref, (types.ModuleType, type, types.FunctionType)):
        return None
    return (f"a {type(ref).__name__} object", True)


def why_alive(obj, depth: int = 4) -> list:
    """Name who holds ``obj`` (a Tensor or a graph node): one line per holder, indented by how far
    it is from ``obj``.

    Holders named: variables of the caller's frames (name, file:line), a list (losses collected
    across steps), a dict or module global, a hook's closure cell (function and line), a graph
    node's saved tensor or ``ctx`` attribute (with the ``retain_graph=True`` backward that kept
    the graph), a tensor's ``grad_fn`` or ``.grad``, and the ``create_graph`` reference cycle of
    a parameter's ``.grad``. Walks ``depth`` levels of referrers. Returns ``list[str]``. PyTorch
    has no counterpart (``gc.get_referrers`` is the manual way).
    """
    lines: list = []
    cycle = _grad_cycle(obj)
    if cycle:
        lines.append(cycle)
    f, module_level = sys._getframe(1), []
    while f is not None:  # frames are not gc-tracked referrers on CPython 3.11+
        module_level.append(id(f.f_locals))  # a frame's locals snapshot is no holder of its own
        if _user_frame(f):
            names = [k for k, v in f.f_locals.items() if v is obj]
            if names:
                lines.append(f"variable {names} in {f.f_code.co_name} ({f.f_code.co_filename}:"
                             f"{f.f_lineno})")
                module_level.append(id(f.f_globals))  # named above: not again as a global
        f = f.f_back
    walk = {"frontier": [obj], "next": [], "seen": {id(obj), *module_level}, "origin": obj, "own": []}
    level = 0
    while walk["frontier"] and level < depth:
        walk["next"] = []
        for target in walk["frontier"]:
            walk["origin"] = target
            _step(target, level, lines, walk)
        walk["frontier"] = walk["next"]
        level += 1
    return lines


def _step(target, level, lines, walk, through=0) -> None:
    refs = gc.get_referrers(target)
    walk["own"].append(refs)  # the walk's own lists hold what it visits: never a holder
    own = {id(walk), id(walk["frontier"]), id(walk["next"]), id(lines), id(walk["own"])}
    own.update(id(r) for r in walk["own"])
    for ref in refs:
        if id(ref) in walk["seen"] or id(ref) in own:
            continue
        walk["seen"].add(id(ref))
        got = _describe(ref, target, walk)
        if got is None:
            continue
        text, follow = got
        if text is None:  # tuples and SavedTensor: walk through at the same level
            if through < 4:
                _step(ref, level, lines, walk, through + 1)
            continue
        lines.append("  " * level + text)
        if follow:
            walk["next"].append(ref)
