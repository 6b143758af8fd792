"""LR schedulers against torch: the same schedule on both libraries, learning rates (and cycled
momenta) compared exactly over 30 epochs; warnings, state dicts and errors."""

from __future__ import annotations

import warnings

import pytest
import torch

import glassgrad

EPOCHS = 30
LOSSES = [
    1.0,
    0.9,
    0.95,
    0.95,
    0.95,
    0.8,
    0.85,
    0.85,
    0.85,
    0.85,
    0.79,
    0.8,
    0.8,
    0.8,
    0.8,
    0.8,
    0.8,
    0.5,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
    0.6,
]


def _optimizer(lib, name="SGD"):
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if name == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return getattr(lib.optim, name)(groups, lr=0.1)


def _seq(s, o):
    return s.SequentialLR(
        o,
        [s.LinearLR(o, start_factor=0.1, total_iters=5), s.ExponentialLR(o, gamma=0.9)],
        milestones=[5],
    )


def _seq3(s, o):
    return s.SequentialLR(
        o,
        [
            s.ConstantLR(o, factor=0.5, total_iters=3),
            s.CosineAnnealingLR(o, T_max=8, eta_min=0.001),
            s.StepLR(o, step_size=4, gamma=0.5),
        ],
        milestones=[6, 16],
    )


SCHEDULES = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[5, 12, 12, 20], gamma=0.3),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda e: 0.95**e),
    "LambdaLR-per-group": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9**e]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.97),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=8),
    "LinearLR-decay": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=12),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=20, power=2.0),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=EPOCHS),
    "OneCycleLR-linear-3phase": lambda s, o: s.OneCycleLR(
        o,
        max_lr=0.8,
        epochs=3,
        steps_per_epoch=10,
        anneal_strategy="linear",
        three_phase=True,
        pct_start=0.25,
    ),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="triangular2"
    ),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(
        o,
        base_lr=[0.01, 0.02],
        max_lr=0.1,
        step_size_up=3,
        step_size_down=5,
        mode="exp_range",
        gamma=0.97,
    ),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.01
    ),
    "SequentialLR": _seq,
    "SequentialLR-3": _seq3,
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.9)]
    ),
    "ReduceLROnPlateau": lambda s, o: s.ReduceLROnPlateau(
        o, factor=0.5, patience=2, cooldown=1, min_lr=[0.001, 0.002]
    ),
    "ReduceLROnPlateau-max-abs": lambda s, o: s.ReduceLROnPlateau(
        o, mode="max", factor=0.3, patience=1, threshold=0.05, threshold_mode="abs"
    ),
}


def _record(opt, sched):
    groups = opt.param_groups
    return (
        tuple(sched.get_last_lr()),
        tuple(g["lr"] for g in groups),
        tuple(g.get("momentum") for g in groups),
        tuple(g.get("betas") for g in groups),
        getattr(sched, "last_epoch", None),
    )


def _run(lib, make, opt_name="SGD", epochs=EPOCHS):
    opt = _optimizer(lib, opt_name)
    sched = make(lib.optim.lr_scheduler, opt)
    rows = [_record(opt, sched)]
    for epoch in range(epochs):
        opt.step()
        if isinstance(sched, lib.optim.lr_scheduler.ReduceLROnPlateau):
            sched.step(LOSSES[epoch])
        else:
            sched.step()
        rows.append(_record(opt, sched))
    return rows


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_matches_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning on the right call order
        ours = _run(glassgrad, SCHEDULES[name])
        theirs = _run(torch, SCHEDULES[name])
    assert ours == theirs


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR-triangular2", "ExponentialLR"])
def test_schedule_with_adam_cycles_beta1_like_torch(name):
    assert _run(glassgrad, SCHEDULES[name], "Adam") == _run(torch, SCHEDULES[name], "Adam")


def _warning_messages(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


def _order_case(lib, first_optimizer):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)

    def go():
        if first_optimizer:
            opt.step()
        sched.step()

    return _warning_messages(go)


@pytest.mark.parametrize("first_optimizer", [True, False])
def test_step_order_warning_matches_torch(first_optimizer):
    ours = _order_case(glassgrad, first_optimizer)
    theirs = _order_case(torch, first_optimizer)
    assert ours == theirs
    assert bool(ours) is not first_optimizer
    if ours:
        assert "Detected call of `lr_scheduler.step()` before `optimizer.step()`" in ours[0]


def test_step_skipped_by_grad_scaler_counts_no_step_and_still_warns():
    """See NOTE [Skipped steps]: a skipped step is neither taken nor called (PyTorch warns)."""
    opt = _optimizer(glassgrad)
    sched = glassgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt._note_skipped_step()
    assert any("before `optimizer.step()`" in m for m in _warning_messages(sched.step))
    assert opt._step_count == 0
    opt.step()
    assert opt._step_count == 1


def test_get_lr_outside_step_and_epoch_argument_warn_like_torch():
    def run(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        opt.step()
        return (
            _warning_messages(sched.get_lr),
            _warning_messages(lambda: sched.step(3)),
            sched.get_last_lr(),
        )

    assert run(glassgrad) == run(torch)


@pytest.mark.parametrize(
    "name",
    [
        "CosineAnnealingLR",
        "OneCycleLR",
        "SequentialLR",
        "ReduceLROnPlateau",
        "LambdaLR",
        "CyclicLR-triangular2",
    ],
)
def test_state_dict_round_trip(name):
    make = SCHEDULES[name]
    plateau = name.startswith("ReduceLROnPlateau")

    def advance(opt, sched, epochs):
        for epoch in epochs:
            opt.step()
            sched.step(LOSSES[epoch]) if plateau else sched.step()

    opt = _optimizer(glassgrad)
    sched = make(glassgrad.optim.lr_scheduler, opt)
    advance(opt, sched, range(10))
    saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched
    opt2 = _optimizer(glassgrad)
    sched2 = make(glassgrad.optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    advance(opt2, sched2, range(10, EPOCHS))
    assert tuple(sched2.get_last_lr()) == _run(torch, make)[-1][0]


def test_lambda_state_dict_drops_functions_like_torch():
    def run(lib):
        opt = _optimizer(lib)
        sd = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5).state_dict()
        return sorted(sd), sd["lr_lambdas"]

    assert run(glassgrad) == run(torch)


ERRORS = {
    "onecycle-past-end": lambda s, o: [
        _step(o, sch) for sch in [s.OneCycleLR(o, max_lr=1.0, total_steps=3)] for _ in range(4)
    ],
    "onecycle-no-steps": lambda s, o: s.OneCycleLR(o, max_lr=1.0),
    "not-optimizer": lambda s, o: s.StepLR(object(), step_size=2),
    "resume-without-initial-lr": lambda s, o: s.StepLR(o, step_size=2, last_epoch=3),
    "sequential-milestones": lambda s, o: s.SequentialLR(
        o, [s.ExponentialLR(o, gamma=0.9)], milestones=[3]
    ),
    "sequential-plateau": lambda s, o: s.SequentialLR(
        o, [s.ExponentialLR(o, gamma=0.9), s.ReduceLROnPlateau(o)], milestones=[3]
    ),
    "plateau-factor": lambda s, o: s.ReduceLROnPlateau(o, factor=1.5),
    "linear-factor": lambda s, o: s.LinearLR(o, start_factor=0),
    "lambda-count": lambda s, o: s.LambdaLR(o, [lambda e: 1.0]),
}


def _step(opt, sched):
    opt.step()
    sched.step()


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(case):
    def run(lib):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ERRORS[case](lib.optim.lr_scheduler, _optimizer(lib))
        except Exception as e:  # noqa: BLE001 - compared against torch
            return type(e).__name__, str(e)
        return None

    theirs = run(torch)
    assert theirs is not None and run(glassgrad) == theirs


def test_steps_before_the_scheduler_existed_do_not_count_like_torch():
    def run(lib):
        opt = _optimizer(lib)
        opt.step()
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        return _warning_messages(sched.step)

    ours, theirs = run(glassgrad), run(torch)
    assert ours == theirs and len(ours) == 1
