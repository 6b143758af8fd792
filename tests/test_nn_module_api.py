"""The rest of the Module API against torch: set_submodule and the lookup errors, state-dict and
load-state-dict hooks, the process-wide module hooks (forward, backward, registration),
to_empty, to(copy=...), compile, Sequential arithmetic, ParameterDict's dict methods. Each test
runs the same code on both libraries and compares what the hooks saw and what came out."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def _norm(s: str) -> str:
    return s.replace("torch.", "glassgrad.")


def _raises(fn):
    out = []
    for lib in (glassgrad, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value), _norm(str(info.value))))
    return out


def _net(lib):
    net = lib.nn.Sequential()
    net.add_module("block", lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU()))
    net.add_module("head", lib.nn.Linear(3, 1))
    net.block[0].register_buffer("scale", lib.ones(3))
    return net


def test_set_submodule_and_lookup_errors():
    def run(lib):
        net = _net(lib)
        net.set_submodule("block.1", lib.nn.Tanh())
        net.set_submodule("extra", lib.nn.Identity())
        net.set_submodule("block.0", lib.nn.Linear(2, 3), strict=True)
        return net

    g, t = run(glassgrad), run(torch)
    assert _norm(repr(g)) == repr(t) and list(g.state_dict()) == list(t.state_dict())
    cases = [
        lambda lib: _net(lib).set_submodule("", lib.nn.ReLU()),
        lambda lib: _net(lib).set_submodule("head", 3),
        lambda lib: _net(lib).set_submodule("nope.x", lib.nn.ReLU()),
        lambda lib: _net(lib).set_submodule("block.new", lib.nn.ReLU(), strict=True),
        lambda lib: _net(lib).set_submodule("training", lib.nn.ReLU()),
        lambda lib: _net(lib).get_submodule("block.0.weight"),
        lambda lib: _net(lib).get_submodule("block.x"),
        lambda lib: _net(lib).get_parameter("block.0.scale"),
        lambda lib: _net(lib).get_parameter("head.nope"),
        lambda lib: _net(lib).get_buffer("block.0.weight"),
        lambda lib: _net(lib).get_buffer("nope.scale"),
    ]
    for case in cases:
        ours, theirs = _raises(case)
        assert ours == theirs


def test_state_dict_hooks():
    def run(lib):
        seen = []
        net = _net(lib)
        net.block.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars: seen.append(("pre", prefix, keep_vars)))

        def post(m, sd, prefix, meta):
            seen.append(("post", prefix, sorted(sd), dict(meta)))
            sd[prefix + "added"] = lib.zeros(1)

        net.block.register_state_dict_post_hook(post)
        net.head._register_state_dict_hook(lambda m, sd, prefix, meta: {"only": lib.ones(1)})
        sd = net.state_dict(keep_vars=True)
        return seen, list(sd)

    assert run(glassgrad) == run(torch)
    ours, theirs = _raises(_bad_post)
    assert ours == theirs


def _bad_post(lib):
    m = lib.nn.Linear(1, 1)
    m.register_state_dict_post_hook(lambda m, sd, prefix, meta: {})
    return m.state_dict()


def test_state_dict_positional_form_warns():
    for lib in (glassgrad, torch):
        with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
            sd = lib.nn.Linear(1, 1).state_dict(None, "p.")
        assert list(sd) == ["p.weight", "p.bias"]


def test_load_state_dict_hooks():
    def run(lib):
        seen = []
        src = _net(lib)
        dst = _net(lib)

        def pre(m, sd, prefix, meta, strict, missing, unexpected, errors):
            seen.append(("pre", type(m).__name__, prefix, strict, sorted(k for k in sd
                                                                       if k.startswith(prefix))))
            sd.pop(prefix + "bias", None)  # a pre-hook may edit what is loaded

        def post(m, keys):
            seen.append(("post", type(m).__name__, sorted(keys.missing_keys)))
            keys.missing_keys.clear()  # and a post-hook may clear the complaint

        dst.head.register_load_state_dict_pre_hook(pre)
        dst.register_load_state_dict_post_hook(post)
        dst.block._register_load_state_dict_pre_hook(
            lambda sd, prefix, *rest: seen.append(("private", prefix)))
        dst.block._register_load_state_dict_pre_hook(
            lambda m, sd, prefix, *rest: seen.append(("with_module", type(m).__name__)),
            with_module=True)
        result = dst.load_state_dict(src.state_dict())
        return seen, repr(result)

    assert run(glassgrad) == run(torch)


def test_global_forward_hooks():
    mm = {glassgrad: glassgrad.nn.modules.module, torch: torch.nn.modules.module}

    def run(lib):
        seen = []
        net = _net(lib).double()
        handles = [
            mm[lib].register_module_forward_pre_hook(
                lambda m, args: seen.append(("pre", type(m).__name__))),
            mm[lib].register_module_forward_hook(
                lambda m, args, kwargs, out: seen.append(("post", type(m).__name__,
                                                          sorted(kwargs))),
                with_kwargs=True),
        ]
        x = lib.tensor(np.arange(4.0).reshape(2, 2))
        out = net(x)
        for h in handles:
            h.remove()
        net(x)
        return seen, out

    (g_seen, _), (t_seen, _) = run(glassgrad), run(torch)
    assert g_seen == t_seen
    assert not glassgrad.nn._module_hooks._global_hooks_on


def test_forward_hook_always_call():
    mm = {glassgrad: glassgrad.nn.modules.module, torch: torch.nn.modules.module}

    class Boom(Exception):
        pass

    def run(lib):
        seen = []

        class Bad(lib.nn.Module):
            def forward(self, x):
                raise Boom

        m = Bad()
        m.register_forward_hook(lambda *a: seen.append("local"), always_call=True)
        m.register_forward_hook(lambda *a: seen.append("skipped"))
        h = mm[lib].register_module_forward_hook(lambda *a: seen.append("global"),
                                                 always_call=True)
        with pytest.raises(Boom):
            m(lib.zeros(1))
        h.remove()
        return seen

    assert run(glassgrad) == run(torch)


def test_global_backward_hooks():
    mm = {glassgrad: glassgrad.nn.modules.module, torch: torch.nn.modules.module}

    def run(lib):
        seen = []
        net = _net(lib).double()

        def pre(m, grad_out):
            seen.append(("bpre", type(m).__name__))
            return tuple(g * 2 if g is not None else None for g in grad_out)

        def full(m, grad_in, grad_out):
            seen.append(("full", type(m).__name__, len(grad_in)))

        handles = [mm[lib].register_module_full_backward_pre_hook(pre),
                   mm[lib].register_module_full_backward_hook(full)]
        x = lib.tensor(np.arange(4.0).reshape(2, 2), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            net(x).sum().backward()
        for h in handles:
            h.remove()
        return seen, x.grad

    (g_seen, g_grad), (t_seen, t_grad) = run(glassgrad), run(torch)
    assert g_seen == t_seen and len(g_seen) > 4
    assert g_grad.shape == t_grad.shape


def test_global_backward_pre_hook_values():
    """A global backward pre-hook scaling grad_output changes the input gradient as in torch."""
    mm = {glassgrad: glassgrad.nn.modules.module, torch: torch.nn.modules.module}
    t_lin = torch.nn.Linear(2, 2).double()
    g_lin = glassgrad.nn.Linear(2, 2).double()
    copy_params(t_lin, g_lin)
    grads = []
    for lib, lin in ((glassgrad, g_lin), (torch, t_lin)):
        h = mm[lib].register_module_full_backward_pre_hook(
            lambda m, go: tuple(3 * g for g in go))
        x = lib.tensor(np.array([[1.0, -2.0]]), requires_grad=True)
        lin(x).sum().backward()
        h.remove()
        grads.append(x.grad)
    assert_close(grads[0], grads[1], atol=1e-12)


def test_global_registration_hooks():
    mm = {glassgrad: glassgrad.nn.modules.module, torch: torch.nn.modules.module}

    def run(lib):
        seen = []
        handles = [
            mm[lib].register_module_module_registration_hook(
                lambda m, name, sub: seen.append(("module", type(m).__name__, name))),
            mm[lib].register_module_parameter_registration_hook(
                lambda m, name, p: seen.append(("param", type(m).__name__, name))),
            mm[lib].register_module_buffer_registration_hook(
                lambda m, name, b: seen.append(("buffer", type(m).__name__, name))
                or (b * 0 if b is not None else None)),
        ]
        m = lib.nn.Module()
        m.lin = lib.nn.Linear(1, 1)
        m.register_buffer("buf", lib.ones(2))
        m.add_module("act", lib.nn.ReLU())
        for h in handles:
            h.remove()
        m.register_buffer("after", lib.ones(1))
        return seen, m.buf

    (g_seen, g_buf), (t_seen, t_buf) = run(glassgrad), run(torch)
    assert g_seen == t_seen
    assert_close(g_buf, t_buf, atol=0)


def test_to_empty_to_copy_and_compile():
    for lib in (glassgrad, torch):
        m = lib.nn.Linear(3, 2).double()
        w = m.weight
        assert m.to_empty(device="cpu") is m
        assert m.weight is w and tuple(m.weight.shape) == (2, 3)
        assert _norm(str(m.weight.dtype)) == "glassgrad.float64"
    for case in (lambda lib: lib.nn.Linear(1, 1).to(lib.float64, copy=True),
                 lambda lib: lib.nn.Linear(1, 1).to_empty("cpu")):
        ours, theirs = _raises(case)
        assert ours[0] == theirs[0]
        assert ours[1].split("(")[0].split(".")[-1] == theirs[1].split("(")[0].split(".")[-1]
    t_lin = torch.nn.Linear(2, 2).double()
    g_lin = glassgrad.nn.Linear(2, 2).double()
    copy_params(t_lin, g_lin)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert g_lin.compile() is None
        t_lin.compile(backend="eager")
    x = np.ones((1, 2))
    assert_close(g_lin(glassgrad.tensor(x)), t_lin(torch.tensor(x)), atol=1e-12)
    assert list(g_lin.state_dict()) == list(t_lin.state_dict())


def test_sequential_arithmetic():
    def run(lib):
        a = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())
        b = a * 2
        c = 2 * a
        d = lib.nn.Sequential(lib.nn.Sigmoid())
        alias = d
        d *= 3
        e = a + d
        e += a
        return [repr(s) for s in (a, b, c, d, e, e[1:4], e[::-2])], b[0] is b[2], alias is d

    assert _norm(str(run(glassgrad))) == str(run(torch))
    for bad in (0, -1, 1.5):
        for op in (lambda s, k: s * k, lambda s, k: k * s, lambda s, k: s.__imul__(k)):
            ours, theirs = _raises(lambda lib: op(lib.nn.Sequential(lib.nn.ReLU()), bad))
            assert ours[0] == theirs[0]
            assert ours[1].replace("glassgrad.nn.modules.container", "") == \
                theirs[1].replace("glassgrad.nn.modules.container", "")


def test_parameter_dict_dict_methods():
    def run(lib):
        p = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(1)), "b": lib.zeros(2)})
        q = lib.nn.ParameterDict({"c": lib.nn.Parameter(lib.ones(3))})
        out = [list(reversed(p)), list(p.copy()), list(p | q), list(q | p)]
        r = p.copy()
        r |= q
        out.append(list(r))
        out.append(p.setdefault("z", lib.nn.Parameter(lib.ones(1))).shape)
        k, v = p.popitem()
        out.append((k, tuple(v.shape), list(p)))
        out.append(list(p.fromkeys(["x", "y"])))
        return [_norm(str(o)) for o in out]

    assert run(glassgrad) == run(torch)
    ours, theirs = _raises(lambda lib: lib.nn.ParameterDict().popitem())
    assert ours == theirs


def test_backward_hook_errors_and_output_warning():
    def pre_count(lib):
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_pre_hook(lambda mod, go: go + (lib.ones(1),))
        m(lib.ones(1, 2, requires_grad=True)).sum().backward()

    def no_input_grad(lib):
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(1, 2),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(lib.ones(1, 2)).sum().backward()

    for case in (pre_count, no_input_grad):
        ours, theirs = _raises(case)
        assert ours == theirs
    for lib in (glassgrad, torch):
        class DictOut(lib.nn.Module):
            def forward(self, x):
                return {"y": x * 2}

        m = DictOut()
        seen = []
        m.register_full_backward_hook(lambda *a: seen.append(1))
        with pytest.warns(UserWarning, match="should be a Tensor or a tuple of Tensors"):
            m(lib.ones(2, requires_grad=True))["y"].sum().backward()
        assert seen == []


def test_hook_handle_removes_its_flags():
    for lib in (glassgrad, torch):
        m = lib.nn.Linear(1, 1)
        h1 = m.register_forward_pre_hook(lambda *a: None, with_kwargs=True)
        h2 = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
        assert len(h2.hooks_dict_ref()) == 1
        h1.remove()
        h2.remove()
        assert not m._forward_pre_hooks_with_kwargs and not m._forward_hooks_with_kwargs
        assert not m._forward_hooks_always_called


def test_non_full_backward_hooks():
    """register_backward_hook: on the output's grad_fn (Tanh's gradients match torch's), torch's
    FutureWarning where it misses gradients, and no mixing with full hooks."""

    def run(lib):
        seen = []
        t_lin = lib.nn.Linear(2, 3).double()
        m = lib.nn.Sequential(t_lin, lib.nn.Tanh())
        m[1].register_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
        m[0].register_backward_hook(lambda mod, gi, go: None)
        x = lib.tensor(np.linspace(-1, 1, 8).reshape(4, 2), requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(x).sum().backward()
        messages = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
        with pytest.raises(RuntimeError) as info:
            m[0].register_full_backward_hook(lambda *a: None)
        return seen, messages, str(info.value), m

    g_seen, g_msgs, g_err, _ = run(glassgrad)
    t_seen, t_msgs, t_err, _ = run(torch)
    assert g_msgs == t_msgs and len(t_msgs) == 1 and g_err == t_err
    # (the weights are fresh on each side: the shapes of what the hook saw are compared)
    assert [tuple(g.shape) for g in g_seen[0][0]] == [tuple(g.shape) for g in t_seen[0][0]]
    for case in (lambda lib: (lib.nn.modules.module.register_module_full_backward_hook(
                    lambda *a: None).remove(),
                  lib.nn.modules.module.register_module_backward_hook(lambda *a: None)),):
        ours, theirs = _raises(case)
        assert ours == theirs


def test_non_full_backward_hook_wrong_count():
    for ret in (lambda gi: gi[:-1], lambda gi: gi + (gi[0],)):
        def case(lib):
            m = lib.nn.Sigmoid()
            m.register_backward_hook(lambda mod, gi, go: ret(gi))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m(lib.ones(2, 2, requires_grad=True)).sum().backward()

        ours, theirs = _raises(case)
        assert ours[0] is theirs[0] is RuntimeError
        assert ours[1].split("(")[-1] == theirs[1].split("(")[-1]
