"""The per-rank timeline of DDP's bucket reductions (glass box; no PyTorch counterpart): for each
bucket of one iteration, when its last gradient arrived (and which parameter that was), when its
all-reduce was launched, when it was seen complete, and how long ``finalize`` blocked on it.
Times are seconds from the iteration's first gradient hook (the start of backward, as DDP sees it).

Reading it: ``launched - ready`` > 0 means the bucket waited on an earlier bucket (reductions go
in bucket order on every rank); ``blocked`` is the all-reduce time backward did not hide.
"""

from __future__ import annotations


class IterationTimeline:
    """One rank's bucket events of one iteration; ``as_dict()`` the data, ``str()`` a text table."""

    def __init__(self, rank: int, iteration: int, buckets, names) -> None:
        self.rank, self.iteration = rank, iteration
        self.start = None
        self.end = None
        self.buckets = [{
            "bucket": b.index, "params": [names[i] for i in b.indices], "bytes": b.nbytes,
            "ready": None, "last_grad": None, "launched": None, "done": None,
            "wait_start": None, "wait_end": None,
        } for b in buckets]

    def _t(self, t):
        return None if t is None or self.start is None else t - self.start

    def backward_started(self, t) -> None:
        self.start = t

    def bucket_ready(self, k: int, t, last_name: str) -> None:
        self.buckets[k]["ready"], self.buckets[k]["last_grad"] = t, last_name

    def bucket_launched(self, k: int, t) -> None:
        self.buckets[k]["launched"] = t

    def is_done(self, k: int) -> bool:
        return self.buckets[k]["done"] is not None

    def bucket_done(self, k: int, t) -> None:
        self.buckets[k]["done"] = t

    def bucket_waited(self, k: int, start, end) -> None:
        entry = self.buckets[k]
        entry["wait_start"], entry["wait_end"] = start, end
        if entry["done"] is None:
            entry["done"] = end

    def finished(self, t) -> None:
        self.end = t

    def as_dict(self) -> dict:
        """``{"rank", "iteration", "backward_s", "buckets": [{bucket, params, bytes, ready,
        last_grad, launched, done, blocked, in_flight}]}``, times in seconds from the start of
        backward; ``hidden_fraction``: the share of the all-reduce time (launch to done) that
        overlapped backward instead of blocking ``finalize``."""
        rows = []
        total = blocked = 0.0
        for e in self.buckets:
            in_flight = (e["done"] - e["launched"]) if e["launched"] is not None else 0.0
            wait = (e["wait_end"] - e["wait_start"]) if e["wait_start"] is not None else 0.0
            total += in_flight
            blocked += min(wait, in_flight)
            rows.append({
                "bucket": e["bucket"], "params": e["params"], "bytes": e["bytes"],
                "ready": self._t(e["ready"]), "last_grad": e["last_grad"],
                "launched": self._t(e["launched"]), "done": self._t(e["done"]),
                "blocked": wait, "in_flight": in_flight,
            })
        return {
            "rank": self.rank, "iteration": self.iteration,
            "backward_s": self._t(self.end), "buckets": rows,
            "allreduce_s": total, "blocked_s": blocked,
            "hidden_fraction": (1.0 - blocked / total) if total > 0 else None,
        }

    def __str__(self) -> str:
        d = self.as_dict()
        lines = [f"rank {d['rank']} iteration {d['iteration']}: backward+finalize "
                 f"{_ms(d['backward_s'])}, all-reduce in flight {_ms(d['allreduce_s'])}, "
                 f"blocked {_ms(d['blocked_s'])}"
                 + (f", hidden {d['hidden_fraction']:.0%}" if d["hidden_fraction"] is not None
                    else ""),
                 f"{'bucket':>6} {'bytes':>10} {'ready':>9} {'launched':>9} {'done':>9} "
                 f"{'blocked':>9}  waited on"]
        rows = d["buckets"]
        for k, r in enumerate(rows):
            waited = f"grad of {r['last_grad']}"
            if k and None not in (r["ready"], rows[k - 1]["ready"]) \
                    and rows[k - 1]["ready"] > r["ready"]:
                waited += f", then bucket {k - 1} (launch order)"
            lines.append(f"{r['bucket']:>6} {r['bytes']:>10} {_ms(r['ready']):>9} "
                         f"{_ms(r['launched']):>9} {_ms(r['done']):>9} {_ms(r['blocked']):>9}  "
                         f"{waited} [{len(r['params'])} params]")
        return "\n".join(lines)


def _ms(t) -> str:
    return "-" if t is None else f"{t * 1e3:.2f}ms"


def merge_ranks(timelines) -> str:
    """The text of several ranks' timelines (``IterationTimeline`` or their ``as_dict()``) one
    after the other, for a side-by-side read of what waited on what."""
    return "\n\n".join(str(t) if isinstance(t, IterationTimeline) else format_dict(t)
                       for t in timelines)


def format_dict(d: dict) -> str:
    """A timeline ``as_dict()`` (for instance gathered from another rank) as text."""
    lines = [f"rank {d['rank']} iteration {d['iteration']}: hidden "
             + (f"{d['hidden_fraction']:.0%}" if d.get("hidden_fraction") is not None else "-")]
    for r in d["buckets"]:
        lines.append(f"  bucket {r['bucket']}: ready {_ms(r['ready'])} launched "
                     f"{_ms(r['launched'])} done {_ms(r['done'])} blocked {_ms(r['blocked'])} "
                     f"(last grad {r['last_grad']})")
    return "\n".join(lines)
