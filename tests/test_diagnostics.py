"""Diagnostics that name the cause (NOTE [Diagnostics]), on real graphs: a GAN step, an RNN hidden
state carried across iterations, WGAN-GP, MAML. Where PyTorch raises, both libraries must raise
with PyTorch's phrase; where PyTorch is silent, both must compute the same values and glassgrad
adds its warning."""

from __future__ import annotations

import gc
import inspect
import warnings

import numpy as np
import pytest

import glassgrad
from glassgrad.autograd import diagnostics
from glassgrad.autograd.graph import _Hooks
from tests.autograd_oracle import same, same_error

SECOND = "Trying to backward through the graph a second time"
INPLACE = "one of the variables needed for gradient computation has been modified by an inplace"


@pytest.fixture(autouse=True)
def fresh():
    diagnostics.reset()


def _lineno(fn, text: str) -> int:
    """The line number of the first line of ``fn``'s source containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _line(fn, text: str) -> str:
    return f"{__file__}:{_lineno(fn, text)}"


def _seeded(torch, module, seed: int = 0):
    """The same weights on both libraries."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=p.dtype))
    return module


def _data(torch, seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [torch.tensor(rng.standard_normal(s), dtype=torch.float32) for s in shapes]


def _glassgrad_warnings(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [w for w in caught if str(w.message).startswith("glassgrad:")]


# --- the second backward ------------------------------------------------------------------------
def _gan(torch):
    G = _seeded(torch, torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh()), 1)
    D = _seeded(torch, torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.LeakyReLU(0.2), torch.nn.Linear(4, 1)), 2)
    return (G, D, *_data(torch, 3, (4, 2), (4, 3)))


def _first_backward(loss, **kwargs):
    loss.backward(**kwargs)


def test_second_backward_in_a_gan_names_the_backward_that_freed_the_graph():
    def run(torch):
        G, D, z, real = _gan(torch)
        fake = G(z)
        d_loss = D(real).mean() - D(fake).mean()
        _first_backward(d_loss)  # frees G's graph too: fake was not detached
        g_loss = D(fake).mean()
        g_loss.backward()

    msg = same_error(run, RuntimeError, SECOND)
    assert f"(the backward at {_line(_first_backward, 'loss.backward')})" in msg
    assert "fake.detach()" in msg and "same line" not in msg


def test_second_backward_through_a_carried_hidden_state_says_detach():
    def run(torch):
        cell = _seeded(torch, torch.nn.RNNCell(3, 5))
        h = torch.zeros(2, 5)
        for x in _data(torch, 1, (2, 3), (2, 3), (2, 3)):
            h = cell(x, h)  # h carries the previous iteration's graph
            h.pow(2).sum().backward()

    msg = same_error(run, RuntimeError, SECOND)
    assert "on the same line as this one" in msg
    assert "h = h.detach()" in msg and "[2, 5] float32 tensor from TanhBackward0" in msg


# --- in-place errors ------------------------------------------------------------------------------
def test_inplace_error_names_the_variable_its_creator_and_the_write():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        y = x.sigmoid()
        z = (y * y).sum()
        y.mul_(2)
        z.backward()

    msg = same_error(run, RuntimeError, INPLACE)
    assert "saved an input: [3] float32 (`y`), the output of SigmoidBackward0" in msg
    assert f"mul_ at {_line(run, 'y.mul_(2)')} (now version 1)" in msg


def test_inplace_error_names_the_creation_line_when_lines_are_recorded():
    def run(torch):
        x = torch.ones(3, requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x.exp()
            z = y.sum() * y
            y.add_(1)
            z.sum().backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg = same_error(run, RuntimeError, INPLACE)
    assert f"(`y`), the output of ExpBackward0 at {_line(run, 'x.exp()')}" in msg
    assert f"add_ at {_line(run, 'y.add_(1)')}" in msg


def test_gan_step_between_backwards_names_the_parameter_and_the_optimizer():
    def run(torch):
        G, D, z, _ = _gan(torch)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        out = D(G(z))
        out.mean().backward(retain_graph=True)
        opt_d.step()  # changes D's weights in place, which the graph saved
        (-out.mean()).backward()

    msg = same_error(run, RuntimeError, INPLACE)
    assert "`D.2.weight`" in msg and "`opt_d.step()` (SGD updates its parameters in place)" in msg


# --- retain_graph ---------------------------------------------------------------------------------
def test_retained_graph_growing_across_iterations_warns_once_with_bytes():
    def run(torch):
        cell = _seeded(torch, torch.nn.RNNCell(3, 5))
        h = torch.zeros(2, 5)
        for x in _data(torch, 1, *[(2, 3)] * 5):
            h = cell(x, h)
            h.pow(2).sum().backward(retain_graph=True)  # silently O(n^2) in PyTorch
        return [p.grad for p in cell.parameters()]

    _, caught = _glassgrad_warnings(same, run)
    growing = [w for w in caught if "keeps growing across iterations" in str(w.message)]
    assert len(growing) == 1 and "h = h.detach()" in str(growing[0].message)
    assert (growing[0].filename, growing[0].lineno) == (__file__, _lineno(run, "backward(retain"))
    assert diagnostics.Stats.growing >= 1 and diagnostics.Stats.reached_again >= 3


def test_article_retain_graph_in_a_loop_is_reported_once_with_its_line():
    def run(torch):
        model = _seeded(torch, torch.nn.Sequential(
            torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
        (inp,) = _data(torch, 1, (16, 4))
        for _ in range(3):
            output = model(inp)
            loss = output.pow(2).mean()
            loss.backward(retain_graph=True)  # the article's 2.2: kept for nothing
        return [p.grad for p in model.parameters()]

    _, caught = _glassgrad_warnings(same, run)
    unused = [w for w in caught if "kept alive for nothing" in str(w.message)]
    assert len(unused) == 1
    assert (unused[0].filename, unused[0].lineno) == (__file__, _lineno(run, "backward(retain"))
    # saved per graph: inp (16x4), the ReLU output (16x8), the output (16x1), float32
    per_graph = (16 * 4 + 16 * 8 + 16 * 1) * 4
    assert f"{per_graph} B of saved tensors" in str(unused[0].message)
    assert diagnostics.Stats.dropped_unused >= 2


def test_retained_graph_reached_by_a_later_backward_is_counted_not_warned():
    def run(torch):
        G, D, z, real = _gan(torch)
        fake = G(z)
        d_loss = D(real).mean() - D(fake).mean()
        d_loss.backward(retain_graph=True)  # needed: g_loss goes through G's graph again
        g_loss = D(fake).mean()
        g_loss.backward()
        return [p.grad for p in G.parameters()] + [p.grad for p in D.parameters()]

    _, caught = _glassgrad_warnings(same, run)
    assert not caught
    assert diagnostics.Stats.reached_again >= 1 and diagnostics.Stats.dropped_unused == 0


def test_temporary_graph_retained_is_not_reported():
    def run(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x.exp() * x).sum().backward(retain_graph=True)  # nothing keeps the graph: no cost
        return x.grad

    _, caught = _glassgrad_warnings(same, run)
    assert not caught


# --- WGAN-GP and MAML: gradients used as constants --------------------------------------------------
def _wgan_gp(torch, create_graph):
    D = _seeded(torch, torch.nn.Sequential(
        torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)))
    real, fake, eps = _data(torch, 1, (6, 2), (6, 2), (6, 1))
    eps = eps.sigmoid()
    interpolated = (real * eps + fake * (1 - eps)).requires_grad_(True)
    d_interpolated = D(interpolated)
    gradients = torch.autograd.grad(
        outputs=d_interpolated, inputs=interpolated,
        grad_outputs=torch.ones_like(d_interpolated),
        create_graph=create_graph, retain_graph=True, only_inputs=True)[0]
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    loss = D(fake).mean() - D(real).mean() + 10 * gradient_penalty
    loss.backward()
    return [p.grad for p in D.parameters()]


def test_wgan_gp_with_create_graph_matches_torch_without_warnings():
    _, caught = _glassgrad_warnings(same, lambda torch: _wgan_gp(torch, True))
    assert not caught


def test_wgan_gp_without_create_graph_warns_that_the_penalty_is_a_constant():
    _, caught = _glassgrad_warnings(same, lambda torch: _wgan_gp(torch, False))
    consts = [w for w in caught if "feeds this backward as a constant" in str(w.message)]
    assert len(consts) == 1 and "create_graph=True" in str(consts[0].message)
    assert diagnostics.Stats.grad_constants == 1


def _maml(torch, mode):
    model = _seeded(torch, torch.nn.Linear(3, 1))
    x, y = _data(torch, 1, (8, 3), (8, 1))
    params = list(model.parameters())
    inner = (torch.nn.functional.linear(x, *params) - y).pow(2).mean()
    grads = torch.autograd.grad(inner, params, create_graph=mode == "second")
    if mode == "detached":
        grads = [g.detach() for g in grads]
    fast = [p - 0.1 * g for p, g in zip(params, grads)]
    outer = (torch.nn.functional.linear(x, *fast) - y).pow(2).mean()
    outer.backward()
    return [p.grad for p in params]


@pytest.mark.parametrize("mode", ["first", "detached", "second"])
def test_maml_first_order_trap_warns_unless_said_or_second_order(mode):
    _, caught = _glassgrad_warnings(same, lambda torch: _maml(torch, mode))
    if mode == "first":
        assert len(caught) == 1 and "first-order MAML" in str(caught[0].message)
    else:
        assert not caught


def test_marks_on_gradients_cost_nothing_once_they_die():
    _glassgrad_warnings(_maml, glassgrad, "first")
    gc.collect()
    assert _Hooks.grad_consts == 0 and _Hooks.diagnose_backward == 0


# --- writes through .data -----------------------------------------------------------------------------
def test_write_through_data_to_a_saved_tensor_warns_where_torch_is_silent():
    def run(torch):
        p = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (p * p).sum()
        p.data.mul_(2)
        y.backward()  # uses the new values in both libraries
        return p.grad, p._version

    _, caught = _glassgrad_warnings(same, run)
    assert len(caught) == 1 and "overwritten through .data" in str(caught[0].message)
    assert (caught[0].filename, caught[0].lineno) == (__file__, _lineno(run, "p.data.mul_"))


def test_data_write_before_saving_is_fine():
    def run(torch):
        p = torch.tensor([1.0, 2.0], requires_grad=True)
        p.data.mul_(2)
        (p * p).sum().backward()
        return p.grad

    _, caught = _glassgrad_warnings(same, run)
    assert not caught


# --- anomaly mode: the first non-finite op in forward order -------------------------------------------
def test_anomaly_names_the_first_op_that_made_a_non_finite_value():
    def run(torch):
        x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            loss = (x.log() * 0).sum()  # log(0) = -inf, then -inf * 0 = nan
            loss.backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg = same_error(run, RuntimeError, "nan")
    assert "Log is the first op in forward order" in msg
    assert "at [0]: input 0 = 0.0 -> -inf" in msg
    line = _lineno(run, "x.log()")
    assert f'File "{__file__}", line {line}' in msg


def test_anomaly_adds_the_forward_origin_to_torchs_backward_nan_error():
    def run(torch):
        x = torch.tensor([-1.0, 1.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            y = x.sqrt()
            torch.where(torch.isnan(y), torch.zeros_like(y), y).sum().backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg = same_error(run, RuntimeError,
                         "Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert "In forward: Function 'SqrtBackward0' produced nan" in msg


def test_anomaly_lets_a_masked_minus_inf_through():
    def run(torch):
        s = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], requires_grad=True)
        mask = torch.tensor([[True, False, False], [False, False, True]])
        with torch.autograd.detect_anomaly():
            p = s.masked_fill(mask, float("-inf")).softmax(-1)
            (p * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
        return p, s.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(run)


def test_retain_graph_loop_over_outputs_is_not_reported():
    """A Hessian row by row, and one backward per output: every turn but the last needs
    retain_graph=True; the last turn's graph dying unreached is the loop's end, not a mistake."""
    def run(torch):
        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
        rows = [torch.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(3)]
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        out = w.exp() * 3
        for i in range(2):
            out[i].backward(retain_graph=True)
        return [torch.stack(rows), w.grad]

    _, caught = _glassgrad_warnings(same, run)
    assert not [w for w in caught if "kept alive for nothing" in str(w.message)]
    assert not [w for w in caught if "keeps growing" in str(w.message)]
