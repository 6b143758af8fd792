"""``why_alive(obj)``: the referrer chain (gc.get_referrers) keeping a tensor or graph node alive."""
from __future__ import annotations

import gc
import sys
import types


def why_alive(obj, depth: int = 4) -> list:
    """Return lines naming who holds ``obj``: frame variables (name, file:line), lists, dicts,
    closures, other objects' attributes. Walks ``depth`` referrer levels; no torch counterpart."""
    lines, frontier, seen = [], [obj], {id(obj)}
    me = sys._getframe()
    # frames are not gc-tracked referrers on CPython 3.11+, so the call stack is read directly
    f = me.f_back
    while f is not None:
        names = [k for k, v in f.f_locals.items() if v is obj]
        if names:
            lines.append(f"variable {names} in {f.f_code.co_name} ({f.f_code.co_filename}:{f.f_lineno})")
        f = f.f_back
    for level in range(depth):
        nxt = []
        for target in frontier:
            for ref in gc.get_referrers(target):
                if id(ref) in seen or ref is frontier or ref is nxt or ref is lines:
                    continue
                seen.add(id(ref))
                if isinstance(ref, types.FrameType):
                    if ref is me:
                        continue
                    names = [k for k, v in ref.f_locals.items() if v is target]
                    lines.append(f"{'  ' * level}variable {names} in {ref.f_code.co_name} "
                                 f"({ref.f_code.co_filename}:{ref.f_lineno})")
                elif isinstance(ref, list):
                    lines.append(f"{'  ' * level}a list of {len(ref)} items")
                    nxt.append(ref)
                elif isinstance(ref, dict):
                    keys = [k for k, v in ref.items() if v is target]
                    lines.append(f"{'  ' * level}a dict under {keys}")
                    nxt.append(ref)
                elif type(ref).__name__ == "cell":
                    lines.append(f"{'  ' * level}a closure cell (hook or function)")
                    nxt.append(ref)
                elif not isinstance(ref, (types.ModuleType, type)):
                    lines.append(f"{'  ' * level}a {type(ref).__name__} object")
                    nxt.append(ref)
        frontier = nxt
        if not frontier:
            break
    return lines
