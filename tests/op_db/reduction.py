"""Op table entries: reductions and scans (sum, mean, prod, max/min, var/std, norm, cumsum, ...)."""

import numpy as np

from . import OpInfo, Sample, arr, positive

_INF = float("inf")


def _dim_samples(zeros_in_empty=True, empty=True):
    """One-input reduction samples: 0-d, all dims, int/negative/tuple dims, keepdim, non-contiguous
    and empty inputs. ``kwargs`` are passed straight to the op (``dim=``, ``keepdim=``)."""

    def make(rng):
        out = [
            Sample((arr(rng),), desc="0-d all"),
            Sample((arr(rng),), {"dim": 0}, desc="0-d dim=0"),
            Sample((arr(rng, 5),), desc="vector all"),
            Sample((arr(rng, 3, 4),), {"dim": 1}, desc="dim=1"),
            Sample((arr(rng, 3, 4),), {"dim": -1, "keepdim": True}, desc="dim=-1 keepdim"),
            Sample((arr(rng, 2, 3, 4),), {"dim": (0, 2)}, desc="tuple dim"),
            Sample(
                (arr(rng, 2, 3, 4),), {"dim": (-1, 0), "keepdim": True}, desc="tuple dim keepdim"
            ),
            Sample((arr(rng, 2, 3, 4),), {"dim": None, "keepdim": True}, desc="None keepdim"),
            Sample((arr(rng, 2, 3, 4).transpose(2, 0, 1),), {"dim": 1}, desc="non-contiguous"),
        ]
        if empty:
            out.append(Sample((arr(rng, 0, 3),), {"dim": 1}, desc="empty kept dim"))
            if zeros_in_empty:
                out.append(Sample((arr(rng, 0, 3),), {"dim": 0}, desc="empty reduced dim"))
        return out

    return make


def _int_dim_samples(empty=True):
    """Samples for ops whose ``dim`` is a single int (prod, max/min with dim, cumsum, ...)."""

    def make(rng):
        out = [
            Sample((arr(rng),), {"dim": 0}, desc="0-d"),
            Sample((arr(rng, 5),), {"dim": 0}, desc="vector"),
            Sample((arr(rng, 3, 4),), {"dim": 1}, desc="dim=1"),
            Sample((arr(rng, 3, 4),), {"dim": -2}, desc="dim=-2"),
            Sample((arr(rng, 2, 3, 4).transpose(2, 0, 1),), {"dim": 2}, desc="non-contiguous"),
        ]
        if empty:
            out.append(Sample((arr(rng, 0, 3),), {"dim": 1}, desc="empty"))
        return out

    return make


def _with_zeros(rng, *shape, where=()):
    x = arr(rng, *shape)
    for idx in where:
        x[idx] = 0.0
    return x


def _prod_samples(rng):
    return [
        Sample((arr(rng),), desc="0-d"),
        Sample((arr(rng, 5),), desc="vector"),
        Sample((arr(rng, 3, 4),), {"dim": 1}, desc="dim=1"),
        Sample((arr(rng, 3, 4),), {"dim": -2, "keepdim": True}, desc="dim=-2 keepdim"),
        Sample((arr(rng, 2, 3, 4).transpose(2, 0, 1),), {"dim": 1}, desc="non-contiguous"),
        Sample((_with_zeros(rng, 5, where=[2]),), desc="one zero"),
        Sample((_with_zeros(rng, 5, where=[1, 3]),), desc="two zeros"),
        Sample(
            (_with_zeros(rng, 3, 4, where=[(0, 1), (2, 0), (2, 3)]),),
            {"dim": 1},
            desc="zeros dim=1",
        ),
        Sample(
            (_with_zeros(rng, 3, 4, where=[(0, 1), (1, 1)]),),
            {"dim": 0, "keepdim": True},
            desc="zeros dim=0 keepdim",
        ),
        Sample((arr(rng, 0, 3),), {"dim": 0}, desc="empty"),
    ]


def _cumprod_samples(rng):
    return _int_dim_samples()(rng) + [
        Sample((_with_zeros(rng, 5, where=[2]),), {"dim": 0}, desc="one zero"),
        Sample((_with_zeros(rng, 6, where=[1, 4]),), {"dim": 0}, desc="two zeros"),
        Sample(
            (_with_zeros(rng, 3, 4, where=[(0, 0), (1, 3), (2, 1), (2, 2)]),),
            {"dim": 1},
            desc="zeros dim=1",
        ),
        Sample(
            (_with_zeros(rng, 4, 3, where=[(0, 0), (1, 0), (3, 2)]),),
            {"dim": 0},
            desc="zeros dim=0",
        ),
    ]


def _ties(rng):
    """Max/min samples with ties (gradient sharing) besides the random ones."""
    t = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
    return [Sample((t,), desc="ties all"), Sample((t,), {"dim": 1}, desc="ties dim=1")]


def _max_dim_samples(rng):
    return (
        _int_dim_samples(empty=False)(rng)
        + _ties(rng)[1:]
        + [
            Sample((arr(rng, 3, 4),), {"dim": 0, "keepdim": True}, desc="keepdim"),
            Sample((arr(rng, 0, 3),), {"dim": 1}, desc="empty kept dim"),
        ]
    )


def _var_samples(rng):
    x = arr(rng, 3, 4)
    return [
        Sample((arr(rng, 5),), {}, desc="vector all"),
        Sample((x,), {"args": (1,)}, desc="positional dim"),
        Sample((x,), {"dim": 1, "unbiased": False}, desc="unbiased=False"),
        Sample((x,), {"dim": 0, "unbiased": True, "keepdim": True}, desc="unbiased keepdim"),
        Sample((x,), {"dim": -1, "correction": 0}, desc="correction=0"),
        Sample((x,), {"correction": 1}, desc="correction=1 all"),
        Sample((arr(rng, 2, 3, 4),), {"dim": (0, 2), "correction": 2}, desc="tuple correction=2"),
        Sample(
            (arr(rng, 2, 3, 4).transpose(2, 0, 1),),
            {"dim": 1, "keepdim": True},
            desc="non-contiguous",
        ),
        Sample((arr(rng, 0, 3),), {"dim": 1}, desc="empty kept dim"),
    ]


def _call_var(m, fn, x, args=(), **kw):
    return getattr(m, fn)(x, *args, **kw)


def _norm_samples(rng):
    x = arr(rng, 3, 4)
    xz = _with_zeros(rng, 3, 4, where=[(1, slice(None))])  # a zero row: the 2-norm at 0
    out = []
    for p in (1, 2, _INF, -_INF, "fro", 3, 0.5):
        out.append(Sample((x,), {"p": p}, desc=f"p={p} all"))
        out.append(Sample((x,), {"p": p, "dim": 1}, desc=f"p={p} dim=1"))
    out += [
        Sample((arr(rng),), {"p": 2}, desc="0-d"),
        Sample(
            (arr(rng, 2, 3, 4),), {"p": 2, "dim": (0, 2), "keepdim": True}, desc="tuple dim keepdim"
        ),
        Sample(
            (arr(rng, 2, 3, 4).transpose(2, 0, 1),),
            {"p": 3, "dim": -1, "keepdim": True},
            desc="non-contiguous p=3",
        ),
        Sample((xz,), {"p": "fro", "dim": (0, 1)}, desc="fro tuple dim"),
        Sample((arr(rng, 0, 3),), {"p": 2, "dim": 0}, desc="empty"),
    ]
    return out


def _nan_samples(rng):
    x = arr(rng, 3, 4)
    x[0, 1] = np.nan
    x[2, 2] = np.nan
    return [
        Sample((arr(rng, 5),), desc="no nan"),
        Sample((x,), desc="nan all"),
        Sample((x,), {"dim": 1}, desc="nan dim=1"),
        Sample((x,), {"dim": 0, "keepdim": True}, desc="nan dim=0 keepdim"),
    ]


def _bool_samples(rng):
    x = arr(rng, 3, 4) > 0
    z = np.zeros((2, 3), dtype=np.int64)
    return [
        Sample((x,), desc="bool all"),
        Sample((x,), {"dim": 1}, desc="bool dim=1"),
        Sample((x,), {"dim": (0, 1), "keepdim": True}, desc="bool tuple keepdim"),
        Sample((z,), {"dim": 0}, desc="int64 zeros"),
        Sample((np.zeros((0, 3), dtype=bool),), desc="empty"),
    ]


def _int_samples(rng):
    x = rng.integers(-3, 4, size=(3, 4))
    return [
        Sample((x,), desc="int64 all"),
        Sample((x.astype(np.int32),), {"dim": 1}, desc="int32 dim=1"),
        Sample((x > 0,), {"dim": 0}, desc="bool dim=0"),
    ]


def _argmax_samples(rng):
    return [
        Sample((arr(rng, 5),), desc="vector"),
        Sample((arr(rng, 3, 4),), desc="matrix flat"),
        Sample((arr(rng, 3, 4),), {"dim": 1}, desc="dim=1"),
        Sample((arr(rng, 3, 4),), {"dim": -2, "keepdim": True}, desc="dim=-2 keepdim"),
        Sample((arr(rng, 2, 3, 4).transpose(2, 0, 1),), {"dim": 0}, desc="non-contiguous"),
        Sample((arr(rng),), desc="0-d"),
    ]


def _all_samples(rng):
    return [s for s in _argmax_samples(rng) if not s.kwargs] + _ties(rng)[:1]


OPS = [
    OpInfo("sum", lambda m, x, **kw: m.sum(x, **kw), _dim_samples()),
    OpInfo("sum_method", lambda m, x, **kw: x.sum(**kw), _dim_samples(empty=False)),
    OpInfo("sum_int", lambda m, x, **kw: m.sum(x, **kw), _int_samples, grad=False),
    OpInfo(
        "sum_dtype",
        lambda m, x, **kw: m.sum(x, dtype=m.float32, **kw),
        _dim_samples(empty=False),
        atol=1e-5,
        gradcheck_samples=0,
    ),
    OpInfo("mean", lambda m, x, **kw: m.mean(x, **kw), _dim_samples()),
    OpInfo("nansum", lambda m, x, **kw: m.nansum(x, **kw), _nan_samples),
    OpInfo("prod", lambda m, x, **kw: m.prod(x, **kw), _prod_samples),
    OpInfo("prod_int", lambda m, x, **kw: m.prod(x, **kw), _int_samples, grad=False),
    OpInfo(
        "amax",
        lambda m, x, **kw: m.amax(x, **kw),
        lambda rng: _dim_samples(zeros_in_empty=False)(rng) + _ties(rng),
    ),
    OpInfo(
        "amin",
        lambda m, x, **kw: m.amin(x, **kw),
        lambda rng: _dim_samples(zeros_in_empty=False)(rng) + _ties(rng),
    ),
    OpInfo("max_all", lambda m, x: m.max(x), _all_samples),
    OpInfo("min_all", lambda m, x: x.min(), _all_samples),
    OpInfo("max_dim", lambda m, x, **kw: m.max(x, **kw), _max_dim_samples),
    OpInfo(
        "max_elementwise",
        lambda m, x: m.max(x, x.flip(0)) + m.min(x, x * 0.5),
        lambda rng: [Sample((arr(rng, 3, 4),), desc="matrix")],
    ),
    OpInfo(
        "aminmax",
        lambda m, x, **kw: m.aminmax(x, **kw),
        lambda rng: [
            Sample((arr(rng, 3, 4),), desc="all"),
            Sample((arr(rng, 3, 4),), {"dim": 1, "keepdim": True}, desc="dim keepdim"),
            Sample((arr(rng, 3, 4),), {"dim": -2}, desc="negative dim"),
        ],
    ),
    OpInfo(
        "logcumsumexp",
        lambda m, x, **kw: m.logcumsumexp(x, **kw),
        lambda rng: (
            _int_dim_samples()(rng)
            + [
                Sample(
                    (np.array([[-np.inf, 0.5, 800.0], [3.0, -2.0, 1.0]]),),
                    {"dim": 1},
                    desc="large and -inf",
                )
            ]
        ),
    ),
    OpInfo("min_dim", lambda m, x, **kw: x.min(**kw), _max_dim_samples),
    OpInfo(
        "max_dim_positional",
        lambda m, x: m.max(x, 1, True),
        lambda rng: [Sample((arr(rng, 3, 4),), desc="matrix")],
    ),
    OpInfo(
        "max_dim_fields",
        lambda m, x: m.max(x, dim=0).values + m.min(x, dim=0)[0],
        lambda rng: [Sample((arr(rng, 3, 4),), desc="matrix")],
    ),
    OpInfo("argmax", lambda m, x, **kw: m.argmax(x, **kw), _argmax_samples, grad=False),
    OpInfo("argmin", lambda m, x, **kw: x.argmin(**kw), _argmax_samples, grad=False),
    OpInfo("all", lambda m, x, **kw: m.all(x, **kw), _bool_samples, grad=False),
    OpInfo("any", lambda m, x, **kw: x.any(**kw), _bool_samples, grad=False),
    OpInfo("all_float", lambda m, x: m.all(x), lambda rng: [Sample((arr(rng, 3),))], grad=False),
    OpInfo("var", lambda m, x, **kw: _call_var(m, "var", x, **kw), _var_samples),
    OpInfo("std", lambda m, x, **kw: _call_var(m, "std", x, **kw), _var_samples),
    OpInfo(
        "var_method",
        lambda m, x: x.var(1, keepdim=True),
        lambda rng: [Sample((arr(rng, 3, 4),), desc="matrix")],
    ),
    OpInfo("var_mean", lambda m, x, **kw: _call_var(m, "var_mean", x, **kw), _var_samples),
    OpInfo("std_mean", lambda m, x, **kw: _call_var(m, "std_mean", x, **kw), _var_samples),
    OpInfo(
        "logsumexp",
        lambda m, x, **kw: m.logsumexp(x, **kw),
        lambda rng: (
            [s for s in _dim_samples()(rng) if "dim" in s.kwargs and s.kwargs["dim"] is not None]
            + [
                Sample(
                    (np.array([[-np.inf, 0.5], [1000.0, 999.0]]),),
                    {"dim": 1},
                    desc="large and -inf",
                )
            ]
        ),
    ),
    OpInfo("norm", lambda m, x, **kw: m.norm(x, **kw), _norm_samples, atol=1e-5, rtol=1e-4),
    # NOTE: the 2-norm has no second derivative at 0: PyTorch's double backward gives nan there,
    # glassgrad's gives 0 (the subgradient again); first order is compared, second is not.
    OpInfo(
        "norm_at_zero",
        lambda m, x, **kw: m.norm(x, **kw),
        lambda rng: [
            Sample(
                (_with_zeros(rng, 3, 4, where=[(1, slice(None))]),),
                {"p": 2, "dim": 1},
                desc="zero row p=2",
            ),
            Sample(
                (_with_zeros(rng, 3, 4, where=[(1, slice(None))]),),
                {"p": 3, "dim": 1},
                desc="zero row p=3",
            ),
            Sample(
                (_with_zeros(rng, 3, 4, where=[(1, slice(None))]),),
                {"p": 1.5, "dim": 1},
                desc="zero row p=1.5",
            ),
            Sample(
                (_with_zeros(rng, 2, 3, where=[(0, 1)]),),
                {"p": 0.5, "dim": 1},
                desc="zero entry p=0.5",
            ),
            Sample((np.zeros(3),), {"p": 2}, desc="zero vector"),
        ],
        gradgrad=False,
    ),
    OpInfo(
        "norm_method",
        lambda m, x: x.norm() + x.norm(1) + x.norm(dim=0).sum(),
        lambda rng: [Sample((arr(rng, 3, 4),), desc="matrix")],
    ),
    OpInfo("cumsum", lambda m, x, **kw: m.cumsum(x, **kw), _int_dim_samples()),
    OpInfo("cumsum_int", lambda m, x, dim=1: m.cumsum(x, dim), _int_samples, grad=False),
    OpInfo("cumprod", lambda m, x, **kw: m.cumprod(x, **kw), _cumprod_samples),
    # the zero cases again, so that finite differences (gradcheck, gradgradcheck) check them too
    OpInfo(
        "cumprod_zeros",
        lambda m, x, **kw: m.cumprod(x, **kw),
        lambda rng: [s for s in _cumprod_samples(rng) if "zero" in s.desc],
        gradcheck_samples=4,
    ),
    OpInfo(
        "prod_zeros",
        lambda m, x, **kw: m.prod(x, **kw),
        lambda rng: [s for s in _prod_samples(rng) if "zero" in s.desc],
        gradcheck_samples=4,
    ),
    OpInfo(
        "cumprod_method",
        lambda m, x: x.cumprod(-1),
        lambda rng: [Sample((positive(rng, 3, 4),), desc="positive")],
    ),
]
