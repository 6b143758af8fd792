"""Bad input to the special functions (issue 15, lane special): each case runs on torch and on
glassgrad; glassgrad raises torch's exception type with torch's first message line in its own."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad


def _inputs(lib):
    return {
        "f": lib.tensor([0.5, 1.5], dtype=lib.float64),
        "g": lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True),
        "h": lib.tensor([0.5, 1.5], dtype=lib.float16),
        "i": lib.tensor([1, 2]),
        "b": lib.tensor([True, False]),
    }


def _backward(lib, fn):
    t = _inputs(lib)
    out = fn(lib, t)
    lib.autograd.grad(out.sum(), [t["g"]])


CASES = {
    # dtypes PyTorch's kernels have no loop for
    "ndtri_half": lambda m, t: m.special.ndtri(t["h"]),
    "log_ndtr_half": lambda m, t: m.special.log_ndtr(t["h"]),
    "erfcx_half": lambda m, t: m.special.erfcx(t["h"]),
    "zeta_half": lambda m, t: m.special.zeta(t["h"], t["h"]),
    "igamma_long": lambda m, t: m.igamma(t["i"], t["i"]),
    "igammac_bool": lambda m, t: m.igammac(t["b"], t["b"]),
    "gammainc_number": lambda m, t: m.special.gammainc(1.5, t["f"]),
    # arguments
    "polygamma_negative": lambda m, t: m.polygamma(-1, t["f"]),
    "polygamma_float_n": lambda m, t: m.polygamma(1.5, t["f"]),
    "polygamma_method_negative": lambda m, t: t["f"].polygamma(-2),
    "mvlgamma_p0": lambda m, t: m.mvlgamma(t["f"], 0),
    "multigammaln_bool": lambda m, t: m.special.multigammaln(t["b"], 2),
    "lgamma_list": lambda m, t: m.lgamma([1.0, 2.0]),
    "i0e_string": lambda m, t: m.special.i0e("x"),
    "ndtr_list": lambda m, t: m.special.ndtr([0.5]),
    # out= under autograd, in-place into an integer tensor
    "lgamma_out_grad": lambda m, t: m.lgamma(t["g"], out=m.empty(2, dtype=m.float64)),
    "digamma_int_inplace": lambda m, t: t["i"].digamma_(),
    "lgamma_int_inplace": lambda m, t: t["i"].lgamma_(),
    "i0_int_inplace": lambda m, t: t["i"].i0_(),
    "erfinv_int_inplace": lambda m, t: t["i"].erfinv_(),
    "xlogy_int_inplace": lambda m, t: t["i"].xlogy_(t["i"]),
    "igamma_int_inplace": lambda m, t: t["i"].igamma_(t["i"]),
    "polygamma_leaf_inplace": lambda m, t: t["g"].polygamma_(1),
    "mvlgamma_leaf_inplace": lambda m, t: t["g"].mvlgamma_(2),
    # derivatives PyTorch does not implement
    "igamma_grad_a": lambda m, t: _backward(m, lambda m, t: m.igamma(t["g"], t["f"])),
    "igammac_grad_a": lambda m, t: _backward(m, lambda m, t: m.special.gammaincc(t["g"], t["f"])),
    "zeta_grad_x": lambda m, t: _backward(m, lambda m, t: m.special.zeta(t["g"] + 1, t["f"])),
}


def _raised(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib, _inputs(lib))
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return exc
    raise AssertionError(f"{lib.__name__} raised nothing, returned {out!r}")


@pytest.mark.parametrize("name", list(CASES))
def test_error_matches_torch(name):
    theirs = _raised(torch, CASES[name])
    ours = _raised(glassgrad, CASES[name])
    assert isinstance(ours, type(theirs)), f"{type(ours).__name__} vs torch {type(theirs)!r}"
    phrase = str(theirs).splitlines()[0]
    assert phrase in str(ours), f"{phrase!r} not in {str(ours)!r}"


def test_no_grad_through_out_free_path():
    """out= with inputs that do not require grad writes the result into out (torch's values)."""
    for lib in (torch, glassgrad):
        out = lib.empty(3, dtype=lib.float64)
        r = lib.special.gammaln(lib.tensor([0.5, 2.0, 3.5], dtype=lib.float64), out=out)
        assert r is out
    np.testing.assert_allclose(glassgrad.lgamma(glassgrad.tensor([0.5, 2.0, 3.5])).numpy(),
                               torch.lgamma(torch.tensor([0.5, 2.0, 3.5])).numpy(), rtol=1e-6)
