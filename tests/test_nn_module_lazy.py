"""Lazy modules, their placeholders, nn.Buffer, SyncBatchNorm, InstanceNorm3d, Container and
factory_kwargs against torch: the same calls on both libraries, compared (reprs, classes before
and after the first call, state_dict keys and reprs, shapes, outputs and gradients with copied
weights, errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def _norm(s: str) -> str:
    return s.replace("torch.", "glassgrad.")


def _both(fn):
    return fn(glassgrad), fn(torch)


def _raises(fn):
    """The exception type and message of ``fn(lib)`` on each library."""
    out = []
    for lib in (glassgrad, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value), str(info.value)))
    return out


LAZY = [
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (3,), {"bias": False}, (2, 4, 5)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"stride": 2, "groups": 2}, (2, 6, 7, 7)),
    ("LazyConv2d", (4, 3), {"padding_mode": "reflect", "padding": 1}, (3, 7, 7)),
    ("LazyConv3d", (2, 2), {"bias": False}, (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2}, (2, 4, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {"dilation": 2}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"affine": False, "momentum": None}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"bias": False}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {"track_running_stats": False}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False, "affine": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"track_running_stats": False}, (2, 3, 3, 3, 3)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),  # torch's defaults: running stats tracked
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY)])
def test_lazy_layer_matches_torch(name, args, kwargs, shape):
    g_mod, t_mod = _both(lambda lib: getattr(lib.nn, name)(*args, **kwargs).double())
    assert _norm(repr(g_mod)) == repr(t_mod)
    assert list(g_mod.state_dict()) == list(t_mod.state_dict())
    assert [repr(v) for v in g_mod.state_dict().values()] == \
        [_norm(repr(v)) for v in t_mod.state_dict().values()]
    assert g_mod.has_uninitialized_params() == t_mod.has_uninitialized_params()
    x = np.random.default_rng(0).standard_normal(shape)
    # the first call materializes; torch's fresh values are then copied over for the comparison
    g_out = g_mod(glassgrad.tensor(x))
    t_out = t_mod(torch.tensor(x))
    assert type(g_mod).__name__ == type(t_mod).__name__ == type(t_mod).__mro__[0].__name__
    assert type(g_mod) is getattr(glassgrad.nn, type(t_mod).__name__)
    assert _norm(repr(g_mod)) == repr(t_mod)
    assert g_out.shape == t_out.shape
    assert [(k, tuple(v.shape), str(v.dtype)) for k, v in g_mod.state_dict().items()] == \
        [(k, tuple(v.shape), _norm(str(v.dtype))) for k, v in t_mod.state_dict().items()]
    assert not g_mod._forward_pre_hooks and not g_mod._load_state_dict_pre_hooks
    copy_params(t_mod, g_mod)
    xg = glassgrad.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    g_out, t_out = g_mod(xg), t_mod(xt)
    assert_close(g_out, t_out, atol=1e-10, rtol=1e-8, what=name)
    cot = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
    g_out.backward(glassgrad.tensor(cot))
    t_out.backward(torch.tensor(cot))
    assert_close(xg.grad, xt.grad, atol=1e-10, rtol=1e-8, what=f"{name} grad_input")
    for (k, gp), (_, tp) in zip(g_mod.named_parameters(), t_mod.named_parameters()):
        assert_close(gp.grad, tp.grad, atol=1e-10, rtol=1e-8, what=f"{name} {k}.grad")
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        if getattr(t_mod, k, None) is not None:
            assert_close(getattr(g_mod, k), getattr(t_mod, k), atol=1e-12, what=k)


def test_lazy_default_init_follows_the_eager_rule():
    """The values the first call gives come from the eager layer's init (kaiming bounds)."""
    glassgrad.manual_seed(0)
    m = glassgrad.nn.LazyLinear(64)
    m(glassgrad.zeros(1, 16))
    bound = 1 / 16 ** 0.5
    w = m.weight.detach().numpy()
    assert w.shape == (64, 16) and np.abs(w).max() <= bound and np.abs(w).max() > bound * 0.8
    assert isinstance(m.weight, glassgrad.nn.Parameter)
    assert not isinstance(m.weight, glassgrad.nn.UninitializedParameter)


def test_lazy_dtype_conversion_before_first_call():
    g, t = _both(lambda lib: lib.nn.LazyConv1d(2, 1).to(lib.float64))
    g(glassgrad.zeros(1, 3, 4, dtype=glassgrad.float64))
    t(torch.zeros(1, 3, 4, dtype=torch.float64))
    assert _norm(str(g.weight.dtype)) == _norm(str(t.weight.dtype)) == "glassgrad.float64"


def test_load_state_dict_into_lazy_module():
    t_full = torch.nn.Sequential(torch.nn.LazyLinear(3), torch.nn.LazyBatchNorm1d())
    t_full(torch.randn(4, 5))
    sd_t = t_full.state_dict()
    sd_g = {k: glassgrad.tensor(v.numpy()) for k, v in sd_t.items()}
    g_lazy = glassgrad.nn.Sequential(glassgrad.nn.LazyLinear(3), glassgrad.nn.LazyBatchNorm1d())
    t_lazy = torch.nn.Sequential(torch.nn.LazyLinear(3), torch.nn.LazyBatchNorm1d())
    assert repr(g_lazy.load_state_dict(sd_g)) == repr(t_lazy.load_state_dict(sd_t))
    # materialized to the checkpoint's shapes with its values, but still lazy until called
    assert _norm(repr(g_lazy)) == repr(t_lazy)
    for k, v in t_lazy.state_dict().items():
        assert_close(g_lazy.state_dict()[k], v, atol=0, what=k)
    x = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    t_lazy.eval()
    g_lazy.eval()
    assert_close(g_lazy(glassgrad.tensor(x)), t_lazy(torch.tensor(x)), atol=1e-6)
    assert _norm(repr(g_lazy)) == repr(t_lazy)


def test_lazy_into_lazy_and_lazy_into_initialized():
    g_a, t_a = _both(lambda lib: lib.nn.LazyLinear(2))
    g_b, t_b = _both(lambda lib: lib.nn.LazyLinear(2))
    assert repr(g_b.load_state_dict(g_a.state_dict())) == \
        repr(t_b.load_state_dict(t_a.state_dict()))
    assert g_b.has_uninitialized_params() and t_b.has_uninitialized_params()
    ours, theirs = _raises(lambda lib: lib.nn.Linear(3, 2).load_state_dict(
        lib.nn.LazyLinear(2).state_dict()))
    assert ours == theirs


def test_uninitialized_placeholders():
    for cls in ("UninitializedParameter", "UninitializedBuffer"):
        g, t = _both(lambda lib: getattr(lib.nn, cls)())
        assert repr(g) == repr(t)
        assert g.requires_grad == t.requires_grad
        assert glassgrad.nn.parameter.is_lazy(g) and torch.nn.parameter.is_lazy(t)
        ours, theirs = _raises(lambda lib: getattr(lib.nn, cls)().shape)
        assert ours == theirs
        ours, theirs = _raises(lambda lib: getattr(lib.nn, cls)().share_memory_())
        assert ours == theirs
    for use in (lambda lib, p: lib.add(p, p), lambda lib, p: p * 2,
                lambda lib, p: lib.optim.Adagrad([p])):
        ours, theirs = _raises(lambda lib: use(lib, lib.nn.UninitializedParameter()))
        assert ours[0] is theirs[0] is ValueError
        assert ours[1].startswith("Attempted to use an uninitialized parameter in ")
    ours, theirs = _raises(lambda lib: lib.nn.LazyLinear(2).share_memory())
    assert ours == theirs
    g, t = _both(lambda lib: lib.nn.LazyLinear(2).double())
    assert _norm(repr(g.weight.dtype)) == _norm(repr(t.weight.dtype))
    with pytest.raises(ValueError, match="uninitialized parameter"):
        g.weight + 1  # still a guarded placeholder after the dtype change
    g, t = _both(lambda lib: lib.nn.UninitializedParameter(dtype=lib.float64))
    g.materialize((2, 3))
    t.materialize((2, 3))
    assert type(g) is glassgrad.nn.Parameter and type(t) is torch.nn.Parameter
    assert tuple(g.shape) == tuple(t.shape) and _norm(str(g.dtype)) == _norm(str(t.dtype))
    import copy

    assert repr(copy.deepcopy(glassgrad.nn.UninitializedParameter())) == \
        "<UninitializedParameter>"


def test_lazy_errors_match_torch():
    ours, theirs = _raises(lambda lib: lib.nn.LazyConv2d(4, 3)(lib.zeros(2, 5)))
    assert ours[0] == theirs[0] and _norm(ours[1]) == _norm(theirs[1])
    ours, theirs = _raises(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.zeros(1, 3, 5, 5)))
    assert ours == theirs

    class Half(glassgrad.nn.modules.lazy.LazyModuleMixin, glassgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = glassgrad.nn.UninitializedParameter()

        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="module Half has not been fully initialized"):
        Half()(glassgrad.zeros(1))


def test_buffer_assignment():
    def build(lib):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(3), persistent=False)
        m.c = lib.ones(1)  # a plain tensor stays a plain attribute
        m.a = lib.zeros(2)  # re-assigning a registered buffer keeps it a buffer
        return m

    g, t = _both(build)
    assert list(dict(g.named_buffers())) == list(dict(t.named_buffers()))
    assert list(g.state_dict()) == list(t.state_dict())
    assert_close(g.a, t.a, atol=0)
    b = glassgrad.nn.Buffer(glassgrad.ones(2, requires_grad=True))
    assert b.requires_grad and isinstance(b, glassgrad.Tensor) and b.persistent


def test_sync_batchnorm_is_batchnorm_on_one_process():
    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv1d(3, 3, 1), lib.nn.BatchNorm1d(3),
                                 lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False))).double()

    g, t = _both(build)
    copy_params(t, g)
    g = glassgrad.nn.SyncBatchNorm.convert_sync_batchnorm(g)
    t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(t)
    assert _norm(repr(g)) == repr(t) and list(g.state_dict()) == list(t.state_dict())
    x = np.random.default_rng(3).standard_normal((4, 3, 5))
    for train in (True, False):
        g.train(train)
        t.train(train)
        assert_close(g(glassgrad.tensor(x)), t(torch.tensor(x)), atol=1e-10, what=str(train))
    assert_close(g[1].running_var, t[1].running_var, atol=1e-12)
    for shape in ((4,), (2, 0, 3)):
        ours, theirs = _raises(lambda lib: lib.nn.SyncBatchNorm(3)(lib.zeros(*shape)))
        assert ours == theirs


def test_instance_norm_3d():
    g, t = _both(lambda lib: lib.nn.InstanceNorm3d(2, affine=True).double())
    assert _norm(repr(g)) == repr(t)
    copy_params(t, g)
    for shape in ((2, 2, 3, 3, 3), (2, 3, 3, 3)):
        x = np.random.default_rng(4).standard_normal(shape)
        assert_close(g(glassgrad.tensor(x)), t(torch.tensor(x)), atol=1e-10)
    ours, theirs = _raises(lambda lib: lib.nn.InstanceNorm3d(2)(lib.zeros(2, 3)))
    assert ours == theirs


def test_container_and_factory_kwargs():
    for lib in (glassgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = lib.nn.Container(fc=lib.nn.Linear(1, 1))
        assert any(issubclass(w.category, FutureWarning) and "nn.Container` is deprecated"
                   in str(w.message) for w in caught)
        assert list(c.state_dict()) == ["fc.weight", "fc.bias"]
    for kw in ({"dtype": 1, "device": "cpu", "factory_kwargs": {"memory_format": 2}}, None, {}):
        assert glassgrad.nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)
    for kw in ({"bad": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}):
        ours, theirs = _raises(lambda lib: lib.nn.factory_kwargs(kw))
        assert ours == theirs
