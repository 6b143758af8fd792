"""Op table: issue 16, lane pool: power-average pooling, 3-D adaptive max pooling, the
``*_with_indices`` names, fractional max pooling (the same ``_random_samples`` given to both
libraries, so the windows agree), local response norm and instance norm with running stats."""

from __future__ import annotations

from . import OpInfo, Sample, arr, positive


def _f(name):
    return lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k)


def _values(name):
    """The values output only (the int64 indices are compared in tests/test_nn_pool.py)."""
    return lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k)[0]


def _lp(shape_batched, shape_unbatched, kernels):
    def make(rng):
        out = []
        # a fractional or odd power of a negative number is NaN or 0 in both: positive there
        for (p, lo), kw in zip(((2, -2.0), (1.5, 0.2), (3, 0.2), (1, 0.2)), kernels * 2):
            x = arr(rng, *shape_batched, lo=lo)
            out.append(Sample((x, p), dict(kw), desc=f"p={p} {kw}"))
        out.append(Sample((arr(rng, *shape_unbatched), 2.0), dict(kernels[0]), desc="unbatched"))
        out.append(Sample((arr(rng, *shape_batched), float("inf")), dict(kernels[0]),
                          desc="p=inf"))
        return out

    return make


def _fractional(nd, shape, kernel, out, ratio):
    def make(rng):
        n, c = shape[:2]
        u = rng.uniform(0, 1, size=(n, c, nd)).tolist()
        return [
            Sample((arr(rng, *shape), kernel), {"output_size": out, "_random_samples": u},
                   desc="output_size"),
            Sample((arr(rng, *shape), kernel), {"output_ratio": ratio, "_random_samples": u},
                   desc="output_ratio"),
            Sample((arr(rng, *shape[1:]), kernel),
                   {"output_size": out, "_random_samples": u[:1]}, desc="unbatched"),
        ]

    return make


def _frac(name, values=False):
    def fn(m, x, k, _random_samples, **kw):
        samples = m.tensor(_random_samples, dtype=x.dtype)
        out = getattr(m.nn.functional, name)(x, k, _random_samples=samples, **kw)
        return out[0] if values else out

    return fn


def _instance_norm_running(m, x, w, b, **kw):
    c = x.shape[1]
    mean = m.tensor([0.1 * i for i in range(c)], dtype=x.dtype)
    var = m.tensor([1.0 + 0.5 * i for i in range(c)], dtype=x.dtype)
    return m.nn.functional.instance_norm(x, mean, var, w, b, **kw)


def _lrn(rng):
    return [
        Sample((arr(rng, 2, 5, 4), 3), desc="3-D size 3"),
        Sample((arr(rng, 1, 6, 3, 2), 2), {"alpha": 0.5, "beta": 0.6, "k": 2.0},
               desc="4-D even size"),
        Sample((arr(rng, 2, 4, 2, 2, 3), 5), {"alpha": 1e-2}, desc="5-D size over C"),
        Sample((arr(rng, 1, 3, 2, 2, 1, 2), 1), {"alpha": 0.1}, desc="6-D size 1"),
    ]


OPS = [
    OpInfo("lp_pool1d", _f("lp_pool1d"),
           _lp((2, 3, 7), (3, 6), [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2,
                                                          "ceil_mode": True}])),
    OpInfo("lp_pool2d", _f("lp_pool2d"),
           _lp((2, 2, 5, 4), (2, 4, 4), [{"kernel_size": 2},
                                         {"kernel_size": (3, 2), "stride": (2, 1),
                                          "ceil_mode": True}])),
    OpInfo("lp_pool3d", _f("lp_pool3d"),
           _lp((1, 2, 4, 3, 4), (2, 2, 2, 2), [{"kernel_size": 2},
                                               {"kernel_size": (2, 1, 2), "stride": 1}])),
    OpInfo("adaptive_max_pool3d", _f("adaptive_max_pool3d"), lambda rng: [
        Sample((arr(rng, 2, 2, 4, 5, 3),), {"output_size": (2, 3, 2)}, desc="overlapping bins"),
        Sample((arr(rng, 2, 3, 4, 2),), {"output_size": 1}, desc="unbatched global"),
        Sample((arr(rng, 1, 2, 4, 4, 2),), {"output_size": (2, None, 1)}, desc="None keeps"),
    ]),
    OpInfo("adaptive_max_pool3d_with_indices", _values("adaptive_max_pool3d_with_indices"),
           lambda rng: [Sample((arr(rng, 1, 2, 3, 4, 5),), {"output_size": 2})]),
    OpInfo("adaptive_max_pool1d_with_indices", _values("adaptive_max_pool1d_with_indices"),
           lambda rng: [Sample((arr(rng, 2, 3, 7),), {"output_size": 3})]),
    OpInfo("max_pool3d_with_indices", _values("max_pool3d_with_indices"),
           lambda rng: [Sample((arr(rng, 1, 2, 4, 5, 4),), {"kernel_size": 2, "stride": 1,
                                                             "padding": 1})]),
    OpInfo("fractional_max_pool2d", _frac("fractional_max_pool2d"),
           _fractional(2, (2, 2, 7, 6), 2, (4, 3), (0.6, 0.5))),
    OpInfo("fractional_max_pool2d_with_indices",
           _frac("fractional_max_pool2d_with_indices", values=True),
           _fractional(2, (1, 2, 5, 5), (2, 3), 3, (0.7, 0.5))),
    OpInfo("fractional_max_pool3d", _frac("fractional_max_pool3d"),
           _fractional(3, (1, 2, 5, 4, 6), 2, (3, 2, 4), 0.5)),
    OpInfo("fractional_max_pool3d_with_indices",
           _frac("fractional_max_pool3d_with_indices", values=True),
           _fractional(3, (1, 1, 4, 5, 4), (1, 2, 2), 2, (0.6, 0.5, 0.5))),
    OpInfo("local_response_norm", _f("local_response_norm"), _lrn),
    OpInfo("instance_norm_running_stats", _instance_norm_running, lambda rng: [
        Sample((arr(rng, 2, 3, 4), positive(rng, 3), arr(rng, 3)), {"use_input_stats": False},
               desc="eval"),
        Sample((arr(rng, 2, 3, 2, 3), None, None), {"use_input_stats": True, "momentum": 0.3},
               desc="train"),
    ]),
]
