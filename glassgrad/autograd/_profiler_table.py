"""The text table of ``EventList.table`` (PyTorch's columns and layout, CPU columns only)."""

from __future__ import annotations

import math

from .profiler_util import _format_time

_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


def _format_memory(nbytes) -> str:
    """``8 B``, ``39.06 KB``, ``1.50 MB``: PyTorch's table format of a byte count (1 KB = 1024 B)."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


_FLOP_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")


def build_table(events, sort_by, row_limit, max_name_width, max_shapes_width, header,
                top_level_only, time_unit, profile_memory=False, with_flops=False) -> str:
    """``events`` (FunctionEvents or FunctionEventAvgs) as PyTorch's table; see EventList.table."""
    if time_unit is not None and time_unit not in _UNITS:
        raise ValueError(f"table: time_unit must be one of {sorted(_UNITS)}, got {time_unit!r}")
    rows = list(events)
    if not rows:
        return ""
    total_self = sum(e.self_cpu_time_total for e in rows)
    if top_level_only:
        rows = [e for e in rows if e.cpu_parent is None]
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    has_shapes = any(e.input_shapes for e in rows)

    def fmt(t):
        if time_unit is None:
            return _format_time(t)
        return f"{t / _UNITS[time_unit]:.3f}{time_unit}"

    def pct(t):
        return f"{100.0 * t / total_self:.2f}%" if total_self else "0.00%"

    name_w = min(max(len(e.key) for e in rows) + 4, max_name_width)
    heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        heads += ["CPU Mem", "Self CPU Mem"]
    heads.append("# of Calls")
    widths = [name_w] + [12] * (len(heads) - 1)
    if has_shapes:
        shapes_w = min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes_width)
        heads.append("Input Shapes")
        widths.append(shapes_w)
    flop_scale = None
    if with_flops and any(e.flops for e in rows):
        top = max(e.flops or 0 for e in rows)
        k = min(int(math.log10(top)) // 3, len(_FLOP_UNITS) - 1)
        flop_scale = 10.0 ** (3 * k)
        heads.append(f"Total {_FLOP_UNITS[k]}")
        widths.append(12)

    def line(cells):
        return "".join(str(c)[:w].rjust(w) + "  " for c, w in zip(cells, widths))

    rule = "".join("-" * w + "  " for w in widths)
    out = []
    if header is not None:
        out += ["=" * len(rule), header]
    out += [rule, line(heads), rule]
    for e in rows:
        name = e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "..."
        cells = [name, pct(e.self_cpu_time_total), fmt(e.self_cpu_time_total),
                 pct(e.cpu_time_total), fmt(e.cpu_time_total), fmt(e.cpu_time)]
        if profile_memory:
            cells += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        cells.append(e.count)
        if has_shapes:
            cells.append(str(e.input_shapes))
        if flop_scale is not None:
            cells.append(f"{e.flops / flop_scale:.3f}" if e.flops else "--")
        out.append(line(cells))
    out += [rule, f"Self CPU time total: {fmt(total_self)}", ""]
    return "\n".join(out)
