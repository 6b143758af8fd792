"""Sampling grids: ``grid_sample`` and ``affine_grid`` (``torch.nn.functional``) and their
top-level integer-mode forms ``torch.grid_sampler``, ``grid_sampler_2d``, ``grid_sampler_3d``,
``affine_grid_generator``.

Both are composites. ``grid_sample`` turns each grid coordinate into source positions in the
arithmetic of PyTorch's CPU kernels (``GridSampler.h``: unnormalize, then clip or reflect for the
padding mode), gathers the neighbouring input rows (``index_select`` of the input laid out as
(N * spatial, C)) and weights them with polynomials of the fractional offsets. The weights are
differentiable in the grid and the gathers in the input, so gradients w.r.t. input and grid of
every order come from those ops: no derivative code here. ``affine_grid`` is one product of a
constant base grid with ``theta`` (an op of its own that saves nothing, as torch's).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..ops import primitive
from ..ops._names import scalar_type
from ..ops.elementwise import where
from .._user_warning import warn_user

__all__ = ["GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "affine_grid",
           "grid_sample"]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_CUBIC_A = -0.75  # PyTorch's bicubic kernel constant (as in interpolate)
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def _where(mask, a, b):
    return where(mask, a, b)  # NOTE: a NumPy mask: the condition needs no tensor of its own


def _const(x, value):
    """``value`` (an array or a number) as a constant tensor of ``x``'s dtype."""
    return primitive._make(np.asarray(value, dtype=x._array.dtype))


def _unnormalize(coord, size: int, align_corners: bool):
    """Grid coordinate in [-1, 1] -> pixel position (PyTorch's ``grid_sampler_unnormalize``)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size: int):
    """Clamp to [0, size - 1]; the gradient is 0 on the borders themselves, as in PyTorch's
    ``clip_coordinates_set_grad`` (borders count as out of bounds), unlike ``clamp``'s."""
    a = coord._array
    inside = (a > 0) & (a < size - 1)
    # NOTE: NaN goes to 0, as PyTorch's vectorised max(x, 0) sends it
    return _where(inside, coord, _const(coord, np.where(a >= size - 1, size - 1, 0)))


def _reflect(coord, twice_low: int, twice_high: int):
    """Reflect into [low, high] until inside (PyTorch's ``reflect_coordinates``); the bounds come
    doubled so that half-integers are exact."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = coord - low
    # NOTE: an explicit sign, not abs(): PyTorch's gradient at the low bound itself is +1
    d = d * _const(d, np.where(d._array < 0, -1, 1))
    extra = d.fmod(span)
    with np.errstate(invalid="ignore"):
        even = np.floor(d._array / d._array.dtype.type(span)) % 2 == 0
    return _where(even, extra + low, (extra * -1 + span) + low)


def _ints(a):
    """Integer positions of float ones; a non-finite or huge one becomes -1 (out of bounds)."""
    with np.errstate(invalid="ignore", over="ignore"):
        ok = np.isfinite(a) & (np.abs(a.astype(np.float64)) < 2.0**31)
    return np.where(ok, a, -1).astype(np.int64)


def _source(coord, size: int, padding: int, align_corners: bool):
    """PyTorch's ``compute_coordinates``: the padding mode applied to a pixel position."""
    if padding == _BORDER:
        coord = _clip(coord, size)
    elif padding == _REFLECTION:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord = _clip(_reflect(coord, *twice), size)
    return coord


def _cubic_weights(t):
    """The four bicubic tap weights of the fractional offset ``t`` (taps -1, 0, 1, 2)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((x * (a + 2) - (a + 3)) * x) * x + 1

    def far(x):  # 1 < |x| < 2
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a

    u = t * -1 + 1
    return [far(t + 1), near(t), near(u), far(u + 1)]


class _Gather:
    """The input laid out as rows (N * prod(spatial), C) and the row of each integer position;
    a position out of bounds reads row 0 with weight 0 (zeros padding)."""

    def __init__(self, input, sizes):
        nd = len(sizes)
        self.sizes = sizes  # innermost first: (W, H[, D])
        self.n, self.c = input._array.shape[:2]
        rows = self.n * int(np.prod(sizes))
        self.rows = input.permute(0, *range(2, 2 + nd), 1).reshape(rows, self.c)

    def row(self, ints):
        """``ints``: per grid dim (innermost first) integer arrays of shape (N, *out)."""
        valid = np.ones(ints[0].shape, dtype=bool)
        index = np.zeros(ints[0].shape, dtype=np.int64)
        for i, size in zip(reversed(ints), reversed(self.sizes)):
            valid &= (i >= 0) & (i < size)
            index = index * size + i
        batch = np.arange(self.n, dtype=np.int64).reshape((-1,) + (1,) * (index.ndim - 1))
        index = np.where(valid, index + batch * int(np.prod(self.sizes)), 0)
        return valid, index

    def take(self, ints):
        """Rows at the positions, shape (N, *out, C), zero out of bounds, and the in-bounds mask
        (N, *out, 1)."""
        valid, index = self.row(ints)
        taken = self.rows.index_select(0, primitive._make(index.reshape(-1)))
        valid = valid[..., None]
        taken = taken.reshape(*index.shape, self.c)
        return (taken if valid.all() else _where(valid, taken, _const(taken, 0))), valid


def _sample(input, grid, mode: int, padding: int, align_corners: bool):
    nd = grid._array.shape[-1]
    sizes = input._array.shape[:1:-1]  # (W, H[, D]): grid[..., 0] indexes the last dim
    source = _Gather(input, sizes)
    coords = [_unnormalize(grid.select(-1, k), size, align_corners)
              for k, size in enumerate(sizes)]
    out = None
    if mode == _BICUBIC:
        base = [np.floor(c._array) for c in coords]
        taps = [_cubic_weights((c - _const(c, b))[..., None]) for c, b in zip(coords, base)]
        for j, i in itertools.product(range(4), range(4)):
            ints = []
            for b, k, size in zip(base, (i, j), sizes):
                pos = _source(primitive._make(b + (k - 1)), size, padding, align_corners)
                ints.append(_ints(pos._array))
            value, _ = source.take(ints)
            # NOTE: value (0 out of bounds) times weight: a NaN position gives NaN, as in torch
            term = value * (taps[0][i] * taps[1][j])
            out = term if out is None else out + term
        return out
    coords = [_source(c, size, padding, align_corners) for c, size in zip(coords, sizes)]
    if mode == _NEAREST:
        ints = [_ints(np.rint(c._array)) for c in coords]
        value, valid = source.take(ints)
        # NOTE: the weight is 1 but tied to the grid, so its gradient w.r.t. grid is 0 as in
        # PyTorch rather than "not used in the graph"
        one = coords[0][..., None] * 0 + 1
        return value * _where(valid, one, _const(one, 0))
    base = [np.floor(c._array) for c in coords]
    low = [c - _const(c, b) for c, b in zip(coords, base)]  # weight of the upper neighbour
    high = [_const(c, b + 1) - c for c, b in zip(coords, base)]  # weight of the lower one
    for corner in itertools.product((0, 1), repeat=nd):
        corner = corner[::-1]  # NOTE: x fastest, so the corners add up in PyTorch's order
        w = None
        for k, up in enumerate(corner):
            f = low[k] if up else high[k]
            w = f if w is None else w * f
        w = w[..., None]
        value, _ = source.take([_ints(b + up) for b, up in zip(base, corner)])
        term = value * w
        out = term if out is None else out + term
    return out


def _check_sampler(input, grid, mode: int, nd: int | None):
    ia, ga = input._array, grid._array
    if ia.dtype != ga.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type(input.dtype)} but found "
                           f"{scalar_type(grid.dtype)}\nglassgrad: grid_sampler() needs input "
                           "and grid of one dtype; convert one with .to(other.dtype)")
    if ia.ndim and ga.ndim and ia.shape[0] != ga.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(ia.shape)} and grid with sizes "
                           f"{list(ga.shape)}")
    if ga.ndim and ga.shape[-1] != ia.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {ia.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(ga.shape)}")
    want = nd + 2 if nd else (4 if ia.ndim == 4 else 5)
    if ia.ndim != want or ga.ndim != want:
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(ia.shape)} and grid with "
                           f"sizes {list(ga.shape)}")
    for d in range(2, ia.ndim):
        if ia.shape[d] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(ia.shape)} with dimension "
                               f"{d} being empty")
    if mode == _BICUBIC and ia.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if ia.dtype.kind != "f":
        kernel = f"grid_sampler_{ia.ndim - 2}d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type(input.dtype)}\''
                                  "\nglassgrad: grid_sample needs a floating input and grid")


def _sampler(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool,
             nd: int | None = None):
    if interpolation_mode not in (0, 1, 2) or padding_mode not in (0, 1, 2):
        raise RuntimeError(f"grid_sampler(): interpolation_mode {interpolation_mode} and "
                           f"padding_mode {padding_mode} must be in 0..2 (the values of "
                           "GRID_SAMPLE_INTERPOLATION_MODES / GRID_SAMPLE_PADDING_MODES)")
    _check_sampler(input, grid, interpolation_mode, nd)
    out = _sample(input, grid, int(interpolation_mode), int(padding_mode), bool(align_corners))
    nd = grid._array.ndim - 2
    return out.permute(0, nd + 1, *range(1, nd + 1)).contiguous()


def grid_sampler(input, grid, interpolation_mode: int, padding_mode: int, align_corners: bool):
    """``grid_sample`` with integer modes (``torch.grid_sampler``): ``interpolation_mode`` 0
    bilinear, 1 nearest, 2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection."""
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode: int, padding_mode: int,
                    align_corners: bool):
    """``torch.grid_sampler_2d``: ``grid_sampler`` for 4-D input (N, C, H, W) and grid
    (N, H_out, W_out, 2) only."""
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners, nd=2)


def grid_sampler_3d(input, grid, interpolation_mode: int, padding_mode: int,
                    align_corners: bool):
    """``torch.grid_sampler_3d``: ``grid_sampler`` for 5-D input (N, C, D, H, W) and grid
    (N, D_out, H_out, W_out, 3) only (no bicubic)."""
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners, nd=3)


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None):
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalized positions of ``grid``
    (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), ``grid[..., 0]`` indexing the last
    dim (``torch.nn.functional.grid_sample``); returns (N, C, H_out, W_out) (or with D_out).

    ``mode`` bilinear, nearest or bicubic (4-D only); ``padding_mode`` zeros, border or
    reflection. Differentiable w.r.t. input and grid to any order (the grid's gradient is 0
    for nearest). ValueError for an unknown mode, RuntimeError for mismatched shapes or
    dtypes; ``align_corners=None`` warns and means False, as in torch.

    Example::

        >>> theta = glassgrad.tensor([[[1.0, 0, 0], [0, 1, 0]]])
        >>> x = glassgrad.randn(1, 3, 4, 4)
        >>> grid = affine_grid(theta, [1, 3, 4, 4], align_corners=False)
        >>> grid_sample(x, grid, align_corners=False)  # equals x
    """
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_user(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, GRID_SAMPLE_INTERPOLATION_MODES[mode],
                        GRID_SAMPLE_PADDING_MODES[padding_mode], align_corners)


def _linspace(steps: int, align_corners: bool, dtype):
    """Pixel centres (or corners) in [-1, 1] (PyTorch's ``linspace_from_neg_one``)."""
    if steps <= 1:
        return np.zeros(1, dtype=dtype)
    r = np.linspace(-1, 1, steps, dtype=dtype)
    return r if align_corners else r * dtype.type(steps - 1) / dtype.type(steps)


def affine_grid_generator(theta, size, align_corners: bool):
    """``torch.affine_grid_generator``: the grid of ``affine_grid`` without its argument checks;
    ``size`` is (N, C, H, W) or (N, C, D, H, W) and ``theta`` (N, 2, 3) or (N, 3, 4)."""
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.\n"
                           f"glassgrad: got size {size}")
    dtype = theta._array.dtype
    n, spatial = size[0], size[2:][::-1]  # innermost first: x, y[, z]
    axes = [_linspace(s, align_corners, dtype) for s in spatial]
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # outer dims first, x last
    base = np.stack([*mesh, np.ones_like(mesh[0])], axis=-1).reshape(-1, len(spatial) + 1)
    nd = len(spatial)
    shape = theta._array.shape
    if len(shape) < 3:  # torch's transpose(1, 2) of theta is the first to object
        r = max(len(shape), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-r}, {r - 1}], "
                         f"but got {r})\nglassgrad: "
                         "affine_grid_generator needs theta of shape (N, 2, 3) or (N, 3, 4)")
    if len(shape) > 3:
        raise RuntimeError("batch2 must be a 3D tensor\nglassgrad: affine_grid_generator needs "
                           f"theta of shape (N, 2, 3) or (N, 3, 4), got {list(shape)}")
    if tuple(shape[1:]) != (nd, nd + 1) or shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {nd + 1}] but got: {[shape[0], shape[-1]]}.\nglassgrad: "
                           f"affine_grid_generator needs theta of shape [{n}, {nd}, {nd + 1}] "
                           f"for size {size}")
    from ..ops.affine_grid import AffineGridGenerator

    return AffineGridGenerator.apply(theta, base=base, spatial=tuple(size[2:]))


def affine_grid(theta, size, align_corners: bool | None = None):
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps ``theta`` (N, 2, 3)
    or (N, 3, 4) for an output of ``size`` (N, C, H, W) or (N, C, D, H, W), in ``grid_sample``'s
    normalized coordinates (``torch.nn.functional.affine_grid``). Differentiable w.r.t. theta.
    ValueError for a non-floating theta, a theta shape that does not fit ``size`` or an empty
    size; NotImplementedError for a size that is not 4-D or 5-D (torch's errors).
    """
    if align_corners is None:
        warn_user(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = tuple(theta._array.shape)
    if len(size) in (4, 5):
        nd = len(size) - 2
        if len(shape) != 3 or shape[-2:] != (nd, nd + 1):
            raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x"
                             f"{nd + 1} for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warn_user("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                  "when align_corners=True. This is not an intended use case of affine_grid. "
                  "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)
