"""Op table: issue 15, lane tnn: einsum with a repeated subscript (diagonals, traces), the
interpolating modes of ``interpolate`` and ``max_unpool1d/2d/3d``."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample, arr

_DIAG_EINSUM = [
    ("ii->i", [(3, 3)], "diagonal"),
    ("ii", [(3, 3)], "trace (implicit)"),
    ("iij->j", [(3, 3, 2)], "diagonal summed"),
    ("iji->ij", [(2, 3, 2)], "split repeat"),
    ("iii->i", [(2, 2, 2)], "triple"),
    ("...ii->...i", [(2, 3, 3)], "batched diagonal"),
    ("ij,ii->j", [(3, 2), (3, 3)], "diagonal in one of two operands"),
]


def _diag_einsum(rng):
    return [Sample(tuple(arr(rng, *s) for s in shapes), {"eq": eq}, desc=desc)
            for eq, shapes, desc in _DIAG_EINSUM]


def _interp(shape, cases):
    def make(rng):
        return [Sample((arr(rng, *shape),), kw, desc=str(kw)) for kw in cases]

    return make


def _resizes(mode, nd):
    """Sizes and scales up and down, corners aligned and not, a given scale kept or recomputed."""
    up, down = [5, 6, 4][:nd], [2, 3, 2][:nd]
    out = []
    for ac in (False, True):
        out += [{"size": up, "align_corners": ac}, {"size": down, "align_corners": ac},
                {"scale_factor": 1.7, "align_corners": ac},
                {"scale_factor": 0.6, "align_corners": ac, "recompute_scale_factor": True}]
    return [dict(kw, mode=mode) for kw in out]


_NO_CORNERS = [{"size": [5, 6, 4]}, {"size": [2, 3, 2]}, {"scale_factor": 1.7},
               {"scale_factor": 0.6}, {"scale_factor": 2.0, "recompute_scale_factor": True}]


def _plain(mode, nd):
    return [dict({k: (v[:nd] if k == "size" else v) for k, v in kw.items()}, mode=mode)
            for kw in _NO_CORNERS]


def _unpool(nd, spatial, kernel):
    """Pooled values and distinct flat indices inside the unpooled plane (as max_pool gives)."""

    def make(rng):
        lead = (2, 2)
        out_sp = [(s - 1) * kernel + kernel for s in spatial]
        plane = int(np.prod(out_sp))
        n = int(np.prod(spatial))
        idx = np.stack([rng.choice(plane, size=n, replace=False) for _ in range(4)])
        idx = idx.reshape(lead + tuple(spatial)).astype(np.int64)
        bigger = [o + 1 for o in out_sp]
        plane_b = int(np.prod(bigger))
        idx_b = np.stack([rng.choice(plane_b, size=n, replace=False) for _ in range(4)])
        return [
            Sample((arr(rng, *lead, *spatial), idx), {"kernel_size": kernel}, desc="default size"),
            Sample((arr(rng, *lead, *spatial), idx_b.reshape(idx.shape).astype(np.int64)),
                   {"kernel_size": kernel, "output_size": bigger}, desc="output_size"),
            Sample((arr(rng, 2, *spatial), idx[0]), {"kernel_size": kernel}, desc="unbatched"),
        ]

    return make


def _f(name):
    return lambda m, *xs, **k: getattr(m.nn.functional, name)(*xs, **k)


OPS = [
    OpInfo("einsum_diagonal", lambda m, *xs, eq: m.einsum(eq, *xs), _diag_einsum),
    OpInfo("interpolate_linear", _f("interpolate"), _interp((2, 2, 4), _resizes("linear", 1))),
    OpInfo("interpolate_bilinear", _f("interpolate"),
           _interp((1, 2, 3, 4), _resizes("bilinear", 2))),
    OpInfo("interpolate_trilinear", _f("interpolate"),
           _interp((1, 1, 3, 2, 3), _resizes("trilinear", 3)[::3])),
    OpInfo("interpolate_bicubic", _f("interpolate"),
           _interp((1, 2, 4, 3), _resizes("bicubic", 2))),
    OpInfo("interpolate_nearest_exact", _f("interpolate"),
           _interp((1, 2, 3, 4), _plain("nearest-exact", 2))),
    OpInfo("interpolate_nearest_exact_1d", _f("interpolate"),
           _interp((2, 1, 5), _plain("nearest-exact", 1))),
    OpInfo("interpolate_area", _f("interpolate"), _interp((1, 2, 5, 4), _plain("area", 2))),
    OpInfo("interpolate_area_3d", _f("interpolate"),
           _interp((1, 1, 3, 4, 2), _plain("area", 3)[:2])),
    OpInfo("max_unpool1d", _f("max_unpool1d"), _unpool(1, (3,), 2)),
    OpInfo("max_unpool2d", _f("max_unpool2d"), _unpool(2, (2, 3), 2)),
    OpInfo("max_unpool3d", _f("max_unpool3d"), _unpool(3, (2, 1, 2), 2)),
]
