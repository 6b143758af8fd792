"""Differences the differential fuzzer (tests/test_fuzz_differential.py) found and part 6 fixed,
each run on torch and glassgrad."""

from __future__ import annotations

import math
import warnings

import pytest

from tests.adversarial_util import LIBS, _both, _same


def _squeeze_grad(lib, inplace):
    x = lib.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    y = x * lib.tensor([[1.0], [10.0], [100.0]])
    y = y.squeeze_() if inplace else y.squeeze()
    (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    return x.grad, y.shape


@pytest.mark.parametrize("inplace", [False, True])
def test_squeeze_inplace_gradient(inplace):
    # glassgrad gave [6, 60, 600]: the old node summed a (3,) gradient into (3, 1)
    _same(*_both(lambda lib: _squeeze_grad(lib, inplace)), "x.grad")


def test_unsqueeze_inplace_on_scalar_sum():
    def run(lib):
        x = lib.tensor(-1.625, requires_grad=True)
        v = x.sum(0, keepdim=True)
        v.unsqueeze_(0)
        (v * lib.tensor([2.0])).sum().backward()  # glassgrad: "SumBackward: cannot broadcast"
        return x.grad, v.shape, v.requires_grad

    _same(*_both(run), "unsqueeze_")


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "glassgrad"])
@pytest.mark.parametrize("method", ["squeeze_", "unsqueeze_"])
def test_reshape_inplace_on_leaf(lib, method):
    x = lib.zeros(3, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(x, method)(0)
    with lib.no_grad():
        getattr(x, method)(-1)
    assert x.requires_grad and x.is_leaf


def test_flatten_of_1d_is_the_input():
    def run(lib):
        x = lib.tensor([math.nan, 1.25, 0.125], requires_grad=True)
        v = x.flatten()
        x.min(-1)[0].backward()
        return v is x, v.grad, x.flatten(0, 0) is x, lib.zeros(2, 3).flatten(1, 1).shape

    _same(*_both(run), "flatten")


def test_mT_of_0d_and_1d():
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: mT on 0-D is deprecated (the identity)
            x = lib.tensor(2.0)
            out = [x.mT is x]
        try:
            lib.zeros(3).mT
        except RuntimeError as exc:
            out.append(str(exc).split("\n")[0])
        return out

    _same(*_both(run), "mT")


def test_bfloat16_lerp_with_infinite_start():
    # bfloat16 took the one-sided composite (NaN); torch's two-sided form gives -inf
    def run(lib):
        x = lib.tensor([-math.inf, -0.125, 0.75], dtype=lib.bfloat16)
        end = lib.tensor(0.125, dtype=lib.bfloat16, requires_grad=True)
        return lib.lerp(x, end, 0.5), x.clone().lerp_(end, 0.75), lib.lerp(x, end, 0.25)

    _same(*_both(run), "lerp")


def test_cat_promotes_over_skipped_empties():
    def run(lib):
        e64, e16 = lib.zeros(0, dtype=lib.int64), lib.zeros(0, dtype=lib.float16)
        return [lib.cat(ts).dtype == lib.float16 for ts in (
            [e64, e16], [e64, lib.zeros(2, dtype=lib.float16)],
            [e16, lib.zeros(2, 3, dtype=lib.int64)])] + [lib.cat([e16, lib.ones(2, 3)])]

    _same(*_both(run), "cat")


def test_cat_of_only_empties_keeps_requires_grad():
    def run(lib):
        x = lib.zeros(0, dtype=lib.float16, requires_grad=True)
        out = lib.cat([lib.zeros(0, dtype=lib.float16), x])
        out.sum().backward()
        return out.requires_grad, x.grad

    _same(*_both(run), "cat")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "uint8"])
def test_setitem_drops_leading_ones_of_the_value(dtype):
    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.tensor([[1, 2, 3]], dtype=dt)
        x[0, 1] = lib.tensor([7], dtype=dt)
        x[..., 2] = lib.tensor([[5]], dtype=dt)
        out = [x]
        try:
            x[0, 0] = lib.tensor([4, 4], dtype=dt)
        except RuntimeError as exc:
            out.append(type(exc).__name__)
        return out

    _same(*_both(run), "setitem")


def test_setitem_gradient_of_a_value_with_a_leading_one():
    def run(lib):
        x = lib.tensor([math.nan, 2.0, 3.0])
        y = lib.tensor([-1.5], requires_grad=True)
        x[..., 0] = y  # glassgrad: "IndexPutBackward0 returned an invalid gradient"
        (x * x).sum().backward()
        return x, y.grad

    _same(*_both(run), "setitem")


@pytest.mark.parametrize("op", ["&=", "|=", "^="])
def test_inplace_bitwise_writes_through_views(op):
    # `v &= y` ran as `v = v & y`: the base x kept its values (and v was a new tensor)
    def run(lib):
        x = lib.tensor([[5, 6], [7, 8]])
        v = x[0]
        ns = {"v": v, "y": lib.tensor(3)}
        exec(f"v {op} y", ns)
        mask = lib.tensor([True, False, True])
        m = mask[1:]
        ns = {"m": m, "y": lib.tensor([True, True])}
        exec(f"m {op} y", ns)
        return ns["m"] is m, x, mask, getattr(lib.tensor([5, 6]), {
            "&=": "bitwise_and_", "|=": "bitwise_or_", "^=": "bitwise_xor_"}[op])(True)

    _same(*_both(run), op)


@pytest.mark.parametrize("dtypes", [("float16", "float64"), ("float32", "int64"),
                                    ("int8", "uint8"), ("bool", "int32")])
def test_lerp_refuses_other_dtypes(dtypes):
    def run(lib):
        a, b = (getattr(lib, d) for d in dtypes)
        out = []
        for f in (lambda: lib.lerp(lib.zeros(2, dtype=a), lib.zeros(2, dtype=b), 0.5),
                  lambda: lib.zeros(2, dtype=a).lerp_(lib.zeros((), dtype=b), 0.3)):
            try:
                f()
            except RuntimeError as exc:
                out.append(str(exc).split("\n")[0])
        # a 0-d weight of another dtype is accepted
        out.append(lib.lerp(lib.zeros(2), lib.ones(2), lib.tensor(0.5, dtype=lib.float64)))
        return out

    _same(*_both(run), "lerp")


def test_setitem_bad_index_before_leaf_rule():
    def run(lib):
        x = lib.tensor(-2.75, requires_grad=True)
        out = []
        for f in (lambda: x.t().__setitem__((Ellipsis, slice(None, 2)), 1.0),
                  lambda: x.__setitem__(0, lib.tensor(1.0))):
            try:
                f()
            except (IndexError, RuntimeError) as exc:
                out.append(type(exc).__name__)
        return out

    _same(*_both(run), "setitem")


def test_squeeze_inplace_bumps_the_version():
    # amax saved v; squeeze_ changed its shape: torch's version check, not an IndexError
    def run(lib):
        x = lib.tensor([-0.5], dtype=lib.float64, requires_grad=True)
        v = x * 2
        m = v.amax(-1)
        v.squeeze_()
        try:
            m.backward()
        except RuntimeError as exc:
            return v._version, str(exc).split(":")[0]
        return v._version, None

    _same(*_both(run), "squeeze_")


@pytest.mark.parametrize("how", ["long", "bool", "to_int32", "copy_", "setitem", "double"])
def test_integer_copies_do_not_require_grad(how):
    # glassgrad's x.long() (and copy_/setitem into an integer tensor) required grad
    def run(lib):
        x = lib.tensor([1.5, -2.0, 3.0], requires_grad=True)
        y = x * 2
        if how == "long":
            out = y.long()
        elif how == "bool":
            out = y.bool()
        elif how == "to_int32":
            out = y.to(lib.int32)
        elif how == "double":
            out = y.double()
        else:
            out = lib.zeros(3, dtype=lib.int64)
            if how == "copy_":
                out.copy_(y)
            else:
                out[1:] = y[1:]
        return out.detach(), out.dtype == lib.float64, out.requires_grad, out.grad_fn is None

    _same(*_both(run), how)


@pytest.mark.parametrize("inplace", [False, True])
def test_integer_pow_of_shapes_that_do_not_broadcast(inplace):
    # glassgrad's integer pow let NumPy's "operands could not be broadcast" escape
    def run(lib):
        x = lib.zeros((0, 3), dtype=lib.int8)
        y = lib.zeros((0,), dtype=lib.int8)
        try:
            x.pow_(y) if inplace else x.pow(y)
        except Exception as e:  # noqa: BLE001 - the type and message are what is compared
            return type(e).__name__, str(e).splitlines()[0]
        return "no error"

    _same(*_both(run), "pow")
