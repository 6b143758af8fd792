"""Op table entries of the autograd lane: ``slice_inverse`` (glassgrad/ops/slice_inverse.py).
Gradients reach ``src`` through both arguments."""

from . import OpInfo, Sample


def _inverse(m, src, part, dim, start, end, step):
    # NOTE: a storage shaped as src that holds src outside the slice (what functionalization
    # passes, and where PyTorch's derivative is the true one), the slice a function of part
    index = (slice(None),) * dim + (slice(start, end, step),)
    whole = src * 1
    whole[index] = src[index] * part.sum()
    return m.slice_inverse(whole[index], src, dim, start, end, step)


def _samples(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(3, 4), u(2)), kwargs=dict(dim=1, start=1, end=3, step=1), desc="columns"),
            Sample((u(7), u(1)), kwargs=dict(dim=0, start=1, end=None, step=2), desc="strided"),
            Sample((u(4, 3), u(3)), kwargs=dict(dim=-2, start=None, end=2, step=1), desc="-dim")]


OPS = [
    OpInfo("slice_inverse", _inverse, _samples),
]
