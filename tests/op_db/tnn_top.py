"""Op table: torch's top-level nn functions with their top-level signatures (issue 15, lane
tnn): torch.batch_norm, torch.layer_norm, torch.kl_div (int reductions), torch.embedding ..."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample, arr


def _s(*shapes, **kw):
    return lambda rng: [Sample(tuple(arr(rng, *s) for s in shapes), dict(kw))]


def _norm_stats(rng):
    x = arr(rng, 3, 2, 4)
    return [Sample((x, arr(rng, 2), arr(rng, 2)), {"training": t}) for t in (True, False)]


def _bn(m, x, w, b, training):
    # NOTE: running stats as plain (non-grad) tensors; torch updates them in place when training
    rm, rv = m.tensor([0.3, -0.2], dtype=x.dtype), m.tensor([1.5, 0.7], dtype=x.dtype)
    return m.batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5, False)


def _in(m, x, w, b):
    return m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False)


def _targets(rng):
    t = np.array([1.0, -1.0, 1.0, -1.0])
    return [Sample((arr(rng, 4, 3), arr(rng, 4, 3), t), {"reduction": r}) for r in (0, 1, 2)]


def _rank(rng):
    t = np.array([1.0, -1.0, 1.0, -1.0])
    return [Sample((arr(rng, 4), arr(rng, 4), t), {"reduction": r}) for r in (0, 1, 2)]


def _kl(rng):
    return [Sample((arr(rng, 3, 4), rng.uniform(0.1, 1.0, (3, 4))), {"reduction": r})
            for r in (0, 1, 2)]


def _emb(rng):
    return [Sample((arr(rng, 5, 3), np.array([[0, 2], [4, 2]], np.int64)), {}),
            Sample((arr(rng, 5, 3), np.array([1, 0, 1], np.int64)), {"padding_idx": -1})]


def _conv(rng):
    return [Sample((arr(rng, 2, 2, 5, 4), arr(rng, 3, 2, 3, 2), arr(rng, 3)),
                   {"stride": [1, 2], "padding": [1, 0], "dilation": [1, 1], "transposed": False,
                    "output_padding": [0, 0], "groups": 1}),
            Sample((arr(rng, 2, 2, 4), arr(rng, 2, 3, 3), arr(rng, 3)),
                   {"stride": [2], "padding": [1], "dilation": [1], "transposed": True,
                    "output_padding": [1], "groups": 1})]


OPS = [
    OpInfo("top_batch_norm", _bn, _norm_stats),
    OpInfo("top_instance_norm", _in, _s((2, 3, 4), (3,), (3,))),
    OpInfo("top_layer_norm", lambda m, x, w, b: m.layer_norm(x, [4], w, b, 1e-5, True),
           _s((3, 4), (4,), (4,))),
    OpInfo("top_group_norm", lambda m, x, w, b: m.group_norm(x, 2, w, b, 1e-5, True),
           _s((2, 4, 3), (4,), (4,))),
    OpInfo("top_rms_norm", lambda m, x, w: m.rms_norm(x, [4], w, 1e-6), _s((3, 4), (4,))),
    OpInfo("top_bilinear", lambda m, a, b, w, c: m.bilinear(a, b, w, c),
           _s((3, 2), (3, 4), (5, 2, 4), (5,))),
    OpInfo("top_bce_with_logits",
           lambda m, x, t, reduction: m.binary_cross_entropy_with_logits(
               x, t, m.tensor([0.5, 1.5, 1.0, 2.0], dtype=x.dtype),
               m.tensor([1.2, 0.8, 1.0, 3.0], dtype=x.dtype), reduction),
           lambda rng: [Sample((arr(rng, 3, 4), rng.uniform(0, 1, (3, 4))), {"reduction": r})
                        for r in (0, 1, 2)]),
    OpInfo("top_celu", lambda m, x: m.celu(x, 0.7), _s((3, 4))),
    OpInfo("top_selu", lambda m, x: m.selu(x), _s((3, 4))),
    OpInfo("top_hardshrink", lambda m, x: m.hardshrink(x, 0.6) + x.hardshrink(), _s((3, 4)),
           gradgrad=False),
    OpInfo("top_prelu", lambda m, x, w: m.prelu(x, w) + x.prelu(w), _s((2, 3, 4), (3,))),
    OpInfo("top_threshold", lambda m, x: m.threshold(x, 0.3, -1.0), _s((3, 4))),
    OpInfo("top_constant_pad_nd", lambda m, x: m.constant_pad_nd(x, [1, 2, -1, 0], 0.5),
           _s((3, 4))),
    OpInfo("top_embedding", lambda m, w, i, **k: m.embedding(w, i, **k), _emb),
    OpInfo("top_cosine_embedding_loss",
           lambda m, a, b, t, reduction: m.cosine_embedding_loss(a, b, t, 0.2, reduction),
           _targets),
    OpInfo("top_hinge_embedding_loss",
           lambda m, x, t, reduction: m.hinge_embedding_loss(x, t, 0.8, reduction),
           lambda rng: [Sample((arr(rng, 4), np.array([1.0, -1.0, -1.0, 1.0])),
                               {"reduction": r}) for r in (0, 1, 2)]),
    OpInfo("top_kl_div", lambda m, x, t, reduction: m.kl_div(x, t, reduction), _kl),
    OpInfo("top_margin_ranking_loss",
           lambda m, a, b, t, reduction: m.margin_ranking_loss(a, b, t, 0.1, reduction), _rank),
    OpInfo("top_poisson_nll_loss",
           lambda m, x, t: m.poisson_nll_loss(x, t, True, True, 1e-8, 1),
           lambda rng: [Sample((arr(rng, 3, 4), rng.uniform(0.5, 3.0, (3, 4))))]),
    OpInfo("top_triplet_margin_loss",
           lambda m, a, p, n, **k: m.triplet_margin_loss(a, p, n, 1.5, 2, 1e-6, **k),
           lambda rng: [Sample(tuple(arr(rng, 4, 3) for _ in range(3)),
                               {"swap": s, "reduction": r}) for s, r in ((False, 1), (True, 0))]),
    OpInfo("top_convolution", lambda m, x, w, b, **k: m.convolution(x, w, b, **k), _conv),
    OpInfo("top_dropout_eval", lambda m, x: m.dropout(x, 0.4, False) + m.feature_dropout(
        x, 0.4, False) + m.alpha_dropout(x, 0.4, False) + m.feature_alpha_dropout(x, 0.4, False),
        _s((2, 3, 4))),
]
