"""``MemoryTimeline.plot``: the stacked live bytes of one window as a PNG (matplotlib, Agg)."""

from __future__ import annotations

import os

COLOURS = {"parameters": "#1e88e5", "gradients": "#43a047", "optimizer_state": "#8e24aa",
           "saved_for_backward": "#fb8c00", "activations": "#fdd835", "other": "#9e9e9e"}


def _scale(most: int) -> tuple:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if most >= div:
            return unit, div
    return "B", 1


def plot(tl, path: str, title: str | None, dpi: int) -> str:
    try:
        import matplotlib
    except ImportError as e:  # pragma: no cover - an examples/test dependency
        raise ImportError("MemoryTimeline.plot needs matplotlib: pip install matplotlib") from e
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    kinds = [k for k in COLOURS if any(tl.series[k])]
    unit, div = _scale(max((tl.total(i) for i in range(len(tl.t))), default=0))
    x = list(range(len(tl.t)))
    fig, ax = plt.subplots(figsize=(7.5, 3.4), dpi=dpi)
    ax.stackplot(x, *[[v / div for v in tl.series[k]] for k in kinds],
                 labels=[k.replace("_", " ") for k in kinds],
                 colors=[COLOURS[k] for k in kinds], step="post", linewidth=0)
    p = tl.peak
    if p.get("op"):
        i = tl.t.index(p["t"])
        where = os.path.basename(p["source"] or "?")
        ax.annotate(f"peak {p['bytes'] / div:.1f} {unit}\n{p['op']}  {where}",
                    (i, p["bytes"] / div),
                    xytext=(0.55, 0.93), textcoords="axes fraction", fontsize=8, va="top",
                    arrowprops={"arrowstyle": "->", "color": "#333"})
    for q in tl.phase_peaks:  # where each phase starts (the first event recorded in it)
        first = next((k for k, e in enumerate(tl.events) if e["phase"] == q["phase"]), None)
        if first is not None and q["phase"] in ("backward", "optimizer"):
            ax.axvline(first + 1, color="#555", linestyle=":", linewidth=0.8)
            ax.text(first + 1, 0, " " + q["phase"], rotation=90, fontsize=7, va="bottom")
    ax.set_xlabel("allocation / free events")
    ax.set_ylabel(f"live tensor bytes ({unit})")
    ax.set_title(title or f"glassgrad memory timeline: {tl.label}", fontsize=10)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    ax.margins(x=0)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
