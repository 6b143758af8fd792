"""Op table entries: complex numbers (glassgrad/ops/complex_ops.py and the complex forms of the
core ops). Samples are real; each entry builds complex tensors with ``complex``/``view_as_complex``
and returns real ones (``view_as_real``, ``abs``, ``angle``), so the table's real cotangents,
gradcheck and gradgradcheck drive the complex gradients (NOTE [Complex gradients])."""

from . import OpInfo, Sample


def _pair(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(), u()), desc="0-d"),
            Sample((u(3, 4), u(3, 4).T.copy().T), desc="matrix"),
            Sample((u(3, 1), u(1, 4)), desc="broadcast")]  # (no empty: torch's own view_as_real
    # backward refuses the strides NumPy gives an empty array)


def _last2(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(2),), desc="0-d complex"), Sample((u(3, 4, 2),), desc="matrix")]


def _z(m, x, y):
    return m.complex(x, y)


_R = lambda m, t: m.view_as_real(t)  # noqa: E731


def _views(m, z, x):
    """Reshapes, transposes, indexing, joins, where/masked_fill and sums of one complex matrix."""
    parts = [z.reshape(-1), z.t().flatten(), z.permute(1, 0)[1:3].reshape(-1),
             z[[0, 2], 1:].flatten(), m.where(x > 0, z, z * 2j).sum(0),
             z.masked_fill(x < 0, 1j).mean(1), m.stack([z[0], z[1].conj()]).sum(0),
             z[:, :1].expand(3, 4).sum(1), z.unsqueeze(0).sum((0, 1))]
    return m.cat(parts)

OPS = [
    OpInfo("complex", lambda m, x, y: _R(m, _z(m, x, y)), _pair),
    OpInfo("real_imag", lambda m, x, y: _z(m, x, y).real * 2 + _z(m, x, y).imag, _pair),
    OpInfo("abs_complex", lambda m, x, y: _z(m, x, y).abs(), _pair, float32=True),
    OpInfo("angle_complex", lambda m, x, y: m.angle(_z(m, x, y)), _pair),
    OpInfo("conj", lambda m, x, y: _R(m, m.conj_physical(_z(m, x, y) * 2)), _pair),
    OpInfo("sgn_complex", lambda m, x, y: _R(m, m.sgn(_z(m, x, y))), _pair),
    OpInfo("polar", lambda m, x, y: _R(m, m.polar(x.abs() + 0.5, y)), _pair),
    OpInfo("view_as_complex", lambda m, x: m.view_as_complex(x).abs(), _last2),
    OpInfo("mul_complex", lambda m, x, y: _R(m, _z(m, x, y) * _z(m, y, x * x)), _pair),
    OpInfo("div_complex", lambda m, x, y: _R(m, _z(m, x, y) / _z(m, y + 3, x)), _pair),
    OpInfo("add_sub_complex", lambda m, x, y: _R(m, _z(m, x, y) - _z(m, y, x) * 1j + 2), _pair),
    OpInfo("exp_log_complex", lambda m, x, y: _R(m, (_z(m, x, y).exp() + 1).log()), _pair),
    OpInfo("sqrt_recip_complex", lambda m, x, y: _R(m, (_z(m, x, y) + 3).sqrt().reciprocal()),
           _pair),
    OpInfo("trig_complex", lambda m, x, y: _R(m, m.sin(_z(m, x, y) * 0.5).cos().tanh()), _pair),
    OpInfo("pow_complex", lambda m, x, y: _R(m, _z(m, x, y) ** 3 + _z(m, x, y) ** 2), _pair),
    OpInfo("sum_mean_complex", lambda m, x, y: _R(m, _z(m, x, y).sum() + _z(m, x, y).mean()),
           _pair),
    OpInfo("views_joins_complex", lambda m, x, y: _R(m, _views(m, _z(m, x, y), x)),
           lambda rng: _pair(rng)[1:2]),
    OpInfo("matmul_complex", lambda m, x, y: _R(m, _z(m, x, y) @ _z(m, y, x).mT),
           lambda rng: _pair(rng)[1:2]),
]
