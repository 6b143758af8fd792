"""Connectionist temporal classification: the per-sample negative log likelihood of
``torch.ctc_loss`` and its gradient, both in log space and vectorised over the batch.

The alpha recursion runs over the extended target ``l'`` (a blank between labels and at both
ends, ``2 L + 1`` states) one time step at a time for the whole batch. The gradient is torch's
alpha-beta formula, ``exp(lp) - exp(log sum_{s: l'(s) = c} alpha_t(s) beta_t(s) + nll - lp)``: it
is the gradient with respect to the logits behind a ``log_softmax`` (torch assumes
``log_probs`` are normalised), zero past each input length, and torch does not differentiate it
again ("derivative for aten::_ctc_loss_backward is not implemented").
"""

from __future__ import annotations

import numpy as np

from .primitive import Primitive


def _extended(targets, target_lengths, blank):
    """``l'`` per sample, (N, 2 S + 1), and the mask of the states each sample has."""
    n, s = targets.shape
    ext = np.full((n, 2 * s + 1), blank, dtype=np.int64)
    ext[:, 1::2] = targets
    states = np.arange(2 * s + 1)[None, :] < (2 * target_lengths[:, None] + 1)
    ext = np.where(states, ext, blank)
    # a label state (odd s) may skip the blank before it unless it repeats the label two states
    # back; by position, as torch, so a target that holds the blank's value behaves as torch's
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    return ext, states, skip


def _emissions(log_probs, ext):
    """``lp[t, n, l'(s)]``: (T, N, S')."""
    return np.take_along_axis(log_probs, np.broadcast_to(ext[None], (log_probs.shape[0],) +
                                                         ext.shape), axis=2)


def _alphas(emit, states, skip, target_lengths):
    t_max = emit.shape[0]
    neg = -np.inf
    alpha = np.full(emit.shape, neg, dtype=emit.dtype)
    alpha[0, :, 0] = emit[0, :, 0]
    if emit.shape[2] > 1:  # (every target empty: the blank state only)
        alpha[0, :, 1] = np.where(target_lengths > 0, emit[0, :, 1], neg)
    with np.errstate(invalid="ignore"):
        for t in range(1, t_max):
            prev = alpha[t - 1]
            acc = prev.copy()
            acc[:, 1:] = np.logaddexp(acc[:, 1:], prev[:, :-1])
            acc[:, 2:] = np.where(skip[:, 2:], np.logaddexp(acc[:, 2:], prev[:, :-2]), acc[:, 2:])
            alpha[t] = np.where(states, acc + emit[t], neg)
    return alpha


def _final(table, input_lengths, target_lengths):
    """``log(table[T_n - 1, n, 2 L_n] + table[T_n - 1, n, 2 L_n - 1])`` per sample."""
    rows = np.arange(len(input_lengths))
    last = np.maximum(input_lengths - 1, 0)
    end = table[last, rows, 2 * target_lengths]
    before = np.where(target_lengths > 0, table[last, rows, np.maximum(2 * target_lengths - 1, 0)],
                      -np.inf)
    return np.logaddexp(end, before)


def ctc_nll(log_probs, targets, input_lengths, target_lengths, blank):
    """Per-sample ``-log p(target | input)`` of (T, N, C) log-probabilities, and the alphas."""
    ext, states, skip = _extended(targets, target_lengths, blank)
    emit = _emissions(log_probs, ext)
    alpha = _alphas(emit, states, skip, target_lengths)
    nll = -_final(alpha, input_lengths, target_lengths)
    # NOTE: an empty input (T_n = 0) has probability 1 of the empty target, 0 of any other
    nll = np.where(input_lengths == 0, np.where(target_lengths == 0, 0.0, np.inf), nll)
    return nll.astype(log_probs.dtype), alpha, (ext, states, skip, emit)


def _betas(emit, states, skip, input_lengths, target_lengths):
    t_max, n, width = emit.shape
    neg = -np.inf
    rows = np.arange(n)
    beta = np.full(emit.shape, neg, dtype=emit.dtype)
    later = np.full((n, width), neg, dtype=emit.dtype)
    # the skip into state s + 2 is allowed when state s + 2 may skip
    skip_in = np.zeros(skip.shape, dtype=bool)
    skip_in[:, :-2] = skip[:, 2:]
    with np.errstate(invalid="ignore"):
        for t in range(t_max - 1, -1, -1):
            acc = later.copy()
            acc[:, :-1] = np.logaddexp(acc[:, :-1], later[:, 1:])
            acc[:, :-2] = np.where(skip_in[:, :-2], np.logaddexp(acc[:, :-2], later[:, 2:]),
                                   acc[:, :-2])
            start = np.full((n, width), neg, dtype=emit.dtype)
            start[rows, 2 * target_lengths] = 0.0
            has = target_lengths > 0
            start[rows[has], 2 * target_lengths[has] - 1] = 0.0
            acc = np.where((t == input_lengths - 1)[:, None], start, acc)
            cur = np.where(states & (t < input_lengths)[:, None], acc + emit[t], neg)
            beta[t] = cur
            later = cur
    return beta


def ctc_grad(grad, log_probs, nll, alpha, cache, input_lengths, target_lengths, zero_infinity):
    ext, states, skip, emit = cache
    beta = _betas(emit, states, skip, input_lengths, target_lengths)
    t_max, n, c = log_probs.shape
    acc = np.full(log_probs.shape, -np.inf, dtype=log_probs.dtype)
    t_idx, n_idx, s_idx = np.nonzero(np.broadcast_to(states[None], alpha.shape))
    np.logaddexp.at(acc, (t_idx, n_idx, ext[n_idx, s_idx]), alpha[t_idx, n_idx, s_idx] +
                    beta[t_idx, n_idx, s_idx])
    _last_step_as_torch(acc, alpha, beta, ext, input_lengths, target_lengths)
    with np.errstate(over="ignore", invalid="ignore"):
        result = (np.exp(log_probs) - np.exp(acc + nll[None, :, None] - log_probs)) * \
            grad[None, :, None]
    live = np.arange(t_max)[:, None] < input_lengths[None, :]
    if zero_infinity:
        live = live & ~np.isinf(nll)[None, :]
    return np.where(live[:, :, None], result, 0.0).astype(log_probs.dtype)


def _last_step_as_torch(acc, alpha, beta, ext, input_lengths, target_lengths) -> None:
    """torch writes the last step's two live states (2 L, then 2 L - 1) by assignment, not by
    log-add: the same where the last label differs from the blank, and the label's term alone
    where a target holds the blank's value (torch's numbers, kept)."""
    for n in np.nonzero(input_lengths > 0)[0]:
        t, end = input_lengths[n] - 1, 2 * target_lengths[n]
        acc[t, n] = -np.inf
        acc[t, n, ext[n, end]] = alpha[t, n, end] + beta[t, n, end]
        if end:
            acc[t, n, ext[n, end - 1]] = alpha[t, n, end - 1] + beta[t, n, end - 1]


class CtcLoss(Primitive):
    """Per-sample CTC negative log likelihood ``(N,)`` of ``log_probs`` ``(T, N, C)``; targets
    padded ``(N, S)``, int64 lengths ``(N,)`` as attributes. ``zero_infinity`` gives an
    impossible alignment loss 0 and gradient 0."""

    saves = ("log_probs", "result")

    @staticmethod
    def forward(xp, log_probs, *, targets, input_lengths, target_lengths, blank, zero_infinity):
        nll, _, _ = ctc_nll(log_probs, targets, input_lengths, target_lengths, blank)
        if zero_infinity:
            nll = np.where(np.isinf(nll), nll.dtype.type(0), nll)
        return nll

    @staticmethod
    def backward(grad, log_probs, result, *, targets, input_lengths, target_lengths, blank,
                 zero_infinity):
        return (CtcLossBackward.apply(grad, log_probs, targets=targets,
                                      input_lengths=input_lengths, target_lengths=target_lengths,
                                      blank=blank, zero_infinity=zero_infinity),)


class CtcLossBackward(Primitive):
    """torch's ``_ctc_loss_backward``: the alpha-beta gradient; not differentiable again."""

    @staticmethod
    def forward(xp, grad, log_probs, *, targets, input_lengths, target_lengths, blank,
                zero_infinity):
        nll, alpha, cache = ctc_nll(log_probs, targets, input_lengths, target_lengths, blank)
        return ctc_grad(grad, log_probs, nll, alpha, cache, input_lengths, target_lengths,
                        zero_infinity)

    @staticmethod
    def backward(grad_grad, **attrs):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented\n"
                           "glassgrad: as in PyTorch; CTC's gradient is computed by the alpha-beta "
                           "recursion and is not differentiated again.")
