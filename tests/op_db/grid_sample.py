"""Op table (issue 16, lane grid): ``F.grid_sample`` in every mode x padding x align_corners,
2-D and 3-D, with gradients w.r.t. input AND grid (first and second order against torch,
gradcheck/gradgradcheck), ``F.affine_grid`` w.r.t. theta, and the top-level integer-mode forms.

Grid coordinates reach past [-1, 1] so every padding mode is exercised; they are random, so no
sample lands on a kink (a pixel boundary) where finite differences would straddle two pieces.
"""

from __future__ import annotations

from . import OpInfo, Sample, arr

_PADDINGS = ("zeros", "border", "reflection")


def _grid_samples(nd: int):
    def make(rng):
        out = []
        # NOTE: reflection first: gradcheck differentiates the smallest samples, first ones first
        for pad in _PADDINGS[::-1]:
            for align in (False, True):
                if nd == 2:
                    x, g = arr(rng, 1, 2, 3, 3), arr(rng, 1, 2, 3, 2, lo=-1.4, hi=1.4)
                else:
                    x, g = arr(rng, 1, 1, 2, 3, 2), arr(rng, 1, 2, 2, 1, 3, lo=-1.4, hi=1.4)
                out.append(Sample((x, g), {"padding_mode": pad, "align_corners": align},
                                  desc=f"{pad} align={align}"))
        # a batch of two, a non-contiguous input and a grid with one output row
        x = arr(rng, *((3, 4, 2, 2) if nd == 2 else (3, 3, 2, 2, 2))).transpose()
        g = arr(rng, *((2, 1, 4, nd) if nd == 2 else (2, 1, 2, 2, nd)), lo=-1.2, hi=1.2)
        out.append(Sample((x, g), {"padding_mode": "zeros", "align_corners": False},
                          desc="non-contiguous"))
        return out

    return make


def _sample(mode):
    return lambda m, x, g, **kw: m.nn.functional.grid_sample(x, g, mode=mode, **kw)


def _theta(nd: int):
    def make(rng):
        size = [2, 3, 4, 3] if nd == 2 else [2, 1, 3, 2, 4]
        return [Sample((arr(rng, 2, nd, nd + 1), size), {"align_corners": a}, desc=f"align={a}")
                for a in (False, True)] + [
            Sample((arr(rng, 1, nd, nd + 1), [1, 2] + [1] * nd), {"align_corners": False},
                   desc="unit size")]

    return make


def _top(name, mode, pad, align):
    return lambda m, x, g: getattr(m, name)(x, g, mode, pad, align)


def _sample_then_affine(m, x, theta):
    grid = m.nn.functional.affine_grid(theta, [2, 2, 3, 2], align_corners=False)
    return m.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                                       align_corners=False)


def _pair_fixed(rng):
    # theta (2, 2, 3): near identity with a random part, the input random
    base = [[1.0, 0.1, 0.05], [-0.2, 0.9, 0.1]]
    return [Sample((arr(rng, 2, 2, 3, 4), arr(rng, 2, 2, 3, lo=-0.3, hi=0.3) + base),
                   desc="theta and input")]


OPS = [
    OpInfo("F.grid_sample_bilinear", _sample("bilinear"), _grid_samples(2), gradcheck_samples=3),
    OpInfo("F.grid_sample_nearest", _sample("nearest"), _grid_samples(2)),
    OpInfo("F.grid_sample_bicubic", _sample("bicubic"), _grid_samples(2)),
    OpInfo("F.grid_sample_3d_bilinear", _sample("bilinear"), _grid_samples(3)),
    OpInfo("F.grid_sample_3d_nearest", _sample("nearest"), _grid_samples(3)),
    OpInfo("F.affine_grid", lambda m, t, size, **kw: m.nn.functional.affine_grid(t, size, **kw),
           _theta(2)),
    OpInfo("F.affine_grid_3d",
           lambda m, t, size, **kw: m.nn.functional.affine_grid(t, size, **kw), _theta(3)),
    OpInfo("F.affine_grid_then_grid_sample", _sample_then_affine, _pair_fixed),
    OpInfo("torch.grid_sampler", _top("grid_sampler", 2, 2, True),
           lambda rng: [Sample((arr(rng, 1, 1, 2, 3), arr(rng, 1, 1, 2, 2, lo=-1.3, hi=1.3)))]),
    OpInfo("torch.grid_sampler_2d", _top("grid_sampler_2d", 0, 1, False),
           lambda rng: [Sample((arr(rng, 1, 2, 3, 3), arr(rng, 1, 2, 2, 2, lo=-1.3, hi=1.3)))]),
    OpInfo("torch.grid_sampler_3d", _top("grid_sampler_3d", 1, 2, True),
           lambda rng: [Sample((arr(rng, 1, 1, 2, 3, 2), arr(rng, 1, 1, 2, 2, 3, lo=-1.3,
                                                                hi=1.3)))]),
    OpInfo("torch.affine_grid_generator",
           lambda m, t: m.affine_grid_generator(t, [2, 1, 3, 2], True),
           lambda rng: [Sample((arr(rng, 2, 2, 3),))]),
]
