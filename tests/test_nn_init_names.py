"""``nn.init``'s deprecated names (``uniform``, ..., ``eye``, ``dirac``, ``sparse``), its typing
names and ``eye_`` / ``dirac_`` against torch: warnings, ``__name__``, values on the same seed,
errors."""

from __future__ import annotations

import warnings

import pytest
import torch

import glassgrad
from tests.nn_utils_oracle import _both, _error, _same

CASES = {
    "uniform": ((3, 4), {"a": -1.0, "b": 2.0}), "normal": ((3, 4), {"std": 0.5}),
    "constant": ((2, 2), {"val": 0.3}), "xavier_uniform": ((3, 4), {"gain": 2.0}),
    "xavier_normal": ((3, 4), {}), "kaiming_uniform": ((3, 4, 2), {"a": 0.1}),
    "kaiming_normal": ((3, 4), {"mode": "fan_out"}), "orthogonal": ((3, 5), {}),
    "sparse": ((6, 4), {"sparsity": 0.5}), "eye": ((3, 5), {}), "dirac": ((4, 2, 3), {"groups": 2}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_deprecated_alias_warns_and_fills_as_torch(name):
    shape, kwargs = CASES[name]

    def run(lib):
        t = lib.empty(*shape, dtype=lib.float64)
        fn = getattr(lib.nn.init, name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(t, **kwargs)
        return (fn.__name__, [(w.category.__name__, str(w.message)) for w in caught],
                out is t, t)

    _same(*_both(run), atol=1e-7)


def test_typing_names_are_torchs():
    for name in ("Callable", "Literal", "ParamSpec", "TypeVar"):
        assert getattr(glassgrad.nn.init, name) is getattr(torch.nn.init, name), name


@pytest.mark.parametrize("shape,groups", [((3, 3), 1), ((2, 5), 1), ((6, 3, 3), 3),
                                          ((4, 4, 2, 2), 2), ((3, 2, 1, 2, 3), 1)])
def test_eye_and_dirac_values(shape, groups):
    def run(lib):
        t = lib.randn(*shape)
        with lib.no_grad():
            fn = lib.nn.init.eye_ if len(shape) == 2 else lib.nn.init.dirac_
            out = fn(t) if len(shape) == 2 else fn(t, groups=groups)
        return out is t, t

    _same(*_both(run))


@pytest.mark.parametrize("case", ["eye_3d", "dirac_2d", "dirac_groups"])
def test_eye_and_dirac_errors(case):
    def run(lib):
        if case == "eye_3d":
            lib.nn.init.eye_(lib.empty(2, 2, 2))
        elif case == "dirac_2d":
            lib.nn.init.dirac_(lib.empty(2, 2))
        else:
            lib.nn.init.dirac_(lib.empty(5, 2, 3), groups=2)

    t, g = _error(run)
    assert t == g
