"""Loss modules against torch: values, input gradients (float64, float32), double backward for
the losses on the WGAN-GP path, every reduction, and the error messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.nn_oracle import check_module
from tests.oracle import assert_close

R = np.random.default_rng(0)
X = R.standard_normal((4, 3))
Y = R.standard_normal((4, 3))
P = R.uniform(0.05, 0.95, (4, 3))
T01 = (R.uniform(size=(4, 3)) > 0.5).astype(np.float64)
CLS = np.array([0, 2, 1, 2])
CLS_IGN = np.array([0, -100, 1, 2])
X4 = R.standard_normal((2, 3, 2, 2))
CLS4 = R.integers(0, 3, (2, 2, 2))
PROB = np.exp(Y) / np.exp(Y).sum(1, keepdims=True)
LOGP = np.log(P / P.sum(1, keepdims=True))


def _w(lib):
    return lib.tensor([0.3, 1.0, 2.0], dtype=lib.float64)


def _w32(lib, n=3):
    return lib.tensor(np.linspace(0.5, 1.5, n))


# (id, factory(lib), inputs [floats are inputs requiring grad, ints are targets], double backward)
LOSSES = []
for red in ("mean", "sum", "none"):
    LOSSES += [
        (f"MSE-{red}", lambda m, r=red: m.nn.MSELoss(reduction=r), [X, Y], True),
        (f"L1-{red}", lambda m, r=red: m.nn.L1Loss(reduction=r), [X, Y], True),
        (f"SmoothL1-{red}", lambda m, r=red: m.nn.SmoothL1Loss(reduction=r, beta=0.5), [X, Y],
         True),
        (f"Huber-{red}", lambda m, r=red: m.nn.HuberLoss(reduction=r, delta=0.7), [X, Y], True),
        (f"CE-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(reduction=r), [X, CLS], True),
        (f"CE-weight-ignore-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(
            weight=_w(m), ignore_index=-100, reduction=r), [X, CLS_IGN], True),
        (f"CE-smooth-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(
            label_smoothing=0.2, reduction=r), [X, CLS], True),
        (f"CE-smooth-weight-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(
            weight=_w(m), label_smoothing=0.1, ignore_index=1, reduction=r), [X, CLS], True),
        (f"CE-probs-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(reduction=r), [X, PROB], True),
        (f"CE-probs-weight-smooth-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(
            weight=_w(m), label_smoothing=0.3, reduction=r), [X, PROB], True),
        (f"CE-4d-{red}", lambda m, r=red: m.nn.CrossEntropyLoss(weight=_w(m), reduction=r),
         [X4, CLS4], True),
        (f"NLL-{red}", lambda m, r=red: m.nn.NLLLoss(weight=_w(m), reduction=r), [LOGP, CLS],
         True),
        (f"BCE-{red}", lambda m, r=red: m.nn.BCELoss(reduction=r), [P, T01], True),
        (f"BCE-weight-{red}", lambda m, r=red: m.nn.BCELoss(weight=_w(m), reduction=r), [P, P],
         True),
        (f"BCEWithLogits-{red}", lambda m, r=red: m.nn.BCEWithLogitsLoss(reduction=r), [X, P],
         True),
        (f"BCEWithLogits-pos-{red}", lambda m, r=red: m.nn.BCEWithLogitsLoss(
            weight=_w(m), pos_weight=_w(m) * 2, reduction=r), [X, T01], True),
        (f"KLDiv-{red}", lambda m, r=red: m.nn.KLDivLoss(reduction=r), [LOGP, PROB], True),
        (f"KLDiv-log-{red}", lambda m, r=red: m.nn.KLDivLoss(reduction=r, log_target=True),
         [LOGP, np.log(PROB)], True),
        (f"SoftMargin-{red}", lambda m, r=red: m.nn.SoftMarginLoss(reduction=r),
         [X, np.sign(Y)], True),
        (f"PoissonNLL-{red}", lambda m, r=red: m.nn.PoissonNLLLoss(reduction=r), [X, np.abs(Y)],
         True),
    ]
LOSSES += [
    ("KLDiv-batchmean", lambda m: m.nn.KLDivLoss(reduction="batchmean"), [LOGP, PROB], True),
    ("CE-1d-input", lambda m: m.nn.CrossEntropyLoss(), [X[0], np.array(2)], True),
    ("SmoothL1-beta0", lambda m: m.nn.SmoothL1Loss(beta=0.0), [X, Y], False),
    ("MarginRanking", lambda m: _Margin(m), [X, Y, np.sign(P - 0.5)], True),
]


def _Margin(m):
    class Wrap(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.loss = m.nn.MarginRankingLoss(margin=0.2)

        def forward(self, a, b, y):
            return self.loss(a, b, y)

    return Wrap()


@pytest.mark.parametrize("name,make,inputs,double", LOSSES, ids=[x[0] for x in LOSSES])
def test_loss_matches_torch(name, make, inputs, double):
    def make_wrapped(lib):
        loss = make(lib)

        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.loss = loss

            def forward(self, x, *rest):
                # NOTE: targets enter as constants so both libraries differentiate w.r.t. x only
                return self.loss(x, *[r.detach() if isinstance(r, lib.Tensor) else r
                                      for r in rest])

        return Wrap()

    check_module(make_wrapped, inputs, double=double, what=name,
                 tol=None)


def test_bce_with_logits_stable_for_large_logits():
    x = np.array([-1e4, -100.0, -30.0, 0.0, 30.0, 100.0, 1e4])
    t = np.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0])
    for lib_dtype in ("float64", "float32"):
        xs = [lib.tensor(x, dtype=getattr(lib, lib_dtype), requires_grad=True)
              for lib in (glassgrad, torch)]
        ts = [lib.tensor(t, dtype=getattr(lib, lib_dtype)) for lib in (glassgrad, torch)]
        outs = [lib.nn.functional.binary_cross_entropy_with_logits(a, b, reduction="none")
                for lib, a, b in zip((glassgrad, torch), xs, ts)]
        assert np.isfinite(outs[0].detach().numpy()).all()
        assert_close(outs[0], outs[1], 1e-4, 1e-5, what="bce logits values")
        for o in outs:
            o.sum().backward()
        assert_close(xs[0].grad, xs[1].grad, 1e-6, 1e-5, what="bce logits grads")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bce_saturated_probabilities_match_torch(dtype):
    """Logs clamp at -100; a probability of exactly 0 or 1 has a large finite gradient."""
    x = np.array([0.0, 1.0, 1e-30, 0.5, 0.999])
    t = np.array([1.0, 0.0, 1.0, 0.5, 0.2])
    res = []
    for lib in (glassgrad, torch):
        xs = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        ts = lib.tensor(t, dtype=getattr(lib, dtype), requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy(xs, ts, reduction="none")
        res.append((loss, *lib.autograd.grad(loss.sum(), (xs, ts))))
    for a, b in zip(*res):
        assert_close(a, b, 1e-5, 1e-5)


def test_bce_rejects_out_of_range():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        glassgrad.nn.BCELoss()(glassgrad.tensor([1.5]), glassgrad.tensor([1.0]))


def test_nll_errors():
    x = glassgrad.randn(3, 4)
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        glassgrad.nn.functional.cross_entropy(x, glassgrad.tensor([0, 7, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)."):
        glassgrad.nn.functional.cross_entropy(x, glassgrad.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        glassgrad.nn.functional.nll_loss(x, glassgrad.tensor([0.0, 1.0, 2.0]))


def test_mse_broadcast_warning_matches_torch():
    with pytest.warns(UserWarning, match="Using a target size") as ours:
        glassgrad.nn.functional.mse_loss(glassgrad.ones(3, 1), glassgrad.ones(3))
    with pytest.warns(UserWarning, match="Using a target size") as theirs:
        torch.nn.functional.mse_loss(torch.ones(3, 1), torch.ones(3))
    strip = str(ours[0].message).replace("glassgrad.", "torch.")
    assert strip == str(theirs[0].message)


def test_invalid_reduction():
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        glassgrad.nn.MSELoss(reduction="avg")(glassgrad.ones(2), glassgrad.ones(2))


def test_legacy_size_average_maps_to_sum():
    ours = glassgrad.nn.MSELoss(size_average=False)
    theirs = torch.nn.MSELoss(size_average=False)
    assert ours.reduction == theirs.reduction == "sum"


def test_loss_state_dict_holds_weight():
    ours = glassgrad.nn.CrossEntropyLoss(weight=glassgrad.ones(3))
    theirs = torch.nn.CrossEntropyLoss(weight=torch.ones(3))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
