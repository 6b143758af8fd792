"""Op table entries: linear_cross_entropy (torch 2.13; issue 16, lane loss), on the reference
path and on the chunked one (torch's chunked op has no second derivative, so that entry skips
the double-backward checks). The K-dimensional form is tested in tests/test_nn_loss_adaptive.py."""

import numpy as np

from . import OpInfo, Sample, arr


def _samples(rng):
    return [
        Sample((arr(rng, 5, 3), arr(rng, 4, 3), np.array([0, 3, 1, 1, 2])), desc="indices"),
        Sample((arr(rng, 6, 3), arr(rng, 4, 3), np.array([0, 3, -100, 1, 2, 2]), arr(rng, 4)),
               {"weight": np.array([0.5, 1.0, 2.0, 1.5]), "reduction": "sum"},
               desc="bias weight ignored"),
        Sample((arr(rng, 6, 3), arr(rng, 4, 3), np.array([0, 3, 1, 1, 3, 2])),
               {"weight": np.array([0.5, 1.0, 2.0, 1.5])}, desc="weighted mean"),
        Sample((arr(rng, 3), arr(rng, 4, 3), np.array(2)), {"reduction": "none"},
               desc="unbatched"),
    ]


def _reference_samples(rng):
    return _samples(rng) + [
        Sample((arr(rng, 4, 3), arr(rng, 5, 3), rng.uniform(0, 1, (4, 5))), desc="probabilities"),
    ]


def _lce(chunk):
    def fn(m, x, w, t, b=None, weight=None, **kwargs):
        options = m.nn.LinearCrossEntropyOptions(batch_chunk_size=2) if chunk else None
        weight = None if weight is None else w.new_tensor(weight)
        return m.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b, weight=weight,
                                                    options=options, **kwargs)

    return fn


OPS = [
    OpInfo("nn.functional.linear_cross_entropy", _lce(False), _reference_samples),
    OpInfo("linear_cross_entropy_chunked", _lce(True), _samples, gradgrad=False),
]
