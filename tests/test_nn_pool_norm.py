"""Issue 16, lane pool: normalisation layers (InstanceNorm1d/2d/3d with running statistics,
LocalResponseNorm, CrossMapLRN2d) and Softmax2d against torch: outputs, gradients, second order,
buffers after training steps, reprs, state_dict keys, errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.autograd import gradcheck, gradgradcheck
from tests.nn_oracle import check_module
from tests.oracle import assert_close, copy_params
from tests.test_nn_pool import _same_outcome

RNG = np.random.default_rng(160)
LIBS = (glassgrad, torch)

MODULES = [
    (lambda lib: lib.nn.InstanceNorm1d(3, track_running_stats=True), (2, 3, 5), True),
    (lambda lib: lib.nn.InstanceNorm1d(3, track_running_stats=True), (2, 3, 5), False),
    (lambda lib: lib.nn.InstanceNorm2d(2, affine=True, track_running_stats=True, momentum=0.4),
     (3, 2, 3, 4), True),
    (lambda lib: lib.nn.InstanceNorm2d(2, affine=True, track_running_stats=True), (2, 3, 4),
     False),
    (lambda lib: lib.nn.InstanceNorm3d(2, affine=True), (2, 2, 3, 2, 3), True),
    (lambda lib: lib.nn.InstanceNorm3d(2, track_running_stats=True, momentum=None),
     (3, 2, 2, 2, 2), True),
    (lambda lib: lib.nn.InstanceNorm3d(4, affine=True, bias=False), (4, 2, 3, 2), True),
    (lambda lib: lib.nn.LocalResponseNorm(3), (2, 5, 4, 3), True),
    (lambda lib: lib.nn.LocalResponseNorm(2, alpha=0.3, beta=0.5, k=2.0), (2, 4, 6), True),
    (lambda lib: lib.nn.LocalResponseNorm(4, alpha=0.1), (1, 3, 2, 2, 2), True),
    (lambda lib: lib.nn.Softmax2d(), (2, 3, 2, 4), True),
    (lambda lib: lib.nn.Softmax2d(), (3, 2, 4), True),
]


@pytest.mark.parametrize("make, shape, train", MODULES,
                         ids=[f"m{i}" for i in range(len(MODULES))])
def test_norm_modules_match_torch(make, shape, train):
    x = RNG.standard_normal(shape)
    check_module(make, [x], double=True, train=train)
    assert repr(make(glassgrad)) == repr(make(torch))
    assert list(make(glassgrad).state_dict()) == list(make(torch).state_dict())


def test_instance_norm_running_stats_over_steps():
    """Three training steps then eval, buffers and outputs equal torch's (float64)."""
    mods = [lib.nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.2).double()
            for lib in LIBS]
    copy_params(mods[1], mods[0])
    for step in range(4):
        x = RNG.standard_normal((2, 3, 4, 3))
        if step == 3:
            for m in mods:
                m.eval()
        ours, theirs = (m(lib.tensor(x)) for m, lib in zip(mods, LIBS))
        assert_close(ours, theirs, 1e-12, 1e-10, what=f"step {step}")
        for (name, a), (_, b) in zip(mods[0].named_buffers(), mods[1].named_buffers()):
            assert_close(a, b, 1e-12, 1e-10, what=f"step {step} {name}")


def test_instance_norm_num_features_mismatch():
    x = RNG.standard_normal((2, 4, 5))
    for lib in LIBS:
        with pytest.raises(ValueError, match="to match num_features"):
            lib.nn.InstanceNorm1d(3, affine=True)(lib.tensor(x))
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.nn.InstanceNorm1d(3)(lib.tensor(x))


def test_instance_norm_old_checkpoint_running_stats_reported():
    msgs = []
    for lib in LIBS:
        m = lib.nn.InstanceNorm1d(3)
        state = {"running_mean": lib.zeros(3), "running_var": lib.ones(3)}
        state = type(m.state_dict())(state)
        state._metadata = {"": {}}
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(state)
        msgs.append(str(e.value).split("\n\t", 1)[1])
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("channels, size", [(2, 3), (5, 3), (6, 2), (7, 5), (4, 1)])
def test_cross_map_lrn2d_values_match_torch_and_gradient_is_exact(channels, size):
    x = RNG.standard_normal((1, channels, 2, 2))
    ours, theirs = (lib.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=1.5)(lib.tensor(x))
                    for lib in LIBS)
    assert_close(ours, theirs, 1e-12, 1e-10, what="CrossMapLRN2d")
    # NOTE: torch's hand-written backward fails torch's own gradcheck: finite differences here
    t = glassgrad.tensor(x, requires_grad=True)
    fn = glassgrad.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=1.5)
    assert gradcheck(fn, (t,)) and gradgradcheck(fn, (t,))
    assert repr(fn) == repr(torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=1.5))
    assert not isinstance(fn, glassgrad.nn.LocalResponseNorm)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.CrossMapLRN2d(3)(lib.randn(2, 3, 4)),
    lambda lib: lib.nn.LocalResponseNorm(2)(lib.randn(2, 3)),
    lambda lib: lib.nn.functional.local_response_norm(lib.zeros(0, 3, 4), 2).shape,
    lambda lib: lib.nn.Softmax2d()(lib.randn(2, 3)),
    lambda lib: lib.nn.InstanceNorm3d(2)(lib.randn(2, 3, 4)),
    lambda lib: lib.nn.InstanceNorm1d(2)(lib.randn(2, 2, 1)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3, 4), use_input_stats=False),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3, 4), lib.zeros(4), lib.ones(4)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3, 4), lib.zeros(3), None),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3, 4), None, None, lib.ones(4)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(0, 3, 4), None, None, None,
                                                lib.ones(3)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(0, 3, 4), lib.zeros(3),
                                                lib.ones(3)).shape,
    lambda lib: lib.nn.functional.instance_norm(
        lib.randn(2, 3, 4), lib.zeros(3, requires_grad=True), lib.ones(3)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 3, 1), lib.zeros(3), lib.ones(3),
                                                use_input_stats=False).shape,
    lambda lib: lib.instance_norm(lib.randn(2, 3, 1), None, None, None, None, True, 0.1, 1e-5,
                                  False).shape,
], ids=lambda f: "")
def test_norm_errors_match_torch(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = _same_outcome(call)
    if both is not None:  # both succeeded: the same shape
        assert tuple(both[0]) == tuple(both[1])


def test_instance_norm_half_input_keeps_float32_stats():
    x = RNG.standard_normal((2, 3, 6)).astype(np.float16)
    res = []
    for lib in LIBS:
        rm, rv = lib.zeros(3), lib.ones(3)
        y = lib.nn.functional.instance_norm(lib.tensor(x), rm, rv)
        res.append((y, rm, rv))
    assert res[0][0].dtype == glassgrad.float16
    for a, b in zip(res[0], res[1]):
        assert_close(a, b, 2e-3, 2e-3, what="half instance_norm")


@pytest.mark.parametrize("call", [
    lambda lib, rm, rv: lib.instance_norm(lib.arange(6.).reshape(2, 3, 1), None, None, rm, rv,
                                          True, 0.1, 1e-5, False),
    lambda lib, rm, rv: lib.nn.functional.instance_norm(lib.ones(2, 3, 0), rm, rv),
    lambda lib, rm, rv: lib.nn.functional.instance_norm(lib.ones(0, 3, 4), rm, rv),
], ids=["one spatial element", "empty plane", "empty batch"])
def test_instance_norm_running_stats_edge_cases(call):
    """torch's NaN variance for one element, untouched stats for empty planes, NaN for an empty
    batch."""
    stats = []
    for lib in LIBS:
        rm, rv = lib.zeros(3), lib.ones(3)
        out = call(lib, rm, rv)
        stats.append((out, rm, rv))
    for a, b in zip(*stats):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-4, equal_nan=True)
