"""The bucket timeline of every rank as one self-contained HTML page (inline SVG, no network):
one lane per rank, per bucket a bar from launch to completion, its blocked part (the time
``finalize`` waited: communication backward did not hide) in red, a tick where its last gradient
arrived; below, the numbers as a table."""

from __future__ import annotations

import html

_FIELDS = ("ready", "launched", "done", "blocked")
_LANE_H, _BAR_H, _LEFT, _WIDTH = 22, 8, 70, 760


def gather_timelines(ddp) -> list:
    """Every rank's last timeline (as ``bucket_timeline()``, without parameter names but rank 0's
    bucket layout): one all-reduce of a (world, buckets, 4) table; every rank must call it."""
    from ... import _factories, dtypes
    from ... import distributed as dist

    mine = ddp.bucket_timeline()
    if mine is None:
        raise RuntimeError("gather_timelines(): no synchronised backward has run yet")
    world, rank = dist.get_world_size(ddp.process_group), dist.get_rank(ddp.process_group)
    rows = mine["buckets"]
    table = _factories.zeros(world, len(rows), len(_FIELDS), dtype=dtypes.float64)
    for k, r in enumerate(rows):
        for j, field in enumerate(_FIELDS):
            table[rank, k, j] = float(r[field] or 0.0)
    dist.all_reduce(table, group=ddp.process_group)
    values = table.tolist()
    return [{"rank": q, "iteration": mine["iteration"], "buckets": [
        dict(rows[k], **dict(zip(_FIELDS, values[q][k]))) for k in range(len(rows))]}
        for q in range(world)]


def timeline_html(timelines, title: str = "glassgrad DDP: bucket reductions per rank") -> str:
    """The page for a list of ``bucket_timeline()`` dicts (one per rank)."""
    end = max((r["done"] or 0.0) for t in timelines for r in t["buckets"]) or 1e-3
    scale = _WIDTH / end
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 20}" '
             f'height="{_LANE_H * (len(timelines) + 1) + 10}" font-family="monospace" '
             'font-size="11">']
    for lane, t in enumerate(timelines):
        y = 10 + lane * _LANE_H
        parts.append(f'<text x="4" y="{y + _BAR_H}">rank {t["rank"]}</text>')
        for r in t["buckets"]:
            x0, x1 = _LEFT + r["launched"] * scale, _LEFT + r["done"] * scale
            blocked = min(r["blocked"], r["done"] - r["launched"]) * scale
            tip = html.escape(f"bucket {r['bucket']}: {r['bytes']} bytes, ready "
                              f"{r['ready'] * 1e3:.2f} ms, launched {r['launched'] * 1e3:.2f} ms, "
                              f"done {r['done'] * 1e3:.2f} ms, blocked {r['blocked'] * 1e3:.2f} ms")
            parts.append(f'<g><title>{tip}</title><rect x="{x0:.1f}" y="{y}" '
                         f'width="{max(x1 - x0, 1):.1f}" height="{_BAR_H}" fill="#9ecae1" '
                         f'stroke="#3182bd"/><rect x="{x1 - blocked:.1f}" y="{y}" '
                         f'width="{blocked:.1f}" height="{_BAR_H}" fill="#de2d26"/>'
                         f'<line x1="{_LEFT + r["ready"] * scale:.1f}" y1="{y - 3}" '
                         f'x2="{_LEFT + r["ready"] * scale:.1f}" y2="{y + _BAR_H + 3}" '
                         f'stroke="black"/><text x="{x0 + 2:.1f}" y="{y + _BAR_H + 10}">'
                         f'{r["bucket"]}</text></g>')
    y = 10 + len(timelines) * _LANE_H
    parts.append(f'<text x="{_LEFT}" y="{y + 4}">0 ms</text><text x="{_LEFT + _WIDTH - 60}" '
                 f'y="{y + 4}">{end * 1e3:.1f} ms</text></svg>')
    head = ("<tr><th>rank</th><th>bucket</th><th>bytes</th><th>last gradient</th>"
            + "".join(f"<th>{f} (ms)</th>" for f in _FIELDS) + "</tr>")
    body = "".join(
        f"<tr><td>{t['rank']}</td><td>{r['bucket']}</td><td>{r['bytes']}</td>"
        f"<td>{html.escape(str(r.get('last_grad') or ''))}</td>"
        + "".join(f"<td>{r[f] * 1e3:.2f}</td>" for f in _FIELDS) + "</tr>"
        for t in timelines for r in t["buckets"])
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            "</title><style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right;"
            "font-family:monospace}</style></head><body>"
            f"<h3>{html.escape(title)}</h3><p>Times from the first gradient hook of iteration "
            f"{timelines[0]['iteration']}. Blue: all-reduce in flight; red: the part finalize "
            "blocked on; tick: the bucket's last gradient arrived.</p>"
            + "".join(parts) + f"<table>{head}{body}</table></body></html>")
