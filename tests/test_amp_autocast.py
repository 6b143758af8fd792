"""``autocast`` against torch 2.13's CPU autocast: the output dtype (and value) of every op the
policy names, for bfloat16 and float16, with float32, lower-precision and float64 inputs; float32
gradients of float32 leaves; the context manager, decorator, nesting, thread-locality, cache,
warnings and ``custom_fwd``/``custom_bwd``; ``cuda.amp``'s deprecation shims."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, to_np

R = np.random.default_rng(0)


def _u(*shape, lo=0.1, hi=1.0):
    return R.uniform(lo, hi, shape)


CLS = np.array([0, 2, 1])
SIGN = np.array([1.0, -1.0, 1.0], dtype=np.float32)

# (id, fn(lib, F, *tensors), float inputs, kind) where kind is what torch's CPU policy does:
# "lower" (float16/bfloat16), "fp32", "same" (no autocast: the input dtype), "promote".
OPS = [
    ("matmul", lambda lib, F, a, b: lib.matmul(a, b), [_u(3, 4), _u(4, 5)], "lower"),
    ("matmul-@-1d", lambda lib, F, a, b: a @ b, [_u(3, 4), _u(4)], "lower"),
    ("mm", lambda lib, F, a, b: lib.mm(a, b), [_u(3, 4), _u(4, 5)], "lower"),
    ("bmm", lambda lib, F, a, b: lib.bmm(a, b), [_u(2, 3, 4), _u(2, 4, 5)], "lower"),
    ("addmm", lambda lib, F, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2.0),
     [_u(3, 5), _u(3, 4), _u(4, 5)], "lower"),
    ("baddbmm", lambda lib, F, c, a, b: lib.baddbmm(c, a, b),
     [_u(2, 3, 5), _u(2, 3, 4), _u(2, 4, 5)], "lower"),
    ("einsum", lambda lib, F, a, b: lib.einsum("bij,bjk->bik", a, b),
     [_u(2, 3, 4), _u(2, 4, 5)], "lower"),
    ("linear", lambda lib, F, x, w, b: F.linear(x, w, b), [_u(3, 4), _u(5, 4), _u(5)], "lower"),
    ("conv1d", lambda lib, F, x, w, b: F.conv1d(x, w, b, padding=1),
     [_u(2, 2, 5), _u(3, 2, 3), _u(3)], "lower"),
    ("conv2d", lambda lib, F, x, w, b: F.conv2d(x, w, b, stride=2),
     [_u(2, 2, 5, 5), _u(3, 2, 3, 3), _u(3)], "lower"),
    ("conv3d", lambda lib, F, x, w: F.conv3d(x, w), [_u(1, 2, 4, 4, 4), _u(3, 2, 2, 2, 2)],
     "lower"),
    ("conv_transpose1d", lambda lib, F, x, w, b: F.conv_transpose1d(x, w, b, stride=2),
     [_u(1, 2, 5), _u(2, 3, 2), _u(3)], "lower"),
    ("conv_transpose2d", lambda lib, F, x, w: F.conv_transpose2d(x, w),
     [_u(1, 2, 4, 4), _u(2, 3, 2, 2)], "lower"),
    ("conv_transpose3d", lambda lib, F, x, w: F.conv_transpose3d(x, w),
     [_u(1, 2, 3, 3, 3), _u(2, 3, 2, 2, 2)], "lower"),
    ("prelu", lambda lib, F, x, w: F.prelu(x, w), [_u(2, 3, lo=-1), _u(3)], "lower"),
    ("mse_loss", lambda lib, F, x, y: F.mse_loss(x, y), [_u(3, 4), _u(3, 4)], "fp32"),
    ("l1_loss", lambda lib, F, x, y: F.l1_loss(x, y), [_u(3, 4), _u(3, 4)], "fp32"),
    ("smooth_l1_loss", lambda lib, F, x, y: F.smooth_l1_loss(x, y, beta=0.1),
     [_u(3, 4), _u(3, 4)], "fp32"),
    ("huber_loss", lambda lib, F, x, y: F.huber_loss(x, y, delta=0.1), [_u(3, 4), _u(3, 4)],
     "fp32"),
    ("nll_loss", lambda lib, F, x: F.nll_loss(x, lib.tensor(CLS)), [_u(3, 4, lo=-2, hi=0)],
     "fp32"),
    ("cross_entropy", lambda lib, F, x: F.cross_entropy(x, lib.tensor(CLS)), [_u(3, 4, lo=-2)],
     "fp32"),
    ("binary_cross_entropy", lambda lib, F, x, y: F.binary_cross_entropy(x, y),
     [_u(3, 4, hi=0.9), _u(3, 4, lo=0, hi=1)], "fp32"),
    ("bce_with_logits", lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y),
     [_u(3, 4, lo=-2), _u(3, 4, lo=0, hi=1)], "fp32"),
    ("kl_div", lambda lib, F, x, y: F.kl_div(x, y, reduction="batchmean"),
     [_u(3, 4, lo=-2, hi=0), _u(3, 4)], "fp32"),
    ("poisson_nll_loss", lambda lib, F, x, y: F.poisson_nll_loss(x, y), [_u(3, 4), _u(3, 4)],
     "fp32"),
    ("soft_margin_loss", lambda lib, F, x: F.soft_margin_loss(x, lib.tensor(SIGN)),
     [_u(3, lo=-1)], "fp32"),
    ("margin_ranking_loss",
     lambda lib, F, a, b: F.margin_ranking_loss(a, b, lib.tensor(SIGN), margin=0.1),
     [_u(3), _u(3)], "fp32"),
    ("hinge_embedding_loss", lambda lib, F, x: F.hinge_embedding_loss(x, lib.tensor(SIGN)),
     [_u(3)], "fp32"),
    ("prod", lambda lib, F, x: lib.prod(x, 1), [_u(3, 4, lo=0.5, hi=1.5)], "fp32"),
    ("trace", lambda lib, F, x: lib.trace(x), [_u(3, 3)], "fp32"),
    ("pad-reflect", lambda lib, F, x: F.pad(x, (1, 2), mode="reflect"), [_u(1, 2, 4)], "fp32"),
    ("pad-replicate", lambda lib, F, x: F.pad(x, (1, 1, 2, 0), mode="replicate"),
     [_u(1, 2, 3, 3)], "fp32"),
    ("pad-circular", lambda lib, F, x: F.pad(x, (1, 1), mode="circular"), [_u(1, 2, 4)], "same"),
    ("softmax", lambda lib, F, x: lib.softmax(x, 1), [_u(3, 4)], "same"),
    ("log_softmax", lambda lib, F, x: F.log_softmax(x, 1), [_u(3, 4)], "same"),
    ("logsumexp", lambda lib, F, x: lib.logsumexp(x, 1), [_u(3, 4)], "same"),
    ("layer_norm", lambda lib, F, x: F.layer_norm(x, (4,)), [_u(3, 4)], "same"),
    ("group_norm", lambda lib, F, x: F.group_norm(x, 2), [_u(3, 4, 2)], "same"),
    ("norm", lambda lib, F, x: lib.norm(x), [_u(3, 4)], "same"),
    ("sum", lambda lib, F, x: lib.sum(x, 0), [_u(3, 4)], "same"),
    ("cumsum", lambda lib, F, x: lib.cumsum(x, 1), [_u(3, 4)], "same"),
    ("exp", lambda lib, F, x: lib.exp(x), [_u(3, 4)], "same"),
    ("log", lambda lib, F, x: lib.log(x), [_u(3, 4)], "same"),
    ("pow", lambda lib, F, x: lib.pow(x, 2), [_u(3, 4)], "same"),
    ("pow-dunder", lambda lib, F, x: x ** 3, [_u(3, 4)], "same"),
    ("mean", lambda lib, F, x: x.mean(), [_u(3, 4)], "same"),
    ("relu", lambda lib, F, x: F.relu(x), [_u(3, 4, lo=-1)], "same"),
    ("mv", lambda lib, F, a, b: lib.mv(a, b), [_u(3, 4), _u(4)], "same"),
    ("dot", lambda lib, F, a, b: lib.dot(a, b), [_u(4), _u(4)], "same"),
    ("add", lambda lib, F, a, b: a + b, [_u(3, 4), _u(3, 4)], "same"),
    ("cat", lambda lib, F, a, b: lib.cat([a, b]), [_u(3, 4), _u(2, 4)], "promote"),
    ("stack", lambda lib, F, a, b: lib.stack([a, b]), [_u(3, 4), _u(3, 4)], "promote"),
]
# the ops whose inputs must share one dtype outside autocast (both libraries raise on a mix)
SAME_DTYPE = {"mv", "dot"}
FAST = ["bfloat16", "float16"]


def _inputs(lib, arrays, variant, fast):
    dts = {"f32": ["float32"] * len(arrays), "f64": ["float64"] * len(arrays),
           "low": [fast] + ["float32"] * (len(arrays) - 1), "all-low": [fast] * len(arrays)}
    out = []
    for a, d in zip(arrays, dts[variant]):
        t = lib.tensor(a.astype(np.float32)).to(getattr(lib, d))
        out.append(t.detach().requires_grad_(True))
    return out


def _run(lib, entry, variant, fast):
    _, fn, arrays, _ = entry
    xs = _inputs(lib, arrays, variant, fast)
    with lib.autocast("cpu", dtype=getattr(lib, fast)):
        out = fn(lib, lib.nn.functional, *xs)
    cotangent = np.random.default_rng(1).uniform(0.5, 1.5, tuple(out.shape)).astype(np.float32)
    (out.float() * lib.tensor(cotangent)).sum().backward()
    return out, xs


@pytest.mark.parametrize("fast", FAST)
@pytest.mark.parametrize("variant", ["f32", "low", "all-low", "f64"])
@pytest.mark.parametrize("entry", OPS, ids=[e[0] for e in OPS])
def test_op_dtype_value_and_grads_match_torch(entry, variant, fast):
    name, _, arrays, kind = entry
    if variant == "low" and (name in SAME_DTYPE or len(arrays) == 1):
        pytest.skip("one input or a same-dtype op: 'all-low' covers it")
    theirs, their_xs = _run(torch, entry, variant, fast)
    ours, our_xs = _run(glassgrad, entry, variant, fast)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (
        f"{name} ({variant}, autocast {fast}): glassgrad {ours.dtype}, torch {theirs.dtype}")
    low = any(str(d).endswith(("float16", "bfloat16")) for d in (ours.dtype, *[
        x.dtype for x in our_xs])) or kind == "lower"
    tol = 3e-2 if low else 1e-5
    assert_close(ours, theirs, atol=tol, rtol=tol, what=f"{name} value")
    for i, (a, b) in enumerate(zip(our_xs, their_xs)):
        assert str(a.grad.dtype).split(".")[-1] == str(b.grad.dtype).split(".")[-1], (
            f"{name}: grad {i} dtype {a.grad.dtype} vs torch {b.grad.dtype}")
        assert_close(a.grad, b.grad, atol=tol * 4, rtol=tol * 4, what=f"{name} grad {i}")


def test_lower_ops_error_like_torch_on_a_float64_operand():
    """float64 is never cast: a float64 operand next to a lowered float32 one is a dtype error."""
    a64, b32 = R.standard_normal((3, 4)), R.standard_normal((4, 2)).astype(np.float32)
    with torch.autocast("cpu"), pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(torch.tensor(a64), torch.tensor(b32))
    with glassgrad.autocast("cpu"), pytest.raises(RuntimeError, match="same dtype"):
        glassgrad.mm(glassgrad.tensor(a64), glassgrad.tensor(b32))


def _mlp(lib, seed=0):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def _copy(src, dst):
    for p, q in zip(src.parameters(), dst.parameters()):
        with torch.no_grad():
            p.copy_(torch.from_numpy(q.detach().numpy().copy()))


@pytest.mark.parametrize("fast", FAST)
def test_module_forward_backward_keeps_float32_parameters_and_gradients(fast):
    ours, theirs = _mlp(glassgrad), _mlp(torch)
    _copy(theirs, ours)
    x = R.standard_normal((5, 6)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0])
    results = []
    for lib, model in ((glassgrad, ours), (torch, theirs)):
        with lib.autocast("cpu", dtype=getattr(lib, fast)):
            logits = model(lib.tensor(x))
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y))
        loss.backward()
        results.append((logits, loss, [p.grad for p in model.parameters()]))
    (lo, lso, go), (lt, lst, gt) = results
    assert str(lo.dtype) == f"glassgrad.{fast}" and str(lt.dtype) == f"torch.{fast}"
    assert lso.dtype == glassgrad.float32 and lst.dtype == torch.float32
    assert_close(lso, lst, atol=1e-2, rtol=1e-2, what="loss")
    for p, a, b in zip(ours.parameters(), go, gt):
        assert p.dtype == a.dtype == glassgrad.float32 and b.dtype == torch.float32
        assert_close(a, b, atol=2e-2, rtol=2e-2, what="grad")


def test_state_nesting_decorator_and_queries_match_torch():
    def probe(lib):
        seen = [lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu"))]
        with lib.autocast("cpu"):
            seen += [lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled()]
            with lib.autocast("cpu", enabled=False):
                seen += [lib.is_autocast_enabled("cpu"), str(lib.mm(lib.ones(2, 2),
                                                                 lib.ones(2, 2)).dtype)]
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                seen += [str(lib.get_autocast_dtype("cpu")), str(lib.mm(lib.ones(2, 2),
                                                                         lib.ones(2, 2)).dtype)]
            seen += [str(lib.get_autocast_dtype("cpu")), lib.is_autocast_cache_enabled()]

        @lib.autocast("cpu")
        def decorated(a):
            return lib.is_autocast_enabled("cpu"), str((a @ a).dtype).split(".")[-1]

        seen += [decorated(lib.ones(2, 2)), lib.is_autocast_enabled("cpu")]
        return [s.split(".")[-1] if isinstance(s, str) else s for s in seen]

    assert probe(glassgrad) == probe(torch)


def test_state_is_thread_local():
    seen = {}

    def worker():
        seen["enabled"] = glassgrad.is_autocast_enabled("cpu")
        seen["dtype"] = glassgrad.mm(glassgrad.ones(2, 2), glassgrad.ones(2, 2)).dtype

    with glassgrad.autocast("cpu"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": glassgrad.float32}


def _warning_text(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


def test_float64_target_dtype_warns_and_disables_like_torch():
    theirs = _warning_text(lambda: torch.autocast("cpu", dtype=torch.float64))
    ours = _warning_text(lambda: glassgrad.autocast("cpu", dtype=glassgrad.float64))
    assert theirs[0][0] is ours[0][0] is UserWarning
    key = "In CPU autocast, but the target dtype is not supported. Disabling autocast."
    assert theirs[0][1].startswith(key) and ours[0][1].startswith(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        region = glassgrad.autocast("cpu", dtype=glassgrad.float64)
    with region:
        assert not glassgrad.is_autocast_enabled("cpu")
        assert glassgrad.mm(glassgrad.ones(2, 2), glassgrad.ones(2, 2)).dtype == glassgrad.float32


def test_bad_device_types_raise_like_torch():
    for lib in (torch, glassgrad):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(1)
        with pytest.raises(TypeError, match="requires a callable"):
            lib.autocast("cpu")(3)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        glassgrad.autocast("tpu")


def test_cuda_autocast_warns_and_disables_like_torch():
    key = "CUDA is not available or torch_xla is imported. Disabling autocast."
    assert _warning_text(lambda: torch.autocast("cuda"))[0][1].startswith(key)
    assert _warning_text(lambda: glassgrad.autocast("cuda"))[0][1].startswith(key)


def test_cuda_amp_shims_warn_with_torch_text_and_run_on_the_cpu():
    for name in ("autocast", "GradScaler"):
        theirs = [m for c, m in _warning_text(lambda n=name: getattr(torch.cuda.amp, n)())
                  if c is FutureWarning]
        ours = [m for c, m in _warning_text(lambda n=name: getattr(glassgrad.cuda.amp, n)())
                if c is FutureWarning]
        assert ours and ours[0].startswith(theirs[0]), (ours, theirs)
    assert glassgrad.cuda.is_available() is False
    with pytest.warns(FutureWarning):
        ctx = glassgrad.cuda.amp.autocast()
    with ctx:
        assert glassgrad.is_autocast_enabled("cpu")
        assert glassgrad.mm(glassgrad.ones(2, 2), glassgrad.ones(2, 2)).dtype == glassgrad.float16
    with pytest.warns(FutureWarning):
        assert glassgrad.cuda.amp.GradScaler().is_enabled()


def test_weight_cast_is_cached_inside_a_region_like_torch():
    def probe(lib):
        w = lib.ones(3, 3, requires_grad=True)
        with lib.autocast("cpu"):
            a, b = w @ w, w @ w
            same = a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
        with lib.autocast("cpu"):
            c = w @ w
        return same, c.grad_fn.next_functions[0][0] is a.grad_fn.next_functions[0][0]

    assert probe(glassgrad) == probe(torch) == (True, False)


def test_cast_made_under_no_grad_does_not_leak_into_a_later_forward():
    """glassgrad keys its cache by grad mode; compare with torch's uncached result."""
    x = R.standard_normal((4, 3)).astype(np.float32)
    grads = []
    for lib, cache in ((glassgrad, True), (torch, False)):
        lin = _copy_linear(lib)
        with lib.autocast("cpu", cache_enabled=cache):
            with lib.no_grad():
                lin(lib.tensor(x))
            out = lin(lib.tensor(x))
        out.float().sum().backward()
        grads.append(lin.weight.grad)
    assert grads[0] is not None
    assert_close(grads[0], grads[1], atol=1e-2, rtol=1e-2)


def _copy_linear(lib):
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 10))
        lin.bias.fill_(0.5)
    return lin


def _custom_function(lib, cast_inputs):
    class Square(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            ctx.seen = (str(x.dtype), lib.is_autocast_enabled("cpu"))
            return (x @ w) * 2

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            ctx.seen_bwd = lib.is_autocast_enabled("cpu")
            return (grad @ w.t()) * 2, (x.t() @ grad) * 2

    return Square


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_and_custom_bwd_match_torch(cast_inputs):
    x = R.standard_normal((3, 4)).astype(np.float32)
    w = R.standard_normal((4, 2)).astype(np.float32)
    seen = []
    for lib in (glassgrad, torch):
        fn = _custom_function(lib, None if cast_inputs is None else getattr(lib, cast_inputs))
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        with lib.autocast("cpu"):
            out = fn.apply(xt, wt)
        out.float().sum().backward()
        node = out.grad_fn
        seen.append((node.seen[0].split(".")[-1], node.seen[1], node.seen_bwd,
                     str(out.dtype).split(".")[-1], to_np(xt.grad).round(1).tolist()))
    assert seen[0] == seen[1]


def test_custom_fwd_requires_a_device_type_string():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        glassgrad.amp.custom_fwd(lambda ctx: None, device_type=0)
