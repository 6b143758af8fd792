"""The article's workflows run by the examples' own code on torch and on glassgrad, with identical
initial weights (torch's state_dict copied) and identical data and noise (NumPy, converted in each
library), in float64: losses and parameters must follow the same trajectory for several steps.

GAN with retain_graph and with detach, WGAN-GP, second-order and first-order MAML (and the article's
deepcopy loop, equal to first-order MAML), the character LSTM with truncated BPTT, and the errors of
carrying its hidden state without detach()."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
TOL = {"atol": 1e-9, "rtol": 1e-7}


def load_example(name: str):
    """The module of ``examples/<name>.py``; the examples import ``_common`` by plain name."""
    key = f"examples_{name}"
    if key not in sys.modules:
        if EXAMPLES not in sys.path:
            sys.path.insert(0, EXAMPLES)
        spec = importlib.util.spec_from_file_location(key, os.path.join(EXAMPLES, f"{name}.py"))
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


def twins(make):
    """``make(lib)`` on torch and glassgrad in float64, glassgrad given torch's weights."""
    theirs = make(torch)
    ours = make(glassgrad)
    for t_mod, g_mod in zip(theirs if isinstance(theirs, tuple) else (theirs,),
                            ours if isinstance(ours, tuple) else (ours,)):
        t_mod.double()
        g_mod.double()
        copy_params(t_mod, g_mod)
    return theirs, ours


def assert_same_state(ours, theirs, what):
    for (name, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert_close(a, b, **TOL, what=f"{what} {name}")


# --- GAN ------------------------------------------------------------------------------------------
def _gan_setup(lib, gan, models):
    g, d = models
    opt_g = lib.optim.Adam(g.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = lib.optim.Adam(d.parameters(), lr=2e-3, betas=(0.5, 0.999))
    return g, d, opt_g, opt_d


def _gan_data(steps, batch=16, nz=8, seed=0):
    rng = np.random.default_rng(seed)
    real = np.tanh(rng.standard_normal((steps, batch, 64)))
    return real, rng.standard_normal((steps, batch, nz)), rng.uniform(size=(steps, batch, 1))


def _run_article(lib, gan, models, detach, steps=4):
    g, d, opt_g, opt_d = _gan_setup(lib, gan, models)
    real, z, _ = _gan_data(steps)
    losses = [gan.article_step(lib, g, d, opt_g, opt_d, lib.from_numpy(real[k]),
                               lib.from_numpy(z[k]), detach=detach) for k in range(steps)]
    return np.array(losses)


def _make_gan(gan):
    return lambda lib: gan.build_models(lib, 8, hidden_g=(16, 32), hidden_d=(32, 16))


@pytest.mark.parametrize("detach", [False, True], ids=["retain_graph", "detach"])
def test_gan_article_pattern_matches_torch(detach):
    gan = load_example("gan")
    theirs, ours = twins(_make_gan(gan))
    t_losses = _run_article(torch, gan, theirs, detach)
    g_losses = _run_article(glassgrad, gan, ours, detach)
    np.testing.assert_allclose(g_losses, t_losses, **TOL)
    for name, a, b in zip(("generator", "discriminator"), ours, theirs):
        assert_same_state(a, b, name)  # parameters and BatchNorm running statistics


def test_gan_retain_graph_equals_detach():
    """What d_loss sends into G is zeroed before g_loss: the two patterns train identically."""
    gan = load_example("gan")
    make = _make_gan(gan)
    _, retained = twins(make)
    _, detached = twins(make)
    for a, b in zip(detached, retained):
        a.load_state_dict(b.state_dict())
    np.testing.assert_allclose(_run_article(glassgrad, gan, retained, False),
                               _run_article(glassgrad, gan, detached, True), atol=1e-12)


def _run_wgan(lib, gan, models, steps=6, n_critic=3):
    g, c, opt_g, opt_c = _gan_setup(lib, gan, models)
    real, z, eps = _gan_data(steps, seed=1)
    trace = []
    for k in range(steps):
        trace.extend(gan.critic_step(lib, g, c, opt_c, lib.from_numpy(real[k]),
                                     lib.from_numpy(z[k]), lib.from_numpy(eps[k]), 10.0))
        if (k + 1) % n_critic == 0:
            z_g = lib.from_numpy(z[k][::-1].copy())
            trace.append(gan.wgan_generator_step(lib, g, c, opt_g, z_g))
    return np.array(trace)


def test_wgan_gp_matches_torch():
    gan = load_example("gan")
    theirs, ours = twins(_make_gan(gan))
    t_trace = _run_wgan(torch, gan, theirs)
    g_trace = _run_wgan(glassgrad, gan, ours)
    np.testing.assert_allclose(g_trace, t_trace, **TOL)
    for name, a, b in zip(("generator", "critic"), ours, theirs):
        assert_same_state(a, b, name)


def test_gradient_penalty_is_the_articles():
    """The penalty and its gradient w.r.t. the critic's weights equal torch's."""
    gan = load_example("gan")
    (_, t_critic), (_, g_critic) = twins(_make_gan(gan))
    real, z, eps = _gan_data(1, seed=2)
    fake = np.tanh(z[0] @ np.random.default_rng(3).standard_normal((8, 64)))
    values = []
    for lib, critic in ((torch, t_critic), (glassgrad, g_critic)):
        penalty = gan.gradient_penalty(lib, critic, lib.from_numpy(real[0]), lib.from_numpy(fake),
                                       lib.from_numpy(eps[0]))
        grads = lib.autograd.grad(penalty, list(critic.parameters()), allow_unused=True)
        values.append([penalty] + list(grads))
    for a, b in zip(values[1], values[0]):
        assert_close(a, b, **TOL)


# --- MAML -----------------------------------------------------------------------------------------
def _maml_run(lib, maml, model, mode, iterations=3):
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(4)
    losses = []
    for _ in range(iterations):
        tasks = maml.sample_tasks(rng, 3, 5, 5, dtype=np.float64)
        losses.append(maml.meta_step(lib, mode, model, opt, tasks, inner_lr=0.05, inner_steps=2))
    return np.array(losses)


def _small_maml(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(1, 12), nn.ReLU(), nn.Linear(12, 12), nn.Tanh(),
                         nn.Linear(12, 1))


@pytest.mark.parametrize("mode", ["second-order", "first-order", "article"])
def test_maml_matches_torch(mode):
    maml = load_example("maml")
    theirs, ours = twins(_small_maml)
    np.testing.assert_allclose(_maml_run(glassgrad, maml, ours, mode),
                               _maml_run(torch, maml, theirs, mode), **TOL)
    assert_same_state(ours, theirs, f"MAML {mode}")


def test_maml_article_loop_is_first_order_and_second_order_differs():
    maml = load_example("maml")
    _, base = twins(_small_maml)
    runs = {}
    for mode in ("article", "first-order", "second-order"):
        model = _small_maml(glassgrad).double()
        model.load_state_dict(base.state_dict())
        runs[mode] = (_maml_run(glassgrad, maml, model, mode), model)
    np.testing.assert_allclose(runs["article"][0], runs["first-order"][0], atol=1e-12)
    for a, b in zip(runs["article"][1].parameters(), runs["first-order"][1].parameters()):
        assert_close(a, b, 1e-12, 1e-10)
    assert not np.allclose(runs["second-order"][0][1:], runs["first-order"][0][1:], atol=1e-6)


def test_maml_second_order_meta_gradient_matches_torch():
    """The meta-gradient itself (through the inner step's Hessian-vector products)."""
    maml = load_example("maml")
    theirs, ours = twins(_small_maml)
    xs, ys, xq, yq = maml.sample_tasks(np.random.default_rng(5), 1, 5, 5, dtype=np.float64)[0]
    grads = []
    for lib, model in ((torch, theirs), (glassgrad, ours)):
        params = dict(model.named_parameters())
        fast = maml.adapt(lib, model, params, lib.from_numpy(xs), lib.from_numpy(ys), 0.1, 2, True)
        pred = lib.func.functional_call(model, fast, (lib.from_numpy(xq),))
        loss = lib.nn.functional.mse_loss(pred, lib.from_numpy(yq))
        grads.append(lib.autograd.grad(loss, list(params.values())))
    for a, b in zip(grads[1], grads[0]):
        assert_close(a, b, **TOL)


# --- RNN ------------------------------------------------------------------------------------------
def _rnn_setup():
    rnn = load_example("rnn_variable_length")
    ids = np.random.default_rng(6).integers(0, 7, size=(25, 3))
    return rnn, ids, lambda lib: rnn.build_model(lib, 7, embed=5, hidden=6)


def test_rnn_truncated_bptt_matches_torch():
    rnn, ids, make = _rnn_setup()
    theirs, ours = twins(make)
    lengths = [5, 8, 3, 8]
    result = {}
    for lib, model in ((torch, theirs), (glassgrad, ours)):
        opt = lib.optim.Adam(model.parameters(), lr=1e-2)
        state = model.initial_state(3)
        losses, state = rnn.train_tbptt(lib, model, opt, lib.from_numpy(ids), lengths, state)
        losses2, state = rnn.train_tbptt(lib, model, opt, lib.from_numpy(ids), lengths[::-1], state)
        result[lib.__name__] = (np.array(losses + losses2), state)
    np.testing.assert_allclose(result["glassgrad"][0], result["torch"][0], **TOL)
    for a, b in zip(result["glassgrad"][1], result["torch"][1]):
        assert_close(a, b, **TOL)
    assert_same_state(ours, theirs, "char-LSTM")


def test_rnn_without_detach_errors_like_torch():
    rnn, ids, make = _rnn_setup()
    theirs, ours = twins(make)
    reports = [rnn.without_detach(lib, model, lib.from_numpy(ids), 5, chunks=3)
               for lib, model in ((torch, theirs), (glassgrad, ours))]
    for report in reports:
        assert report["second_backward"].startswith(
            "Trying to backward through the graph a second time")
        assert report["retain_graph_with_steps"].startswith(
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation")
        retained, detached = (report["graph_nodes_per_chunk"][k] for k in ("retain_graph",
                                                                             "detach"))
        assert len(set(detached)) == 1 and retained[0] == detached[0]
        assert np.all(np.diff(retained) == retained[1] - retained[0]) and retained[1] > retained[0]
    assert_same_state(ours, theirs, "without_detach leaves the model unchanged")
