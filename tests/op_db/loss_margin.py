"""Op table entries: the margin, multi-label, Gaussian and distance-function losses of issue 16
(``nn.functional.multi_margin_loss`` ...). torch's multi_margin and multilabel_margin backwards
are not differentiable (``derivative for aten::multi_margin_loss_backward is not implemented``),
so those entries skip the double-backward checks; tests/test_nn_loss_more.py runs glassgrad's
gradgradcheck on them.
"""

import numpy as np

from . import OpInfo, Sample, arr, positive

_REDUCTIONS = ("none", "mean", "sum")


def _multi_margin(rng):
    return [
        Sample((arr(rng, 3, 4), np.array([0, 3, 1])), {"reduction": "none"}, desc="none"),
        Sample((arr(rng, 4), np.array(2)), {"p": 2, "margin": 0.5}, desc="vector p 2"),
        Sample((arr(rng, 5, 3), np.array([2, 0, 1, 1, 0])),
               {"p": 2, "weight": np.array([0.5, 1.5, 2.0]), "reduction": "sum"}, desc="weight"),
    ]


def _multilabel_margin(rng):
    return [Sample((arr(rng, 3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])),
                   {"reduction": r}, desc=r) for r in _REDUCTIONS] + [
        Sample((arr(rng, 4), np.array([2, 1, -1, 0])), {"reduction": "none"}, desc="vector")]


def _soft_margin(rng):
    return [Sample((arr(rng, 3, 4), rng.integers(0, 2, (3, 4)).astype(float)),
                   {"reduction": r}, desc=r) for r in _REDUCTIONS] + [
        Sample((arr(rng, 2, 3), rng.uniform(0, 1, (2, 3)), positive(rng, 3)), desc="weight")]


def _gaussian(rng):
    return [
        Sample((arr(rng, 3, 4), arr(rng, 3, 4), positive(rng, 3, 4)), desc="heteroscedastic"),
        Sample((arr(rng, 3, 4), arr(rng, 3, 4), positive(rng, 3)),
               {"full": True, "reduction": "sum"}, desc="one dim short"),
        Sample((arr(rng, 2, 3), arr(rng, 2, 3), rng.uniform(0.0, 0.3, (2, 1))),
               {"eps": 0.1, "reduction": "none"}, desc="clamped at eps"),
    ]


def _triplets(rng):
    return [Sample(tuple(arr(rng, 4, 3) for _ in range(3)), {"swap": s, "reduction": r},
                   desc=f"swap {s} {r}") for s, r in ((False, "mean"), (True, "none"))]


def _l1_distance(x, y):
    return (x - y).abs().sum(-1)


OPS = [
    OpInfo("nn.functional.multi_margin_loss",
           lambda m, x, t, weight=None, **k: m.nn.functional.multi_margin_loss(
               x, t, weight=None if weight is None else x.new_tensor(weight), **k),
           _multi_margin, gradgrad=False),
    OpInfo("nn.functional.multilabel_margin_loss",
           lambda m, x, t, **k: m.nn.functional.multilabel_margin_loss(x, t, **k),
           _multilabel_margin, gradgrad=False),
    OpInfo("nn.functional.multilabel_soft_margin_loss",
           lambda m, x, t, w=None, **k: m.nn.functional.multilabel_soft_margin_loss(
               x, t, weight=w, **k), _soft_margin),
    OpInfo("nn.functional.gaussian_nll_loss",
           lambda m, x, t, v, **k: m.nn.functional.gaussian_nll_loss(x, t, v, **k), _gaussian),
    OpInfo("nn.functional.triplet_margin_with_distance_loss",
           lambda m, a, p, n, **k: m.nn.functional.triplet_margin_with_distance_loss(
               a, p, n, margin=1.5, **k), _triplets),
    OpInfo("triplet_margin_with_distance_loss_l1",
           lambda m, a, p, n, **k: m.nn.functional.triplet_margin_with_distance_loss(
               a, p, n, distance_function=_l1_distance, **k), _triplets),
]
