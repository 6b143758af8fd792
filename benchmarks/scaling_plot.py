"""The scaling plot of bench row 11 (issue 20): time per MLP step against size, log-log.

``make bench`` writes it (``--plot PATH``, default ``docs/bench_scaling.png``) whenever at least
two row-11 rows ran: one panel per series (hidden width at batch 128, batch at hidden 256), the
median time of each library, and the ratio glassgrad/torch beside each point.
"""

from __future__ import annotations

from benchmarks.scaling_workloads import scaling_points

DEFAULT_PATH = "docs/bench_scaling.png"
_LIBS = (("glassgrad", "tab:blue", "o"), ("torch", "tab:orange", "s"))


def series_of(results: list) -> dict:
    """``{"hidden": [(size, {lib: median_s})...], "batch": [...]}`` from ``run.py``'s results."""
    series = {"hidden": [], "batch": []}
    for result in results:
        for name, size in scaling_points(result["key"]):
            series[name].append((size, result["median_s"]))
    return {name: sorted(points) for name, points in series.items() if points}


def write_plot(results: list, header: dict, path: str = DEFAULT_PATH) -> str | None:
    """Draw the plot to ``path`` (PNG); returns the path, or None when fewer than two row-11
    rows ran or matplotlib is not installed (the table is printed either way)."""
    series = series_of(results)
    if sum(len(points) for points in series.values()) < 2:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, len(series), figsize=(5.2 * len(series), 4.2), squeeze=False)
    labels = {"hidden": "hidden width (batch 128)", "batch": "batch size (hidden 256)"}
    for ax, (name, points) in zip(axes[0], series.items()):
        sizes = [size for size, _ in points]
        for lib, color, marker in _LIBS:
            ax.plot(sizes, [median[lib] * 1e3 for _, median in points], marker=marker,
                    color=color, label=lib)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        for size, median in points:
            ax.annotate(f"{median['glassgrad'] / median['torch']:.2f}",
                        (size, median["glassgrad"] * 1e3), textcoords="offset points",
                        xytext=(4, 6), fontsize=8, color=_LIBS[0][1])
        ax.set_xlabel(labels[name])
        ax.set_ylabel("median time per step (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    blas, m = header["blas"], header["machine"]
    fig.suptitle(f"MLP 784-h-h-10 SGD step; {m['cpu']}; {blas['name']}, {blas['threads']} "
                 f"BLAS thread(s); torch {header['torch']['version']} "
                 f"({header['torch']['threads']}); load average "
                 f"{header.get('load_average_start')}; numbers: ratio glassgrad/torch", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
