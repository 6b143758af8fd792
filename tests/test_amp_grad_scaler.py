"""``amp.GradScaler`` against torch 2.13's CPU GradScaler: scale traces and parameter trajectories
over 20 steps with injected inf/NaN, accumulation with ``unscale_`` + ``clip_grad_norm_``, the
errors, ``state_dict``, and glassgrad's ``history`` / ``last_step`` records."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close

# inf/NaN losses are injected on purpose: NumPy's "invalid value" warnings are expected
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
R = np.random.default_rng(0)
X = R.standard_normal((8, 4)).astype(np.float32)
Y = R.integers(0, 3, 8)


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 3))


def _pair():
    ours, theirs = _model(glassgrad), _model(torch)
    with torch.no_grad():
        for p, q in zip(theirs.parameters(), ours.parameters()):
            p.copy_(torch.from_numpy(q.detach().numpy().copy()))
    return ours, theirs


def _train(lib, model, steps=20, bad=(2, 9, 10), scaler_kw=None, opt="adam", amp=None,
           accumulate=1, clip=None):
    """The article's loop; ``bad`` steps get an inf (or NaN) loss. Returns the per-update
    (scale, growth tracker) trace and the scaler."""
    opt = (lib.optim.Adam(model.parameters(), lr=1e-2) if opt == "adam"
           else lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    scaler = lib.amp.GradScaler("cpu", **(scaler_kw or {}))
    trace = []
    x, y = lib.tensor(X), lib.tensor(Y)
    for i in range(steps * accumulate):
        step = i // accumulate
        part = slice((i % accumulate) * 8 // accumulate, (i % accumulate + 1) * 8 // accumulate)
        if amp:
            with lib.autocast("cpu", dtype=getattr(lib, amp)):
                loss = lib.nn.functional.cross_entropy(model(x[part]), y[part]) / accumulate
        else:
            loss = lib.nn.functional.cross_entropy(model(x[part]), y[part]) / accumulate
        if step in bad and i % accumulate == 0:
            loss = loss * (float("nan") if step == 10 else float("inf"))
        scaler.scale(loss).backward()
        if (i + 1) % accumulate == 0:
            if clip is not None:
                scaler.unscale_(opt)
                lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            trace.append((scaler.get_scale(), scaler._get_growth_tracker()))
    return trace, scaler


def _assert_params_close(ours, theirs, tol):
    for q, p in zip(ours.parameters(), theirs.parameters()):
        assert_close(q, p, atol=tol, rtol=tol)


@pytest.mark.parametrize("opt", ["adam", "sgd"])
def test_twenty_steps_with_infs_match_torch_scale_trace_and_parameters(opt):
    ours, theirs = _pair()
    kw = {"growth_interval": 2}
    trace_ours, scaler = _train(glassgrad, ours, scaler_kw=kw, opt=opt)
    trace_theirs, _ = _train(torch, theirs, scaler_kw=kw, opt=opt)
    assert trace_ours == trace_theirs
    assert [s for s, _ in trace_ours[:5]] == [65536.0, 131072.0, 65536.0, 65536.0, 131072.0]
    _assert_params_close(ours, theirs, 1e-5)
    skipped = [r.iteration for r in scaler.history if r.skipped]
    assert skipped == [2, 9, 10]


def test_odd_growth_and_backoff_factors_give_torchs_float32_scales():
    ours, theirs = _pair()
    kw = {"init_scale": 1000.0, "growth_factor": 3.3, "backoff_factor": 0.3, "growth_interval": 3}
    trace_ours, _ = _train(glassgrad, ours, steps=14, scaler_kw=kw)
    trace_theirs, _ = _train(torch, theirs, steps=14, scaler_kw=kw)
    assert trace_ours == trace_theirs


@pytest.mark.parametrize("amp", ["float16", "bfloat16"])
def test_autocast_training_with_the_scaler_follows_torch(amp):
    ours, theirs = _pair()
    trace_ours, _ = _train(glassgrad, ours, steps=6, bad=(3,), amp=amp,
                           scaler_kw={"growth_interval": 2})
    trace_theirs, _ = _train(torch, theirs, steps=6, bad=(3,), amp=amp,
                             scaler_kw={"growth_interval": 2})
    assert trace_ours == trace_theirs
    _assert_params_close(ours, theirs, 2e-2)
    assert all(p.dtype == glassgrad.float32 for p in ours.parameters())


def test_accumulation_with_unscale_and_clip_grad_norm_matches_torch():
    ours, theirs = _pair()
    kw = {"growth_interval": 3}
    trace_ours, _ = _train(glassgrad, ours, steps=10, bad=(4,), scaler_kw=kw, accumulate=4,
                           clip=0.5, opt="sgd")
    trace_theirs, _ = _train(torch, theirs, steps=10, bad=(4,), scaler_kw=kw, accumulate=4,
                             clip=0.5, opt="sgd")
    assert trace_ours == trace_theirs
    _assert_params_close(ours, theirs, 1e-5)


def _scaled_grads(lib, model, scaler, dtype=None):
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    if dtype is not None:
        model.to(dtype)
    out = model(lib.tensor(X).to(dtype or lib.float32)).float().sum()
    scaler.scale(out).backward()
    return opt


def _errors(lib):
    """The message of each misuse, in order."""
    msgs = []

    def catch(fn):
        try:
            fn()
            msgs.append(None)
        except (RuntimeError, ValueError, AssertionError) as e:
            msgs.append((type(e).__name__, str(e).split("\nglassgrad")[0]))

    scaler = lib.amp.GradScaler("cpu")
    opt = lib.optim.SGD(_model(lib).parameters(), lr=0.1)
    catch(lambda: scaler.unscale_(opt))  # before scale()
    catch(lambda: scaler.update())
    model = _model(lib)
    opt = _scaled_grads(lib, model, scaler)
    scaler.unscale_(opt)
    catch(lambda: scaler.unscale_(opt))
    catch(lambda: scaler.step(opt, closure=lambda: 0))
    scaler.step(opt)
    catch(lambda: scaler.step(opt))
    catch(lambda: scaler.unscale_(opt))
    scaler.update()
    catch(lambda: scaler.update())  # no inf checks recorded
    half = _model(lib)
    opt16 = _scaled_grads(lib, half, lib.amp.GradScaler("cpu"), lib.float16)
    catch(lambda: lib.amp.GradScaler("cpu").unscale_(opt16))
    s16 = lib.amp.GradScaler("cpu")
    opt16 = _scaled_grads(lib, _model(lib), s16, lib.float16)
    catch(lambda: s16.step(opt16))
    catch(lambda: scaler.update(lib.tensor([1.0, 2.0])))
    catch(lambda: scaler.update(lib.tensor(3.0, requires_grad=True)))
    catch(lambda: lib.amp.GradScaler("cpu").load_state_dict({}))
    catch(lambda: lib.amp.GradScaler("cpu", growth_factor=1.0))
    catch(lambda: lib.amp.GradScaler("cpu", backoff_factor=1.0))
    catch(lambda: lib.amp.GradScaler("cpu").scale(3))
    return msgs


def test_errors_match_torch():
    ours, theirs = _errors(glassgrad), _errors(torch)
    assert ours == theirs
    assert ("ValueError", "Attempting to unscale FP16 gradients.") in ours


def test_state_dict_load_and_pickle_match_torch():
    states = []
    for lib in (glassgrad, torch):
        ours, _ = _pair()
        model = ours if lib is glassgrad else _pair()[1]
        _, scaler = _train(lib, model, steps=5, bad=(1,), scaler_kw={"growth_interval": 3})
        sd = scaler.state_dict()
        fresh = lib.amp.GradScaler("cpu")
        fresh.load_state_dict(sd)
        clone = pickle.loads(pickle.dumps(scaler))
        states.append((sd, fresh.state_dict(), clone.state_dict(),
                       lib.amp.GradScaler("cpu", enabled=False).state_dict()))
    assert states[0] == states[1]
    assert set(states[0][0]) == {"scale", "growth_factor", "backoff_factor", "growth_interval",
                                 "_growth_tracker"}


def test_update_with_a_new_scale_and_disabled_scaler_match_torch():
    seen = []
    for lib in (glassgrad, torch):
        model = _model(lib)
        scaler = lib.amp.GradScaler("cpu")
        opt = _scaled_grads(lib, model, scaler)
        scaler.step(opt)
        scaler.update(1024.0)
        a = scaler.get_scale()
        opt.zero_grad()
        scaler.scale(model(lib.tensor(X)).sum()).backward()
        scaler.step(opt)
        scaler.update(lib.tensor(8.0))
        off = lib.amp.GradScaler("cpu", enabled=False)
        t = lib.tensor(X)
        seen.append((a, scaler.get_scale(), off.get_scale(), off.scale(t) is t, off.is_enabled()))
    assert seen[0] == seen[1]


def test_scale_of_nested_outputs_matches_torch():
    outs = []
    for lib in (glassgrad, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        a, b = lib.tensor(X[0]), lib.tensor(X[1]).to(lib.float16)
        res = scaler.scale([a, (b, a)])
        outs.append((type(res), type(res[1]), [str(r.dtype).split(".")[-1] for r in
                                               (res[0], *res[1])], res[1][0]))
        mapped = list(scaler.scale(iter([a])))
        assert len(mapped) == 1
    assert outs[0][:3] == (list, tuple, outs[1][2]) and outs[1][:2] == (list, tuple)
    assert_close(outs[0][3], outs[1][3])


def test_cuda_device_warns_and_disables_like_torch():
    texts = []
    for lib in (glassgrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = lib.amp.GradScaler("cuda")
        texts.append((str(caught[0].message).split("\nglassgrad")[0], scaler.is_enabled()))
    assert texts[0] == texts[1]


def test_history_names_the_nonfinite_parameters_and_scales():
    model = _model(glassgrad)
    opt = glassgrad.optim.SGD(model.named_parameters(), lr=0.1)
    scaler = glassgrad.amp.GradScaler(growth_interval=1)
    for poison in (False, True, False):
        out = model(glassgrad.tensor(X)).sum()
        scaler.scale(out).backward()
        if poison:
            model[2].bias.grad[1] = float("inf")
        before = [p.detach().clone() for p in model.parameters()]
        assert scaler.step(opt) is None
        scaler.update()
        opt.zero_grad()
        changed = any(not glassgrad.equal(a, b) for a, b in zip(before, model.parameters()))
        assert changed is not poison
        assert scaler.last_step.stepped is not poison
    ok, bad, again = list(scaler.history)
    assert (ok.scale, ok.new_scale, ok.growth_tracker) == (65536.0, 131072.0, 0)
    assert bad.nonfinite == ("2.bias",) and bad.skipped
    assert (bad.scale, bad.new_scale) == (131072.0, 65536.0)
    assert again.stepped and again.iteration == 2
    assert "skipped (inf/NaN in 2.bias)" in str(bad)


def test_skipped_step_makes_the_lr_scheduler_warn_as_torch():
    """issue 18: the scaler did not call optimizer.step(), and both libraries say so."""
    for lib in (glassgrad, torch):
        model = _model(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale(model(lib.tensor(X)).sum() * float("inf")).backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler.step(opt)
            scaler.update()
            sched.step()
        warned = any("lr_scheduler.step()" in str(w.message) for w in caught)
        assert warned
        assert scaler.get_scale() == 32768.0
