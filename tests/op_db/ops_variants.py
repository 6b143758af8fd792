"""Op table entries: the generic variants (issue 15, lane ops): in-place ``X_`` at top level and
on Tensor (run on a clone, so the write is recorded on a non-leaf and its gradient flows back),
and the ``*_copy`` forms of the view ops."""

from . import OpInfo, Sample, arr


def _unary(domain):
    lo, hi = domain

    def make(rng):  # one sample: the variants are thin wrappers of ops tested in full elsewhere
        return [Sample((rng.uniform(lo, hi, size=(3, 4)).T,), desc="non-contiguous")]

    return make


_GENERAL = (-2.0, 2.0)
_UNIT = (-0.9, 0.9)
_POS = (0.2, 2.0)
_ABOVE_ONE = (1.2, 3.0)
_DOMAIN = {
    "acos_": _UNIT, "arccos_": _UNIT, "asin_": _UNIT, "arcsin_": _UNIT, "atanh_": _UNIT,
    "arctanh_": _UNIT, "acosh_": _ABOVE_ONE, "arccosh_": _ABOVE_ONE, "log_": _POS,
    "log10_": _POS, "log1p_": _POS, "log2_": _POS, "rsqrt_": _POS, "sqrt_": _POS,
    "reciprocal_": _POS,
}
# torch's alias spellings (arccos_, fix_, negative_, ...) are the same functions: checked by
# identity and one value in tests/test_ops_variants.py instead of a table entry each
_TOP_UNARY = (
    "abs_ acos_ acosh_ asin_ asinh_ atan_ atanh_ ceil_ cos_ cosh_ erf_ erfc_ exp_ expm1_ floor_ "
    "frac_ log_ log10_ log1p_ log2_ neg_ reciprocal_ round_ rsqrt_ sigmoid_ sin_ sinh_ sqrt_ "
    "square_ tan_ tanh_ trunc_ zero_ detach_"
).split()
_METHOD_UNARY = "acosh_ asinh_ atanh_ log10_ log2_ square_ erfc_ tril_ triu_ t_".split()


def _top(name):
    return lambda lib, x: getattr(lib, name)(x.clone())


def _method(name, *args):
    return lambda lib, x: getattr(x.clone(), name)(*args)


def _binary_method(name):
    return lambda lib, x, y: getattr(x.clone(), name)(y)


def _matrices(rng):
    return [Sample((arr(rng, 4, 3).T,), desc="non-contiguous")]


def _two(rng):
    return [Sample((arr(rng, 3, 4), arr(rng, 4)), desc="broadcast other")]


# PyTorch defines no derivative for these writes (tests/test_ops_variants.py checks the error)
_NO_GRAD = {"detach_", "acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}
OPS = [OpInfo(f"torch.{n}", _top(n), _unary(_DOMAIN.get(n, _GENERAL)), grad=n not in _NO_GRAD)
       for n in _TOP_UNARY]
OPS += [
    OpInfo(f"Tensor.{n}", _method(n), _matrices if n in ("tril_", "triu_", "t_")
           else _unary(_DOMAIN.get(n, _GENERAL)), grad=n not in _NO_GRAD)
    for n in _METHOD_UNARY
]
OPS += [
    OpInfo("torch.clamp_", lambda lib, x: lib.clamp_(x.clone(), -0.5, 0.7), _unary(_GENERAL)),
    OpInfo("torch.clip_", lambda lib, x: lib.clip_(x.clone(), min=-0.5), _unary(_GENERAL)),
    OpInfo("torch.clamp_min_", lambda lib, x: lib.clamp_min_(x.clone(), 0.1), _unary(_GENERAL)),
    OpInfo("torch.clamp_max_", lambda lib, x: lib.clamp_max_(x.clone(), 0.1), _unary(_GENERAL)),
    OpInfo("torch.fill_", lambda lib, x: lib.fill_(x.clone(), 1.5), _unary(_GENERAL)),
    OpInfo("torch.index_put_", lambda lib, x, v: lib.index_put_(
        x.clone(), (lib.tensor([0, 2, 0]),), v, accumulate=True),
        lambda rng: [Sample((arr(rng, 4, 3), arr(rng, 3)), desc="accumulate")]),
    OpInfo("Tensor.atan2_", _binary_method("atan2_"), _two),
    OpInfo("Tensor.arctan2", lambda lib, x, y: x.arctan2(y), _two),
    OpInfo("Tensor.cumsum_", _method("cumsum_", 1), _matrices),
    OpInfo("Tensor.cumprod_", _method("cumprod_", 0), _matrices),
    OpInfo("Tensor.transpose_", _method("transpose_", 0, 1), _matrices),
    OpInfo("Tensor.swapaxes_", _method("swapaxes_", 1, 0), _matrices),
    OpInfo("Tensor.swapdims_", _method("swapdims_", -1, 0), _matrices),
    OpInfo("Tensor.tril_(offset)", _method("tril_", 1), _matrices),
]
for _name in "greater_ greater_equal_ less_ less_equal_ not_equal_".split():
    OPS.append(OpInfo(f"Tensor.{_name}", _binary_method(_name), _two, grad=False))


def _copy(name, *args, **kwargs):
    return lambda lib, x: getattr(lib, name)(x, *args, **kwargs)


def _cube(rng):
    return [Sample((arr(rng, 4, 3, 2).transpose(2, 1, 0),), desc="non-contiguous")]


OPS += [
    OpInfo("torch.alias_copy", _copy("alias_copy"), _cube),
    OpInfo("torch.detach_copy", _copy("detach_copy"), _cube, grad=False),
    OpInfo("torch.detach", _copy("detach"), _cube, grad=False),
    OpInfo("torch.diagonal_copy", _copy("diagonal_copy", 1, 0, 2), _cube),
    OpInfo("torch.expand_copy", _copy("expand_copy", (2, 2, 3, 4)), _cube),
    OpInfo("torch.narrow_copy", _copy("narrow_copy", 1, 1, 2), _cube),
    OpInfo("Tensor.narrow_copy", lambda lib, x: x.narrow_copy(2, 0, 3), _cube),
    OpInfo("torch.permute_copy", _copy("permute_copy", (2, 0, 1)), _cube),
    OpInfo("torch.select_copy", _copy("select_copy", 1, -1), _cube),
    OpInfo("torch.slice_copy", _copy("slice_copy", 2, 1, None, 2), _cube),
    OpInfo("torch.split_copy", _copy("split_copy", 2, 1), _cube),
    OpInfo("torch.split_with_sizes_copy", _copy("split_with_sizes_copy", [1, 3], -1), _cube),
    OpInfo("torch.squeeze_copy", lambda lib, x: lib.squeeze_copy(x[:, :1], 1), _cube),
    OpInfo("torch.t_copy", lambda lib, x: lib.t_copy(x[0]), _cube),
    OpInfo("torch.transpose_copy", _copy("transpose_copy", 0, 2), _cube),
    OpInfo("torch.unbind_copy", _copy("unbind_copy", 1), _cube),
    OpInfo("torch.unfold_copy", _copy("unfold_copy", 2, 2, 1), _cube),
    OpInfo("torch.unsqueeze_copy", _copy("unsqueeze_copy", -1), _cube),
    OpInfo("torch.view_copy", lambda lib, x: lib.view_copy(x.contiguous(), (4, 6)), _cube),
    OpInfo("Tensor.unfold", lambda lib, x, d, s, st: x.unfold(d, s, st), lambda rng: [
        Sample((arr(rng), 0, 1, 1), desc="0-d"),
        Sample((arr(rng, 7), 0, 3, 2), desc="vector step 2"),
        Sample((arr(rng, 3, 6), 1, 3, 1), desc="overlapping"),
        Sample((arr(rng, 5, 2, 3).transpose(2, 0, 1), -2, 2, 3), desc="non-contiguous gaps"),
        Sample((arr(rng, 0, 4), 1, 2, 2), desc="empty"),
    ]),
]
