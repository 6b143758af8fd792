"""Op table entries for the primitives of activations, losses, norms and selections that no
other table reaches (softmax, silu, linear, batch_norm, mse/bce/nll losses, clamp by tensors,
sort/topk values, stack/unbind): added with forward AD (tests/test_forward_ad_ops.py checks
every entry's JVP), and checked like every entry by tests/test_ops.py."""

import numpy as np

from . import OpInfo, Sample, arr, positive


def _one(*shapes, **kwargs):
    return lambda rng: [Sample(tuple(arr(rng, *s) for s in shapes), dict(kwargs))]


def _f(name):
    return lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k)


def _nll_samples(rng):
    return [Sample((arr(rng, 4, 3), np.array([0, 2, 1, 2])), desc="batch")]


def _bce_samples(rng):
    return [Sample((rng.uniform(0.1, 0.9, (3, 2)), rng.uniform(0, 1, (3, 2))), desc="probs")]


def _clamp_samples(rng):
    return [Sample((arr(rng, 3, 4), arr(rng, 4, lo=-2, hi=-0.5), arr(rng, 3, 1, lo=0.5, hi=2)))]


OPS = [
    OpInfo("softmax_dim", lambda m, x: m.softmax(x, 1), _one((3, 4))),
    OpInfo("log_softmax_dim", lambda m, x: m.log_softmax(x, 0), _one((3, 4))),
    OpInfo("silu", _f("silu"), _one((3, 4))),
    OpInfo("mish", _f("mish"), _one((3, 4))),
    OpInfo("softplus", _f("softplus"), _one((3, 4), beta=2.0)),
    OpInfo("leaky_relu", _f("leaky_relu"), _one((3, 4), negative_slope=0.2)),
    OpInfo("hardswish", _f("hardswish"), lambda rng: [Sample((rng.uniform(-4, 4, (7,)),))],
           gradcheck_samples=0),  # kinks at +-3 within finite differences' reach
    OpInfo("linear", _f("linear"), _one((2, 3), (4, 3), (4,))),
    OpInfo("batch_norm_train", lambda m, x, w, b: m.nn.functional.batch_norm(
        x, None, None, w, b, training=True), _one((4, 3), (3,), (3,))),
    OpInfo("mse_loss", _f("mse_loss"), _one((3, 4), (3, 4))),
    OpInfo("binary_cross_entropy", _f("binary_cross_entropy"), _bce_samples),
    OpInfo("bce_with_logits", _f("binary_cross_entropy_with_logits"), _one((3, 2), (3, 2))),
    OpInfo("nll_loss", lambda m, x, t: m.nn.functional.nll_loss(x.log_softmax(1), t),
           _nll_samples),
    OpInfo("clamp_tensors", lambda m, x, lo, hi: m.clamp(x, lo, hi), _clamp_samples),
    OpInfo("sort_values", lambda m, x: m.sort(x, 1)[0], _one((3, 4))),
    OpInfo("topk_values", lambda m, x: m.topk(x, 2)[0], _one((3, 4))),
    OpInfo("stack_unbind", lambda m, x, y: m.stack([x, y], 1).unbind(0), _one((3, 4), (3, 4))),
    OpInfo("rsub_div_scalar", lambda m, x: (2 - x) / 3, _one((3, 4))),
    OpInfo("sqrt_rsqrt_chain", lambda m, x: x.sqrt() * x.rsqrt().log2() + x.log10().expm1(),
           lambda rng: [Sample((positive(rng, 3, 4),))]),
]
