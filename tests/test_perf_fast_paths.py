"""The fast paths of the performance work (issue 7) against torch and against the slow paths they
replace: the fused ops' array backward rules (``backward_np``), skipped all-zero gradients in
WGAN-GP's double backward, the GEMM layouts NumPy would run without BLAS, Adam's multi-tensor
update and batch norm's running statistics updated on arrays."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops import fused
from glassgrad.optim import adam as adam_module


def _leaf(lib, arr):
    return lib.tensor(arr, requires_grad=True)


def _penalty_grads(lib, x, w1, b1, w2, b2, slope):
    """WGAN-GP's pattern on one hidden layer: the input gradient (``create_graph``), its squared
    norm backpropagated; returns every leaf's ``.grad`` (None where torch gives none)."""
    leaves = [_leaf(lib, a) for a in (x, w1, b1, w2, b2)]
    xs, w1s, b1s, w2s, b2s = leaves
    h = lib.nn.functional.leaky_relu(lib.nn.functional.linear(xs, w1s, b1s), slope)
    out = lib.nn.functional.linear(h, w2s, b2s)
    (g,) = lib.autograd.grad(out, xs, lib.ones_like(out), create_graph=True)
    ((g.norm(2, dim=1) - 1) ** 2).mean().backward()
    return [t.grad for t in leaves]


@pytest.mark.parametrize("slope", [0.2, 1.0, -0.5, 1.5])
def test_double_backward_through_linear_and_leaky_relu_matches_torch(slope, rng):
    """The all-zero gradient of leaky_relu's backward in its input still reaches the leaves as
    zeros (``x`` and ``b1`` get only that one here), as torch's ``zeros_like``."""
    x, w1, b1 = rng.standard_normal((6, 5)), rng.standard_normal((7, 5)), rng.standard_normal(7)
    w2, b2 = rng.standard_normal((1, 7)), rng.standard_normal(1)
    ours = _penalty_grads(glassgrad, x, w1, b1, w2, b2, slope)
    theirs = _penalty_grads(torch, x, w1, b1, w2, b2, slope)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    assert not ours[0].numpy().any() and not ours[2].numpy().any()  # the zero-only paths


def test_leaky_relu_second_derivative_of_a_leaf_is_zeros_not_none():
    for lib in (glassgrad, torch):
        x = lib.tensor([-1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.leaky_relu(x, 0.1).sum(), x, create_graph=True)
        (g * g).sum().backward()
        assert x.grad is not None and x.grad.tolist() == [0.0, 0.0, 0.0]


def test_zero_gradient_times_a_non_finite_weight_is_still_nan():
    """The skipped product is computed when the other operand holds an inf: ``0 * inf`` is NaN."""
    res = []
    for lib in (glassgrad, torch):
        x = lib.tensor([[1.0, -2.0]], dtype=lib.float64, requires_grad=True)
        w0 = lib.tensor([[1.0, float("inf")], [0.5, 0.3]], dtype=lib.float64, requires_grad=True)
        b0 = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        with np.errstate(invalid="ignore"):
            h = lib.nn.functional.leaky_relu(lib.nn.functional.linear(x, w0, b0), 0.2)
            out = lib.nn.functional.linear(h, lib.tensor([[1.0, 2.0]], dtype=lib.float64)).sum()
            (g,) = lib.autograd.grad(out, b0, create_graph=True)
            (g ** 2).sum().backward()
        res.append([t.grad.numpy() for t in (x, w0, b0)])
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)  # NaN where torch has NaN
    assert np.isnan(res[0][0]).any()


@pytest.mark.parametrize("n_in, n_out", [(1, 5), (5, 1), (1, 1), (4, 6)])
@pytest.mark.parametrize("reduce", ["mean", "sum_sq"])
def test_linear_first_order_backward_matches_torch(n_in, n_out, reduce, rng):
    """Inner dims of 1 (outer products) and the broadcast gradient of ``mean`` (zero strides)."""
    x, w, b = rng.standard_normal((8, n_in)), rng.standard_normal((n_out, n_in)), rng.standard_normal(n_out)
    res = []
    for lib in (glassgrad, torch):
        leaves = [_leaf(lib, a) for a in (x, w, b)]
        out = lib.nn.functional.linear(*leaves)
        (out.mean() if reduce == "mean" else (out ** 2).sum()).backward()
        res.append([out] + [t.grad for t in leaves])
    for a, b in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_gemm_fast_paths_give_matmuls_values(rng):
    a, b = rng.standard_normal((7, 1)).astype(np.float32), rng.standard_normal((1, 9)).astype(np.float32)
    np.testing.assert_array_equal(fused._gemm(np, a, b), np.matmul(a, b))  # one rounding each
    g = np.broadcast_to(np.float32(0.25), (6, 4))  # mean's gradient: zero strides
    y = rng.standard_normal((6, 3)).astype(np.float32)
    np.testing.assert_allclose(fused._gemm(np, g.T, y), np.matmul(np.ascontiguousarray(g.T), y),
                               rtol=1e-6)
    h = np.float16(rng.standard_normal((3, 4)))
    assert fused._gemm(np, h, h.T).dtype == np.float16


@pytest.mark.parametrize("m, k, n", [(64, 256, 256), (16, 512, 512), (128, 784, 256),
                                     (64, 128, 256)])
@pytest.mark.parametrize("avx512", [True, False])
def test_gemm_with_a_transposed_weight_keeps_values_and_c_order(m, k, n, avx512, rng,
                                                                 monkeypatch):
    # NOTE [GEMM shapes]: whichever way x @ W.T is computed (the rewrite is on for OpenBLAS's
    # AVX-512 kernels only), the numbers are matmul's up to rounding and the result is
    # C-ordered, as torch's (stride() and view() depend on it)
    monkeypatch.setattr(fused, "_AVX512_KERNELS", [avx512])
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    out = fused._gemm(np, x, w.T)
    assert out.flags.c_contiguous and out.shape == (m, n) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.matmul(x.astype(np.float64), w.T.astype(np.float64)),
                               rtol=1e-4, atol=1e-4)


def test_openblas_kernel_family_follows_openblas_coretype(monkeypatch):
    # NOTE [GEMM shapes]: the loaded library decides (threadpoolctl); without threadpoolctl a
    # named core does, and unset, the CPU's AVX-512 (OpenBLAS's rule)
    from numpy._core._multiarray_umath import __cpu_features__
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    assert fused._openblas_avx512_kernels() is bool(
        blas and blas[0].get("internal_api") == "openblas"
        and blas[0].get("architecture", "").lower() in ("skylakex", "cooperlake", "sapphirerapids"))
    for core, expected in [("Zen", False), ("haswell", False), ("SkylakeX", True),
                           ("COOPERLAKE", True), ("", bool(__cpu_features__.get("AVX512F")))]:
        monkeypatch.setenv("OPENBLAS_CORETYPE", core)
        assert fused._avx512_by_environment() is expected, core


def test_array_rules_equal_the_tensor_rules(rng):
    """``backward_np`` and the Tensor ``backward`` of each fused op give the same arrays; the
    wrapped-Tensor fallback (for vmap's duck arrays) too."""
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    g = rng.standard_normal((5, 4))
    needs = (True, True, True)
    by_arrays = fused.Linear.backward_np(g, x, w, needs)
    by_tensors = fused._tensor_rule(fused.Linear, g, (x, w), {"needs_input_grad": needs})
    for a, b in zip(by_arrays, by_tensors):
        np.testing.assert_array_equal(a, b)
    zero = fused.Linear.backward_np(np.zeros_like(g), x, w, needs)
    assert [z.shape for z in zero] == [x.shape, w.shape, (4,)] and not any(z.any() for z in zero)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))  # a @ b.T, a.T @ b
    for cls, b_, grad in ((fused.MatMulNT, b, g), (fused.MatMulTN, rng.standard_normal((5, 2)),
                                                   rng.standard_normal((3, 2)))):
        by_arrays = cls.backward_np(grad, a, b_, (True, True))
        by_tensors = fused._tensor_rule(cls, grad, (a, b_), {"needs_input_grad": (True, True)})
        for p, q in zip(by_arrays, by_tensors):
            np.testing.assert_array_equal(p, q)


@pytest.mark.parametrize("loss", ["bce", "mse", "ce"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fused_losses_first_order_match_torch(loss, reduction, rng):
    x = rng.standard_normal((6, 3))
    t = rng.uniform(0, 1, (6, 3)) if loss != "ce" else rng.integers(0, 3, 6)
    res = []
    for lib in (glassgrad, torch):
        xs = _leaf(lib, x)
        F = lib.nn.functional
        fn = {"bce": F.binary_cross_entropy_with_logits, "mse": F.mse_loss,
              "ce": F.cross_entropy}[loss]
        out = fn(xs, lib.tensor(t), reduction=reduction)
        (out.sum() if reduction == "none" else out).backward()
        res.append((out, xs.grad))
    for a, b in zip(*res):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


# --- Adam ---------------------------------------------------------------------------------------
_SHAPES = [(3, 4), (4,), (), (40,), (5, 2)]


def _adam_run(lib, dtype, kwargs, skip=(2, 1)):
    rng = np.random.default_rng(3)
    params = [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in _SHAPES]
    opt = lib.optim.Adam(params, lr=0.05, **kwargs)
    for it in range(5):
        grads = [rng.standard_normal(s).astype(dtype) for s in _SHAPES]
        for k, (p, g) in enumerate(zip(params, grads)):
            p.grad = None if (it, k) == skip else lib.tensor(g)  # a parameter falls one step behind
        opt.step()
    return params, opt


_ADAM_KWARGS = [{}, {"weight_decay": 0.1}, {"weight_decay": 0.1, "decoupled_weight_decay": True},
                {"maximize": True}, {"amsgrad": True}, {"betas": (0.7, 0.9)}]


@pytest.mark.parametrize("kwargs", _ADAM_KWARGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_adam_multi_tensor_update_is_the_per_parameter_update_bit_for_bit(kwargs, dtype,
                                                                           monkeypatch):
    runs = []
    for flat_max in (0, 1 << 30):  # 0: every parameter alone; else all that qualify together
        monkeypatch.setattr(adam_module, "_FLAT_MAX", flat_max)
        runs.append(_adam_run(glassgrad, dtype, kwargs))
    (p0, o0), (p1, o1) = runs
    with np.errstate(all="ignore"):
        for a, b in zip(p0, p1):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
            assert a._version == b._version
            for key, value in o0.state[a].items():
                np.testing.assert_array_equal(value.numpy(), o1.state[b][key].numpy())
                assert value._version == o1.state[b][key]._version


@pytest.mark.parametrize("kwargs", _ADAM_KWARGS)
def test_adam_trajectory_matches_torch(kwargs):
    ours, _ = _adam_run(glassgrad, np.float64, kwargs)
    theirs, _ = _adam_run(torch, np.float64, kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-13)


# --- batch norm's running statistics ------------------------------------------------------------
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_running_statistics_match_torch(momentum, dtype, rng):
    xs = [rng.standard_normal((8, 4)) * (k + 1) for k in range(3)]
    res = []
    for lib in (glassgrad, torch):
        bn = lib.nn.BatchNorm1d(4, momentum=momentum).to(getattr(lib, dtype))
        for x in xs:
            bn(lib.tensor(x, dtype=getattr(lib, dtype)))
        res.append((bn.running_mean, bn.running_var, bn.num_batches_tracked))
        assert bn.running_mean._version == bn.running_var._version
    for a, b in zip(*res):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6 if dtype == "float32" else 1e-13)
    assert res[0][0]._version == res[1][0]._version  # updated in place, as torch's kernel


def test_batch_norm_inference_buffers_still_raise_outside_inference_mode():
    for lib in (glassgrad, torch):
        with lib.inference_mode():
            bn = lib.nn.BatchNorm1d(3)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
            bn(lib.ones(4, 3))
