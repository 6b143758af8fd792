"""Op table entries: rrelu (issue 16, lane loss). Eval is deterministic; training draws its slopes
from a generator seeded inside the entry, so torch and glassgrad (and every finite-difference
re-run) see the same slopes."""

from . import OpInfo, unary_samples


def _seeded(m):
    return m.Generator().manual_seed(7)


OPS = [
    OpInfo("nn.functional.rrelu", lambda m, x: m.nn.functional.rrelu(x, 0.1, 0.4),
           unary_samples()),
    OpInfo("rrelu_training", lambda m, x: m.rrelu(x, 0.2, 0.6, True, _seeded(m)),
           unary_samples()),
    OpInfo("rrelu_training_default_bounds",
           lambda m, x: m.rrelu(x, training=True, generator=_seeded(m)) * 2.0, unary_samples()),
]
