"""Op table entries: CTC loss (issue 16, lane loss). torch's gradient is the one with respect to
the logits behind a log_softmax, so each entry applies log_softmax first (the combined gradient
is then the true one, which gradcheck checks); torch's backward is not differentiable again."""

import numpy as np

from . import OpInfo, Sample, arr

_PADDED = np.array([[1, 2, 2], [3, 1, 0], [4, 0, 0]])


def _samples(rng):
    return [
        Sample((arr(rng, 4, 2, 3), np.array([[1, 2], [2, 0]]), (4, 3), (2, 1)), desc="tiny"),
        Sample((arr(rng, 3, 4), np.array([2, 1]), np.array(3), np.array(2)),
               {"reduction": "sum"}, desc="unbatched"),
        Sample((arr(rng, 7, 3, 5), _PADDED, (7, 6, 5), (3, 2, 1)), desc="padded mean"),
        Sample((arr(rng, 7, 3, 5), np.array([1, 2, 2, 3, 1, 4]), np.array([7, 6, 5]),
                np.array([3, 2, 1])), {"reduction": "none", "blank": 0}, desc="concatenated"),
        Sample((arr(rng, 6, 3, 5), _PADDED, (6, 2, 5), (3, 2, 0)),
               {"reduction": "none", "zero_infinity": True, "blank": 0}, desc="zero_infinity"),
        Sample((arr(rng, 6, 2, 4), np.array([[0, 1, 0], [2, 2, 1]]), (6, 6), (3, 3)),
               {"blank": 3, "reduction": "sum"}, desc="blank 3, repeats"),
    ]


def _ctc(m, x, targets, input_lengths, target_lengths, **kwargs):
    as_tensor = (lambda v: m.tensor(v)) if isinstance(input_lengths, np.ndarray) else \
        (lambda v: v)
    return m.nn.functional.ctc_loss(x.log_softmax(-1), targets, as_tensor(input_lengths),
                                    as_tensor(target_lengths), **kwargs)


OPS = [
    OpInfo("nn.functional.ctc_loss", _ctc, _samples, gradgrad=False, atol=1e-5, rtol=1e-4),
]
