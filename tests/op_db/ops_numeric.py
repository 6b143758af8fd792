"""Op table entries: numerical composites and counting (issue 15, lane ops): cov, corrcoef,
trapezoid/trapz/cumulative_trapezoid, gradient, renorm, cdist, pdist; histc, histogram,
histogramdd, bincount (no gradient in torch: forward only)."""

import numpy as np

from . import OpInfo, Sample, arr


def _cov(rng):
    return [
        Sample((arr(rng, 3, 5),), desc="matrix"),
        Sample((arr(rng, 6),), desc="1-D"),
        Sample((arr(rng, 1, 4),), desc="one variable"),
        Sample((arr(rng, 5, 3).T,), {"correction": 0}, desc="non-contiguous correction=0"),
        Sample((arr(rng, 2, 4),), {"fweights": np.array([1, 2, 0, 3])}, desc="fweights"),
        Sample((arr(rng, 2, 4), ), {"correction": 2}, desc="correction=2"),
    ]


def _cov_aweights(rng):
    return [
        Sample((arr(rng, 2, 4), rng.uniform(0.5, 2, 4)), desc="aweights"),
        Sample((arr(rng, 3, 5), rng.uniform(0.5, 2, 5)), {"fweights": np.array([1, 1, 2, 0, 3])},
               desc="both weights"),
    ]


def _corr(rng):
    return [Sample((arr(rng, 3, 5),), desc="matrix"), Sample((arr(rng, 4, 3).T,),
                                                            desc="non-contiguous")]


def _trap(rng):
    return [
        Sample((arr(rng, 5),), desc="vector"),
        Sample((arr(rng, 3, 4),), {"dim": 0}, desc="dim=0"),
        Sample((arr(rng, 3, 4),), {"dx": 0.5}, desc="dx"),
        Sample((arr(rng, 3, 4), np.sort(arr(rng, 4))), desc="x 1-D"),
        Sample((arr(rng, 3, 4), np.sort(arr(rng, 3, 4), axis=1)), desc="x same shape"),
        Sample((arr(rng, 4, 3), np.sort(arr(rng, 4))), {"dim": 0}, desc="x along dim 0"),
    ]


def _gradient(rng):
    return [
        Sample((arr(rng, 5),), desc="vector"),
        Sample((arr(rng, 4, 5),), {"spacing": 2.0}, desc="matrix spacing"),
        Sample((arr(rng, 4, 5),), {"dim": 1, "edge_order": 2}, desc="dim edge 2"),
        Sample((arr(rng, 4, 5),), {"spacing": [0.5, 3.0]}, desc="spacing list"),
        Sample((arr(rng, 3, 4, 5).transpose(2, 0, 1),), {"dim": (0, 2)}, desc="dims"),
    ]


def _gradient_coords(rng):
    return [
        Sample((arr(rng, 5), np.array([0.0, 0.5, 1.5, 2.0, 3.5])), desc="coords"),
        Sample((arr(rng, 5), np.array([0.0, 0.5, 1.5, 2.0, 3.5])), {"edge_order": 2},
               desc="coords edge 2"),
    ]


def _renorm(rng):
    return [
        Sample((arr(rng, 3, 4), 2, 0, 1.0), desc="p=2 dim 0"),
        Sample((arr(rng, 3, 4), 1, 1, 1.5), desc="p=1 dim 1"),
        Sample((arr(rng, 2, 3, 4).transpose(2, 0, 1), 3, -1, 2.0), desc="p=3 non-contiguous"),
        Sample((arr(rng, 3, 2) * 0.1, 2, 0, 5.0), desc="nothing scaled"),
    ]


def _cdist(rng):
    return [
        Sample((arr(rng, 3, 2), arr(rng, 4, 2)), desc="p=2"),
        Sample((arr(rng, 2, 3, 4), arr(rng, 2, 5, 4)), {"p": 1.0}, desc="batched p=1"),
        Sample((arr(rng, 3, 2), arr(rng, 2, 2)), {"p": 3.0}, desc="p=3"),
        Sample((arr(rng, 3, 2), arr(rng, 4, 2)), {"p": float("inf")}, desc="p=inf"),
        Sample((arr(rng, 2, 3), arr(rng, 2, 3)), {"p": 0.0}, desc="p=0"),
        Sample((arr(rng, 3, 2), arr(rng, 4, 2)),
               {"compute_mode": "donot_use_mm_for_euclid_dist"}, desc="compute_mode"),
        Sample((arr(rng, 30, 3), arr(rng, 4, 3)), desc="mm-sized"),
    ]


def _pdist(rng):
    return [
        Sample((arr(rng, 4, 3),), desc="p=2"),
        Sample((arr(rng, 5, 2),), {"p": 1.0}, desc="p=1"),
        Sample((arr(rng, 3, 4),), {"p": 2.5}, desc="p=2.5"),
        Sample((arr(rng, 1, 3),), desc="one row"),
    ]


def _hist(rng):
    return [
        Sample((arr(rng, 20),), {"bins": 5}, desc="data range"),
        Sample((arr(rng, 4, 5),), {"bins": 4, "min": -1.0, "max": 1.0}, desc="range"),
        Sample((np.array([1.0, 1.0]),), {"bins": 3}, desc="one value"),
    ]


def _histogram(rng):
    return [
        Sample((arr(rng, 20), 5), desc="bins int"),
        Sample((arr(rng, 20), 4), {"range": (-1.0, 1.5), "density": True}, desc="range density"),
        Sample((arr(rng, 20), np.array([-2.0, -0.5, 0.0, 2.0])), desc="edges tensor"),
        Sample((arr(rng, 3, 4), 3, rng.uniform(0, 1, (3, 4))), desc="weights"),
    ]


def _histogramdd(rng):
    return [
        Sample((arr(rng, 20, 2), [3, 4]), desc="2-D bins list"),
        Sample((arr(rng, 10, 3), 2, rng.uniform(0, 1, 10)),
               {"range": [-2.0, 2.0, -1.0, 1.0, 0.0, 2.0]}, desc="range weight"),
        Sample((arr(rng, 15, 2), 3), {"density": True}, desc="density"),
    ]


def _bincount(rng):
    return [
        Sample((rng.integers(0, 6, 20),), desc="counts"),
        Sample((rng.integers(0, 4, 10),), {"minlength": 7}, desc="minlength"),
        Sample((rng.integers(0, 4, 10), rng.uniform(0, 1, 10)), desc="weights"),
        Sample((np.zeros(0, np.int64),), desc="empty"),
    ]


def _call(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


def _cov_aw(lib, x, aw, **k):
    return lib.cov(x, aweights=aw, **{n: lib.from_numpy(v) for n, v in k.items()})


def _cov_call(lib, x, **k):
    fw = k.pop("fweights", None)
    return lib.cov(x, fweights=None if fw is None else lib.from_numpy(fw), **k)


def _weighted(name):
    return lambda lib, x, bins, weight=None, **k: getattr(lib, name)(x, bins, weight=weight, **k)


def _gradient_x(lib, f, x, **k):
    return lib.gradient(f, spacing=(x,), **k)


OPS = [
    OpInfo("torch.cov", _cov_call, _cov),
    OpInfo("torch.cov(aweights)", _cov_aw, _cov_aweights),
    OpInfo("Tensor.cov", lambda lib, x, **k: x.cov(**k), lambda rng: _cov(rng)[:4]),
    OpInfo("torch.corrcoef", _call("corrcoef"), _corr, atol=1e-5),
    OpInfo("torch.trapezoid", _call("trapezoid"), _trap),
    OpInfo("torch.trapz", _call("trapz"), lambda rng: _trap(rng)[:2]),
    OpInfo("torch.cumulative_trapezoid", _call("cumulative_trapezoid"), _trap),
    OpInfo("torch.gradient", _call("gradient"), _gradient),
    OpInfo("torch.gradient(coordinates)", _gradient_x, _gradient_coords),
    OpInfo("torch.renorm", _call("renorm"), _renorm),
    OpInfo("Tensor.renorm_", lambda lib, x, *a: x.clone().renorm_(*a), _renorm),
    # torch has no double backward for cdist/pdist (test_ops_numeric.py checks glassgrad's)
    OpInfo("torch.cdist", _call("cdist"), _cdist, atol=1e-5, rtol=1e-4, gradgrad=False),
    # NOTE: forward only here: torch's pdist backward segfaults on an empty input, which the
    # bad-input sweep would feed it; test_ops_numeric.py compares the gradients
    OpInfo("torch.pdist", _call("pdist"), _pdist, grad=False),
    OpInfo("torch.histc", _call("histc"), _hist, grad=False),
    OpInfo("torch.histogram", _weighted("histogram"), _histogram, grad=False),
    OpInfo("torch.histogramdd", _weighted("histogramdd"), _histogramdd, grad=False),
    OpInfo("torch.bincount", _call("bincount"), _bincount, grad=False),
    OpInfo("Tensor.bincount", lambda lib, x, *a, **k: x.bincount(*a, **k), _bincount,
           grad=False),
]
