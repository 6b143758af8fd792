"""``nn.utils`` fusion (conv/linear with batch norm), ``skip_init``, the conv weight memory
formats, ``stateless.functional_call``, ``clip_grads_with_norm_`` / ``get_total_norm`` edge
cases and ``PackedSequence.pin_memory``, each against torch on the same seed."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.utils.stateless  # noqa: F401 - torch does not import the submodule itself

import glassgrad
from tests.nn_utils_oracle import _both, _error, _same

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


@pytest.mark.parametrize("kind", ["conv2d", "conv1d_no_bias", "conv_transpose2d", "conv3d"])
def test_fuse_conv_bn_eval(kind):
    def run(lib):
        nn = lib.nn
        if kind == "conv2d":
            conv, bn, x, tr = nn.Conv2d(3, 4, 2), nn.BatchNorm2d(4), lib.randn(2, 3, 4, 4), False
        elif kind == "conv1d_no_bias":
            conv, bn = nn.Conv1d(3, 4, 2, bias=False), nn.BatchNorm1d(4, affine=False)
            x, tr = lib.randn(2, 3, 5), False
        elif kind == "conv_transpose2d":
            conv, bn = nn.ConvTranspose2d(3, 4, 2, groups=1), nn.BatchNorm2d(4)
            x, tr = lib.randn(2, 3, 3, 3), True
        else:
            conv, bn, x, tr = nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), lib.randn(1, 2, 3, 3, 3), False
        conv, bn, x = conv.double(), bn.double(), x.double()
        for _ in range(2):
            bn(conv(x))  # running statistics away from their initial values
        if bn.weight is not None:
            with lib.no_grad():
                bn.weight.uniform_(0.5, 2.0)
                bn.bias.uniform_(-1.0, 1.0)
        conv.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=tr)
        y = fused(x)
        y.sum().backward()
        return (type(fused).__name__, fused is conv, y, bn(conv(x)), fused.weight, fused.bias,
                fused.weight.grad, fused.bias.requires_grad, fused.bias.dtype)

    t, g = _both(run)
    _same(t, g, atol=1e-9)
    assert (g[2] - g[3]).abs().max().item() < 1e-10  # the fused layer is the pair


def test_fuse_linear_bn_and_weights_functions():
    def run(lib):
        lin, bn = lib.nn.Linear(3, 4).double(), lib.nn.BatchNorm1d(4).double()
        x = lib.randn(5, 3, dtype=lib.float64)
        bn(lin(x))
        lin.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        one = lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(3, 4, bias=False).eval(),
                                               lib.nn.BatchNorm1d(1).eval())
        w, b = lib.nn.utils.fuse_conv_bn_weights(
            lib.randn(4, 2, 3), None, lib.randn(4), lib.rand(4) + 0.5, 1e-3, None, None)
        lw, lb = lib.nn.utils.fuse_linear_bn_weights(
            lib.randn(4, 3).requires_grad_(), lib.randn(4), lib.randn(4), lib.rand(4) + 0.5,
            1e-5, lib.randn(4), lib.randn(4))
        return (fused(x), bn(lin(x)), one.weight, one.bias, w, b, type(w).__name__,
                w.requires_grad, b.requires_grad, lw, lb, lw.requires_grad, lb.requires_grad)

    _same(*_both(run), atol=1e-6)


@pytest.mark.parametrize("case", ["train", "linear_features", "no_running_stats"])
def test_fusion_errors(case):
    def run(lib):
        nn = lib.nn
        if case == "train":
            lib.nn.utils.fuse_conv_bn_eval(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2).eval())
        elif case == "linear_features":
            lib.nn.utils.fuse_linear_bn_eval(nn.Linear(2, 4).eval(), nn.BatchNorm1d(3).eval())
        else:
            lib.nn.utils.fuse_conv_bn_eval(nn.Conv2d(2, 2, 1).eval(),
                                           nn.BatchNorm2d(2, track_running_stats=False).eval())

    t, g = _error(run)
    assert t == g


def test_skip_init_leaves_the_stream_untouched():
    def run(lib):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 4, bias=False, dtype=lib.float64)
        c = lib.nn.utils.skip_init(lib.nn.Conv2d, 2, 3, kernel_size=2, device="cpu")
        return (repr(m), m.weight.shape, m.weight.dtype, type(m.weight).__name__,
                m.weight.requires_grad, repr(c), lib.randn(3))

    _same(*_both(run))
    for case in ("not_module", "no_device"):
        t, g = _error(lambda lib: lib.nn.utils.skip_init(
            int if case == "not_module" else lib.nn.ReLU))
        assert t[0] == g[0] and (case == "not_module" or t == g)


def test_convert_conv_weight_memory_format():
    def run(lib):
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 2), lib.nn.Linear(2, 2),
                                lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)))
        weight = net[0].weight
        out = lib.nn.utils.convert_conv2d_weight_memory_format(net, lib.channels_last)
        c3 = lib.nn.Conv3d(2, 2, 2)
        lib.nn.utils.convert_conv3d_weight_memory_format(c3, lib.channels_last_3d)
        x = lib.randn(1, 3, 3, 3)
        return (out is net, net[0].weight is weight, net[0].weight.stride(),
                net[2][0].weight.stride(), net[1].weight.stride(), c3.weight.stride(),
                net[0].weight.is_contiguous(memory_format=lib.channels_last), net(x)[0])

    _same(*_both(run), atol=1e-6)
    t, g = _error(lambda lib: lib.nn.utils.convert_conv2d_weight_memory_format(
        lib.nn.Conv2d(1, 1, 1), lib.channels_last_3d))
    assert t[0] == g[0]


def test_stateless_functional_call_is_the_deprecated_spelling():
    def run(lib):
        lin = lib.nn.Linear(3, 2)
        w = lib.ones(2, 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = lib.nn.utils.stateless.functional_call(lin, {"weight": w}, (lib.ones(1, 3),))
        y.sum().backward()
        return (str(caught[0].message), caught[0].category.__name__, y, w.grad, lin.weight.grad,
                lin(lib.ones(1, 3)))

    _same(*_both(run), atol=1e-6)
    t, g = _error(lambda lib: lib.nn.utils.stateless.functional_call(
        lib.nn.Linear(3, 2), {"nope": lib.ones(1)}, (lib.ones(1, 3),), strict=True))
    assert t[0] == g[0]


def test_clip_grad_nonfinite_and_with_norm():
    def run(lib):
        p, q = lib.nn.Parameter(lib.ones(3)), lib.nn.Parameter(lib.ones(2))
        p.grad = lib.tensor([1.0, float("nan"), 2.0])
        q.grad = lib.tensor([3.0, 4.0])
        total = lib.nn.utils.clip_grad_norm_([p, q], 1.0)
        r = lib.nn.Parameter(lib.ones(2))
        r.grad = lib.tensor([3.0, 4.0])
        norm = lib.nn.utils.get_total_norm([r.grad], norm_type=1.0)
        lib.nn.utils.clip_grads_with_norm_([r], 2.0, norm, foreach=False)
        s = lib.nn.Parameter(lib.ones(2))
        s.grad = lib.tensor([-3.0, 0.25])
        lib.nn.utils.clip_grad_value_(s, 0.5, foreach=True)
        return total, p.grad, q.grad, norm, r.grad, s.grad, lib.nn.utils.get_total_norm([])

    _same(*_both(run), atol=1e-6)
    t, g = _error(lambda lib: lib.nn.utils.get_total_norm(
        [lib.tensor([float("inf")])], error_if_nonfinite=True))
    assert t == g


def test_packed_sequence_pin_memory_keeps_the_layout():
    seqs = [glassgrad.ones(3), glassgrad.ones(2)]
    packed = glassgrad.nn.utils.rnn.pack_sequence(seqs)
    pinned = packed.pin_memory()
    assert isinstance(pinned, glassgrad.nn.utils.rnn.PackedSequence)
    assert pinned.batch_sizes.tolist() == packed.batch_sizes.tolist() == [2, 2, 1]
    assert pinned.data.tolist() == packed.data.tolist()
    # NOTE: torch on a machine without an accelerator raises instead; glassgrad's
    # Tensor.pin_memory is a CPU no-op, and the PackedSequence method follows it
    with pytest.raises(RuntimeError, match="Cannot access accelerator"):
        torch.nn.utils.rnn.pack_sequence([torch.ones(3), torch.ones(2)]).pin_memory()
