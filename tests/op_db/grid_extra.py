"""Op table (issue 16, lane grid): ``conv_tbc`` (F. and torch.), ``F.gumbel_softmax``
(both libraries seeded alike: glassgrad's exponential stream is torch's, so the noise is the
same and the straight-through gradient of ``hard=True`` is compared too) and
``F.upsample_bilinear``. ``F.pdist`` is ``torch.pdist`` (tests/op_db/ops_numeric.py; its
gradient in tests/test_nn_grid.py, since torch's pdist backward segfaults on the empty inputs
of the bad-input sweep)."""

from __future__ import annotations

import warnings

from . import OpInfo, Sample, arr


def _tbc(rng):
    return [Sample((arr(rng, 4, 2, 3), arr(rng, 2, 3, 2), arr(rng, 2)), {"pad": p}, desc=f"pad {p}")
            for p in (0, 1, -1)] + [
        Sample((arr(rng, 2, 1, 2), arr(rng, 4, 2, 3), arr(rng, 3)), {"pad": 1},
               desc="kernel longer than time, padded"),
        # NOTE: torch's conv_tbc raises "view size is not compatible" for a non-contiguous input
        Sample((arr(rng, 3, 2, 2), arr(rng, 1, 2, 2), arr(rng, 2)), desc="kernel 1")]


def _gumbel(m, logits, **kw):
    m.manual_seed(7)
    return m.nn.functional.gumbel_softmax(logits, **kw)


def _gumbel_samples(rng):
    return [Sample((arr(rng, 3, 5),), {"tau": t, "hard": h, "dim": d},
                   desc=f"tau={t} hard={h} dim={d}")
            # NOTE: soft samples first: gradcheck takes the first two, and hard=True's
            # straight-through gradient is by design not the derivative of its one-hot forward
            for t, h, d in [(1.0, False, -1), (0.7, False, 0), (0.5, True, -1), (2.0, True, 0)]]


def _upsample_bilinear(m, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecation warning: tests/test_nn_grid.py
        return m.nn.functional.upsample_bilinear(x, **kw)


OPS = [
    OpInfo("F.conv_tbc", lambda m, x, w, b, **kw: m.nn.functional.conv_tbc(x, w, b, **kw), _tbc),
    OpInfo("torch.conv_tbc", lambda m, x, w, b, pad=0: m.conv_tbc(x, w, b, pad), _tbc),
    OpInfo("F.gumbel_softmax", _gumbel, _gumbel_samples),
    OpInfo("F.upsample_bilinear", _upsample_bilinear,
           lambda rng: [Sample((arr(rng, 1, 2, 2, 3),), {"scale_factor": 2}, desc="scale 2"),
                        Sample((arr(rng, 2, 1, 3, 2),), {"size": (4, 5)}, desc="size")]),
]
