"""A schedule stepped with ``scaler=`` does not advance when GradScaler skipped the step (issue 6)."""

import math
import warnings

import pytest
import torch

import glassgrad


def _setup():
    p = glassgrad.nn.Parameter(glassgrad.ones(2))
    opt = glassgrad.optim.SGD([p], lr=1.0)
    sched = glassgrad.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    scaler = glassgrad.amp.GradScaler("cpu", init_scale=4.0)
    return p, opt, sched, scaler


def _iteration(p, opt, sched, scaler, bad: bool):
    opt.zero_grad()
    loss = (p * (math.inf if bad else 1.0)).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    sched.step(scaler=scaler)


def test_skipped_step_does_not_advance_the_schedule_or_warn():
    p, opt, sched, scaler = _setup()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _iteration(p, opt, sched, scaler, bad=True)  # skipped: lr stays 1.0, no warning
    assert scaler.last_step.skipped
    assert sched.get_last_lr() == [1.0]
    assert sched.last_epoch == 0
    _iteration(p, opt, sched, scaler, bad=False)  # a real step advances
    assert not scaler.last_step.skipped
    assert sched.get_last_lr() == [0.5]
    assert sched.last_epoch == 1


def test_without_the_scaler_the_schedule_advances_as_in_pytorch():
    p, opt, sched, scaler = _setup()
    opt.zero_grad()
    scaler.scale((p * math.inf).sum()).backward()
    scaler.step(opt)
    scaler.update()
    sched.step()
    assert sched.get_last_lr() == [0.5]


def _skipped_then_scheduled(lib, bad_steps):
    """Loss-scaled steps (inf gradients on the steps in ``bad_steps``), each followed by a plain
    ``scheduler.step()``; the warnings it gave and the learning rates."""
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=1.0)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
    messages, lrs = [], []
    for i in range(3):
        opt.zero_grad()
        scaler.scale((p * (math.inf if i in bad_steps else 1.0)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()
        messages += [str(w.message) for w in caught]
        lrs.append(sched.get_last_lr())
    return messages, lrs


@pytest.mark.parametrize("bad_steps", [(0,), (1,), (), (0, 1)])
def test_scheduler_after_a_skipped_first_step_warns_as_torch(bad_steps):
    """issue 18: torch's scaler never calls the wrapped ``optimizer.step()`` on inf gradients, so
    the scheduler's "before `optimizer.step()`" warning fires after a skipped first step only."""
    ours = _skipped_then_scheduled(glassgrad, bad_steps)
    theirs = _skipped_then_scheduled(torch, bad_steps)
    assert ours == theirs
    assert any("Detected call of `lr_scheduler.step()` before `optimizer.step()`" in m
               for m in ours[0]) is (0 in bad_steps)
