"""Op table entries: order statistics (issue 15, lane ops): median, nanmedian, mode, quantile,
nanquantile, nanmean, cummax, cummin (values, indices and gradients against torch)."""

import numpy as np

from . import OpInfo, Sample, arr

_NAN = float("nan")


def _distinct(rng, *shape):
    """Values without ties, so that every order statistic has one well-defined index."""
    n = int(np.prod(shape)) if shape else 1
    return (rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.01, n)).reshape(shape)


def _with_nan(rng, *shape, where=()):
    x = _distinct(rng, *shape)
    for idx in where:
        x[idx] = _NAN
    return x


def _median_samples(rng):
    return [
        Sample((_distinct(rng),), desc="0-d all"),
        Sample((_distinct(rng, 6),), desc="vector even"),
        Sample((_distinct(rng, 7),), desc="vector odd"),
        Sample((_distinct(rng, 3, 4),), {"dim": 1}, desc="dim=1"),
        Sample((_distinct(rng, 3, 5),), {"dim": 0, "keepdim": True}, desc="dim=0 keepdim"),
        Sample((_distinct(rng, 2, 3, 4).transpose(2, 0, 1),), {"dim": -1}, desc="non-contiguous"),
        Sample((_distinct(rng),), {"dim": 0}, desc="0-d dim"),
        Sample((np.array([1.0, 1.0, 2.0, 1.0, 3.0]),), desc="ties share the gradient"),
    ]


def _nan_samples(rng):
    return [
        Sample((_with_nan(rng, 5, where=[1]),), desc="nan all"),
        Sample((_with_nan(rng, 3, 4, where=[(0, 1), (2, 0), (2, 3)]),), {"dim": 1},
               desc="nan dim"),
        Sample((np.full((2, 3), _NAN),), {"dim": 0}, desc="all nan"),
    ]


def _int_samples(rng):
    return [
        Sample((rng.integers(-5, 5, size=(3, 4)),), {"dim": 1}, desc="int dim"),
        Sample((rng.permutation(7),), desc="int all"),
    ]


def _mode_samples(rng):
    ties = lambda *s: rng.integers(0, 3, size=s).astype(np.float64)  # noqa: E731
    return [
        Sample((ties(8),), desc="vector"),
        Sample((ties(3, 6),), {"dim": 1}, desc="dim=1"),
        Sample((ties(5, 3),), {"dim": 0, "keepdim": True}, desc="dim=0 keepdim"),
        Sample((ties(2, 3, 6).transpose(2, 0, 1),), {"dim": 0}, desc="non-contiguous"),
        Sample((_distinct(rng),), desc="0-d"),
    ]


def _q(*values):
    return np.array(values)


def _quantile_samples(rng):
    return [
        Sample((_distinct(rng, 7), 0.3), desc="all q=0.3"),
        Sample((_distinct(rng, 3, 5), _q(0.0, 0.25, 1.0)), {"dim": 1}, desc="q tensor dim=1"),
        Sample((_distinct(rng, 4, 3), 0.6), {"dim": 0, "keepdim": True}, desc="keepdim"),
        Sample((_distinct(rng, 2, 3, 4), _q(0.4, 0.9)), {"keepdim": True},
               desc="all keepdim q tensor"),
        Sample((_distinct(rng, 3, 6), _q(0.1, 0.5)), {"dim": -1, "interpolation": "lower"},
               desc="lower"),
        Sample((_distinct(rng, 3, 6), 0.7), {"dim": 1, "interpolation": "higher"}, desc="higher"),
        Sample((_distinct(rng, 6, 3), _q(0.3, 0.5)), {"dim": 0, "interpolation": "midpoint"},
               desc="midpoint"),
        Sample((_distinct(rng, 5, 3), _q(0.375, 0.625, 0.5)),
               {"dim": 0, "interpolation": "nearest"}, desc="nearest half to even"),
        Sample((_distinct(rng), 0.5), desc="0-d"),
    ]


def _nanquantile_samples(rng):
    return [
        Sample((_with_nan(rng, 6, where=[2]), 0.5), desc="nan all"),
        Sample((_with_nan(rng, 3, 5, where=[(0, 1), (2, 2), (2, 4)]), _q(0.2, 0.8)), {"dim": 1},
               desc="nan dim"),
        Sample((np.full((2, 3), _NAN), 0.5), {"dim": 1}, desc="all nan row"),
    ]


def _nanmean_samples(rng):
    return [
        Sample((_with_nan(rng, 6, where=[2]),), desc="all"),
        Sample((_with_nan(rng, 3, 4, where=[(0, 1), (2, 3)]),), {"dim": 1}, desc="dim"),
        Sample((_with_nan(rng, 3, 4, where=[(1, 1)]),), {"dim": (0, 1), "keepdim": True},
               desc="dims keepdim"),
        Sample((arr(rng, 2, 3, 4).transpose(2, 0, 1),), {"dim": 0}, desc="no nan"),
    ]


def _cum_samples(rng):
    ties = np.array([1.0, 3.0, 3.0, 2.0, 4.0, 4.0, 0.0])
    return [
        Sample((_distinct(rng), 0), desc="0-d"),
        Sample((_distinct(rng, 6), 0), desc="vector"),
        Sample((_distinct(rng, 3, 5), 1), desc="dim=1"),
        Sample((_distinct(rng, 2, 3, 4).transpose(2, 0, 1), -3), desc="non-contiguous"),
        Sample((arr(rng, 0, 3), 1), desc="empty"),
        Sample((ties, 0), desc="ties take the later index"),
    ]


def _cum_nan(rng):
    return [Sample((np.array([1.0, 3.0, _NAN, 2.0, 5.0]), 0), desc="nan propagates"),
            Sample((rng.integers(-3, 3, size=(2, 6)), 1), desc="int ties")]


def _call(name):
    return lambda lib, x, *a, **k: getattr(lib, name)(x, *a, **k)


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


OPS = [
    OpInfo("torch.median", _call("median"), _median_samples),
    OpInfo("Tensor.median", _method("median"), _median_samples),
    OpInfo("torch.nanmedian", _call("nanmedian"), _median_samples),
    OpInfo("torch.median(nan)", _call("median"), _nan_samples, grad=False),
    OpInfo("torch.nanmedian(nan)", _call("nanmedian"), _nan_samples, grad=False),
    OpInfo("torch.median(int)", _call("median"), _int_samples, grad=False),
    OpInfo("torch.mode", _call("mode"), _mode_samples, gradcheck_samples=0),
    OpInfo("Tensor.mode", _method("mode"), _mode_samples, gradcheck_samples=0),
    OpInfo("torch.quantile", _call("quantile"), _quantile_samples),
    OpInfo("Tensor.quantile", _method("quantile"), _quantile_samples),
    OpInfo("torch.nanquantile", _call("nanquantile"), _quantile_samples),
    OpInfo("torch.quantile(nan)", _call("quantile"), _nanquantile_samples, grad=False),
    OpInfo("torch.nanquantile(nan)", _call("nanquantile"), _nanquantile_samples, grad=False),
    OpInfo("torch.nanmean", _call("nanmean"), _nanmean_samples),
    OpInfo("Tensor.nanmean", _method("nanmean"), _nanmean_samples),
    OpInfo("torch.cummax", _call("cummax"), _cum_samples),
    OpInfo("torch.cummin", _call("cummin"), _cum_samples),
    OpInfo("Tensor.cummax", _method("cummax"), _cum_samples),
    OpInfo("torch.cummax(nan, int)", _call("cummax"), _cum_nan, grad=False),
    OpInfo("torch.cummin(nan, int)", _call("cummin"), _cum_nan, grad=False),
]
