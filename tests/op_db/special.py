"""Op table entries: inverse hyperbolic and special functions (glassgrad/ops/special_ops.py)."""

from . import OpInfo, Sample, binary_samples, unary_samples

_unit = unary_samples((-0.9, 0.9))
_prob = unary_samples((0.05, 0.95))


def _xlogy_zeros(rng):
    """x with exact zeros (gradient w.r.t. x is 0 there) against positive y."""
    x = rng.uniform(0.2, 2.0, size=(3, 4))
    x[0, :2] = 0.0
    return [Sample((x, rng.uniform(0.2, 2.0, size=(3, 4))), desc="zeros in x")]


OPS = [
    OpInfo("asinh", lambda m, x: m.asinh(x), unary_samples()),
    OpInfo("acosh", lambda m, x: m.acosh(x), unary_samples((1.1, 3.0))),
    OpInfo("atanh", lambda m, x: m.atanh(x), _unit),
    OpInfo("arctanh_method", lambda m, x: x.arctanh() + x.asinh(), _unit),
    OpInfo("logit", lambda m, x: m.logit(x), _prob),
    OpInfo("logit_eps", lambda m, x: m.logit(x, eps=0.2), _prob),
    OpInfo("logit_method", lambda m, x: x.logit(0.1), _prob),
    OpInfo("xlogy", lambda m, x, y: m.xlogy(x, y), binary_samples(domain2=(0.2, 2.0))),
    OpInfo("xlogy_zeros", lambda m, x, y: m.xlogy(x, y), _xlogy_zeros),
    OpInfo("xlogy_scalar_other", lambda m, x: m.xlogy(x, 2.5), unary_samples()),
    OpInfo("xlogy_scalar_self", lambda m, y: m.xlogy(1.5, y), unary_samples((0.2, 2.0))),
    OpInfo("xlogy_method", lambda m, x, y: x.xlogy(y), binary_samples(domain2=(0.2, 2.0))),
    OpInfo("erfc", lambda m, x: m.erfc(x), unary_samples()),
    OpInfo("erfc_method", lambda m, x: x.erfc(), unary_samples()),
    OpInfo("erfinv", lambda m, x: m.erfinv(x), _unit),
    OpInfo("erfinv_method", lambda m, x: x.erfinv(), _unit),
]
