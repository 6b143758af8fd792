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


def _self_operand(y, method):
    return getattr(y, method)(y)


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
    "ndtr_out_long": lambda m, t: m.special.ndtr(t["f"], out=m.empty(2, dtype=m.int64)),
    "hypot_out_bool": lambda m, t: m.hypot(t["f"], t["f"], out=m.empty(2, dtype=m.bool)),
    "digamma_int_inplace": lambda m, t: t["i"].digamma_(),
    "lgamma_int_inplace": lambda m, t: t["i"].lgamma_(),
    "i0_int_inplace": lambda m, t: t["i"].i0_(),
    "erfinv_int_inplace": lambda m, t: t["i"].erfinv_(),
    "xlogy_int_inplace": lambda m, t: t["i"].xlogy_(t["i"]),
    "igamma_int_inplace": lambda m, t: t["i"].igamma_(t["i"]),
    "polygamma_leaf_inplace": lambda m, t: t["g"].polygamma_(1),
    "mvlgamma_leaf_inplace": lambda m, t: t["g"].mvlgamma_(2),
    # the elementwise math names
    "logaddexp_number": lambda m, t: m.logaddexp(t["f"], 2.0),
    "logaddexp_long": lambda m, t: m.logaddexp(t["i"], t["i"]),
    "hypot_bool": lambda m, t: m.hypot(t["b"], t["b"]),
    "nextafter_long": lambda m, t: m.nextafter(t["i"], t["i"]),
    "logaddexp2_long": lambda m, t: m.logaddexp2(t["i"], t["i"]),
    "heaviside_dtypes": lambda m, t: m.heaviside(t["f"], t["h"]),
    "heaviside_number": lambda m, t: m.heaviside(t["f"], 0.5),
    "gcd_float": lambda m, t: m.gcd(t["f"], t["f"]),
    "lcm_bool": lambda m, t: m.lcm(t["b"], t["b"]),
    "gcd_number": lambda m, t: m.gcd(t["i"], 2),
    "frexp_int": lambda m, t: m.frexp(t["i"]),
    "fmax_number": lambda m, t: m.fmax(t["f"], 1.0),
    "ldexp_number": lambda m, t: m.ldexp(t["f"], 2),
    "float_power_numbers": lambda m, t: m.float_power(2, 3),
    "positive_bool": lambda m, t: m.positive(t["b"]),
    "float_power__float32": lambda m, t: t["f"].float().float_power_(2),
    "float_power__long": lambda m, t: t["i"].float_power_(2),
    "ldexp__long": lambda m, t: t["i"].ldexp_(t["i"]),
    "deg2rad__long": lambda m, t: t["i"].deg2rad_(),
    "copysign__long": lambda m, t: t["i"].copysign_(t["i"]),
    "hypot__long": lambda m, t: t["i"].hypot_(t["i"]),
    "exp2__long": lambda m, t: t["i"].exp2_(),
    "heaviside__dtypes": lambda m, t: t["f"].heaviside_(t["h"]),
    "hypot__leaf": lambda m, t: t["g"].hypot_(t["f"]),
    "heaviside_grad": lambda m, t: _backward(m, lambda m, t: m.heaviside(t["g"], t["f"])),
    # an in-place op whose other operand is the tensor written (saved, then modified)
    "float_power__self": lambda m, t: _backward(
        m, lambda m, t: _self_operand(t["g"] * 1, "float_power_")),
    "hypot__self": lambda m, t: _backward(m, lambda m, t: _self_operand(t["g"] * 1, "hypot_")),
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
    if name.endswith("__self"):  # torch names its own node (Pow1); glassgrad the copy it made
        phrase = phrase.split(": [")[0]
    assert phrase in str(ours), f"{phrase!r} not in {str(ours)!r}"


def test_no_grad_through_out_free_path():
    """out= with inputs that do not require grad writes the result into out (torch's values)."""
    for lib in (torch, glassgrad):
        out = lib.empty(3, dtype=lib.float64)
        r = lib.special.gammaln(lib.tensor([0.5, 2.0, 3.5], dtype=lib.float64), out=out)
        assert r is out
    np.testing.assert_allclose(glassgrad.lgamma(glassgrad.tensor([0.5, 2.0, 3.5])).numpy(),
                               torch.lgamma(torch.tensor([0.5, 2.0, 3.5])).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["i0e_float32", "hypot_resize", "gcd_int32", "frexp_pair",
                                  "logsumexp_0d", "bessel_j0_empty"])
def test_out_matches_torch(name):
    """out=: the result written (cast to out's dtype of the same kind), out returned, resized
    with torch's warning when it had elements of another shape."""
    cases = {
        "i0e_float32": lambda m, f: m.special.i0e(f, out=m.empty(2, dtype=m.float32)),
        "hypot_resize": lambda m, f: m.hypot(f, f, out=m.empty(3, dtype=m.float64)),
        "gcd_int32": lambda m, f: m.gcd(m.tensor([4, 6]), m.tensor([6, 4]),
                                        out=m.empty(2, dtype=m.int32)),
        "frexp_pair": lambda m, f: m.frexp(f, out=(m.empty(2, dtype=m.float64),
                                                   m.empty(2, dtype=m.int32))),
        "logsumexp_0d": lambda m, f: m.special.logsumexp(f, 0, out=m.empty((), dtype=m.float64)),
        "bessel_j0_empty": lambda m, f: m.special.bessel_j0(f, out=m.empty(0, dtype=m.float64)),
    }
    results = []
    for lib in (torch, glassgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = cases[name](lib, lib.tensor([0.5, 1.5], dtype=lib.float64))
        results.append((out if isinstance(out, tuple) else (out,),
                        [str(w.message).split(" since")[0] for w in caught]))
    (theirs, t_warn), (ours, g_warn) = results
    assert g_warn == t_warn
    for a, b in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
