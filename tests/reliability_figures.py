"""Figures the reliability tests record as they run, printed by ``pytest_terminal_summary`` in
conftest.py ("glassgrad reliability: N bad-input cases tried, ...") and quoted in README.md."""

from __future__ import annotations

FIGURES: dict = {
    "bad_input_cases": 0,  # (op or layer, sample, mutation) cases run on torch and glassgrad
    "bad_input_raised": 0,  # of those, cases where both libraries raised
    "bad_input_tolerated": 0,  # cases that differ from torch in a documented, harmless way
    "property_examples": 0,  # hypothesis examples (random op compositions) checked
    "largest_graph_ops": 0,  # longest chain of recorded ops run forward, backward and freed
    "largest_graph_seconds": 0.0,
    "threads": 0,  # threads training independent models at once
    "memory_steps": 0,  # training steps of the flat-memory run
    "memory_growth_kib": None,  # traced memory growth over the second half of those steps
    "checkpoint_cases": 0,  # hostile or damaged checkpoint files refused
    "fuzz_cases": 0,  # random op programs run on torch and glassgrad (tests/fuzz_check.py)
    "fuzz_known": 0,  # of those, cases whose first difference is in a known class
}


def add(key: str, n: int = 1) -> None:
    FIGURES[key] = FIGURES.get(key, 0) + n


def record_max(key: str, value) -> None:
    if FIGURES.get(key) is None or value > FIGURES[key]:
        FIGURES[key] = value


def summary_line() -> str | None:
    """The one-line summary, or None when no reliability test ran."""
    f = FIGURES
    if not any((f["bad_input_cases"], f["property_examples"], f["largest_graph_ops"],
                f["threads"], f["memory_steps"], f["checkpoint_cases"], f["fuzz_cases"])):
        return None
    mem = ("memory not measured" if f["memory_growth_kib"] is None else
           f"memory flat within {f['memory_growth_kib']:.0f} KiB over {f['memory_steps']:,} steps")
    return (
        f"glassgrad reliability: {f['bad_input_cases']:,} bad-input cases tried "
        f"({f['bad_input_raised']:,} raised on both, {f['bad_input_tolerated']:,} documented "
        f"differences), {f['property_examples']:,} property "
        f"examples, largest graph {f['largest_graph_ops']:,} ops, {f['threads']} threads, {mem}, "
        f"{f['checkpoint_cases']:,} hostile checkpoints refused, {f['fuzz_cases']:,} differential "
        f"fuzz cases ({f['fuzz_known']:,} known differences)"
    )
