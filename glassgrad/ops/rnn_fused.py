"""Fused recurrent primitives: a whole LSTM layer (one direction) as one op, and ``Unbind``.

NOTE [Fused LSTM]: ``nn.LSTM`` recorded ~12 ops per time step (the gates' slices, sigmoids, tanhs,
products) and each step's slice of the input projection sent a full-size gradient back. PyTorch's
CPU LSTM is one fused op; so is ``LSTMLayer``: forward loops over time in NumPy and also returns
every step's cell state and activated gates as extra outputs, which it saves for backward (so a
second-order graph through them comes back to this node as their gradients). Backward is the
textbook recurrence, written once (``_lstm_backward``) over a small math namespace and run on
arrays for a first-order backward (nothing is recorded then) or on Tensors when the graph is being
recorded (``create_graph=True``), so higher orders differentiate the very same formula.
"""

from __future__ import annotations

import numpy as np

from . import primitive
from .elementwise import tanh
from .primitive import Primitive
from .shape import cat, stack


class Unbind(Primitive):
    """``x.unbind(0)`` as one op with one output per index: its backward stacks the gradients of
    the outputs (zeros for outputs that got none) in one op (PyTorch's ``UnbindBackward0``), where
    ``x[t]`` per step sends a full-size gradient back per step. Used inside the RNN layers."""

    multi_output = True

    @staticmethod
    def forward(xp, x):
        return tuple(x)

    @staticmethod
    def backward(grads):
        some = next(g for g in grads if g is not None)
        zero = primitive._make(np.zeros(some._array.shape, dtype=some._array.dtype))
        return (stack([zero if g is None else g for g in grads], 0),)


class LSTMLayer(Primitive):
    """One LSTM layer over all steps: ``gi (T, B, 4H)`` (the input projection of every step, both
    biases folded in), ``h0``, ``c0 (B, H)``, ``w_hh_t (H, 4H)`` -> ``hs``, ``cs (T, B, H)`` (every
    step's hidden and cell state) and the activated gates ``(T, B, 4H)`` in PyTorch's order
    (i, f, g, o). ``reverse`` runs from the last step to the first. See NOTE [Fused LSTM]."""

    multi_output = True
    saves = ("h0", "c0", "w_hh_t", "result", "result1", "result2")
    wants_needs_input_grad = True

    @staticmethod
    def forward(xp, gi, h0, c0, w_hh_t, *, reverse):
        steps, batch, width = gi.shape
        size = width // 4
        hs = xp.empty((steps, batch, size), dtype=gi.dtype)
        cs = xp.empty((steps, batch, size), dtype=gi.dtype)
        gates = xp.empty((steps, batch, width), dtype=gi.dtype)
        pre = xp.empty((batch, width), dtype=gi.dtype)
        tmp = xp.empty((batch, size), dtype=gi.dtype)
        h, c = h0, c0
        # NOTE: every kernel writes into preallocated buffers (this loop is the layer's forward)
        with np.errstate(over="ignore"):  # _sigmoid_into's exp(-x) may overflow to inf
            for t in range(steps - 1, -1, -1) if reverse else range(steps):
                xp.matmul(h, w_hh_t, out=pre)
                pre += gi[t]
                act = gates[t]
                _sigmoid_into(xp, pre, act)
                xp.tanh(pre[:, 2 * size:3 * size], out=act[:, 2 * size:3 * size])
                xp.multiply(act[:, :size], act[:, 2 * size:3 * size], out=tmp)
                c = xp.multiply(act[:, size:2 * size], c, out=cs[t])
                c += tmp  # c' = f * c + i * g
                h = xp.multiply(act[:, 3 * size:], xp.tanh(c, out=tmp), out=hs[t])
        return hs, cs, gates

    @staticmethod
    def backward(grads, h0, c0, w_hh_t, hs, cs, gates, *, reverse, needs_input_grad):
        if primitive._state.enabled:  # recording (create_graph): the formula on Tensors
            return _lstm_backward(_TENSOR_MATH, grads, h0, c0, w_hh_t, hs, cs, gates, reverse,
                                  needs_input_grad[3])
        arrays = [None if g is None else g._array for g in grads]
        out = LSTMLayer.backward_np(arrays, h0._array, c0._array, w_hh_t._array, hs._array,
                                    cs._array, gates._array, reverse=reverse,
                                    needs_input_grad=needs_input_grad)
        return tuple(None if a is None else primitive._make(a) for a in out)

    @staticmethod
    def backward_np(grads, h0, c0, w_hh_t, hs, cs, gates, *, reverse, needs_input_grad):
        if type(hs) is not np.ndarray or any(type(g) not in (np.ndarray, type(None)) for g in grads):
            return _lstm_backward(_ARRAY_MATH, list(grads), h0, c0, w_hh_t, hs, cs, gates, reverse,
                                  needs_input_grad[3])
        return _lstm_backward_arrays(list(grads), h0, c0, w_hh_t, hs, cs, gates, reverse,
                                     needs_input_grad[3])


def _sigmoid_into(xp, x, out):
    """``out[...] = 1 / (1 + exp(-x))`` in place, four passes and no temporaries (PyTorch's own
    formula; accurate for every x: where exp(-x) overflows, 1 / inf is the limit 0, and the
    caller silences that overflow once per layer)."""
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1
    xp.reciprocal(out, out=out)


class _ARRAY_MATH:
    tanh = staticmethod(np.tanh)

    @staticmethod
    def cat(parts, dim):
        return np.concatenate(parts, dim)

    @staticmethod
    def zeros_like(x):
        return np.zeros(x.shape, dtype=x.dtype)

    @staticmethod
    def steps_like(x):
        return np.empty(x.shape, dtype=x.dtype)  # filled step by step

    @staticmethod
    def slope(gates, size):
        out = gates * (1 - gates)
        g = gates[..., 2 * size:3 * size]
        out[..., 2 * size:3 * size] = 1 - g * g
        return out

    @staticmethod
    def transpose(w):
        return np.ascontiguousarray(w.T)  # NOTE: BLAS is faster on a contiguous operand

    @staticmethod
    def finish(steps):
        return steps


class _TENSOR_MATH:
    tanh = staticmethod(tanh)
    cat = staticmethod(cat)

    @staticmethod
    def zeros_like(x):
        return primitive._make(np.zeros(x._array.shape, dtype=x._array.dtype))

    @staticmethod
    def steps_like(x):
        return [None] * x.shape[0]

    @staticmethod
    def slope(gates, size):
        i, f = gates[..., :size], gates[..., size:2 * size]
        g, o = gates[..., 2 * size:3 * size], gates[..., 3 * size:]
        return cat([i * (1 - i), f * (1 - f), 1 - g * g, o * (1 - o)], 2)

    @staticmethod
    def transpose(w):
        return w.T

    @staticmethod
    def finish(steps):
        return stack(steps, 0)


def _lstm_backward(m, grads, h0, c0, w_hh_t, hs, cs, gates, reverse, need_weight):
    """Gradients for (gi, h0, c0, w_hh_t) from those of (hs, cs, gates); arrays or Tensors.

    Everything that does not depend on the carried gradients is computed for all steps at once;
    the loop over steps is what the recurrence leaves: ~10 kernels and one GEMM per step."""
    grad_hs, grad_cs, grad_gates = grads
    steps, _, size = hs.shape
    if grad_hs is None:
        grad_hs = m.zeros_like(hs)
    i, f = gates[..., :size], gates[..., size:2 * size]
    g, o = gates[..., 2 * size:3 * size], gates[..., 3 * size:]
    tc = m.tanh(cs)
    dc_from_h = o * (1 - tc * tc)
    slope = m.slope(gates, size)  # d activation / d pre-activation of every gate and step
    c_prev = m.cat([cs[1:], c0[None]], 0) if reverse else m.cat([c0[None], cs[:-1]], 0)
    w_t = m.transpose(w_hh_t)
    d_pre = m.steps_like(gates)
    dh_next = dc_next = None
    for t in range(steps) if reverse else range(steps - 1, -1, -1):
        dh = grad_hs[t] if dh_next is None else grad_hs[t] + dh_next
        dc = dh * dc_from_h[t]
        if dc_next is not None:
            dc = dc + dc_next
        if grad_cs is not None:
            dc = dc + grad_cs[t]
        d_act = m.cat([dc * g[t], dc * c_prev[t], dc * i[t], dh * tc[t]], 1)
        if grad_gates is not None:
            d_act = d_act + grad_gates[t]
        d_pre[t] = d_pre_t = d_act * slope[t]
        dc_next = dc * f[t]
        dh_next = d_pre_t @ w_t
    grad_gi = m.finish(d_pre)
    grad_w = None
    if need_weight:
        h_prev = m.cat([hs[1:], h0[None]], 0) if reverse else m.cat([h0[None], hs[:-1]], 0)
        flat = grad_gi.reshape(steps * grad_gi.shape[1], 4 * size)
        grad_w = h_prev.reshape(flat.shape[0], size).T @ flat
    return grad_gi, dh_next, dc_next, grad_w


def _lstm_backward_arrays(grads, h0, c0, w_hh_t, hs, cs, gates, reverse, need_weight):
    """``_lstm_backward`` on plain arrays with every step's kernels writing into preallocated
    buffers (no per-step allocation or concatenation): the same formula, term for term, in the
    same order (tests/test_nn_rnn.py compares it with the Tensor form and with torch)."""
    grad_hs, grad_cs, grad_gates = grads
    steps, batch, size = hs.shape
    dtype = hs.dtype
    i, f = gates[..., :size], gates[..., size:2 * size]
    g, o = gates[..., 2 * size:3 * size], gates[..., 3 * size:]
    tc = np.tanh(cs)
    dc_from_h = o * (1 - tc * tc)
    slope = _ARRAY_MATH.slope(gates, size)
    c_prev = np.concatenate([cs[1:], c0[None]], 0) if reverse else \
        np.concatenate([c0[None], cs[:-1]], 0)
    w_t = np.ascontiguousarray(w_hh_t.T)
    d_pre = np.empty(gates.shape, dtype=dtype)
    dh = np.empty((batch, size), dtype=dtype)
    dc = np.empty((batch, size), dtype=dtype)
    dh_next = dc_next = None
    for t in range(steps) if reverse else range(steps - 1, -1, -1):
        if grad_hs is None:
            if dh_next is None:
                dh.fill(0)
            else:
                dh[...] = dh_next
        elif dh_next is None:
            dh[...] = grad_hs[t]
        else:
            np.add(grad_hs[t], dh_next, out=dh)
        np.multiply(dh, dc_from_h[t], out=dc)
        if dc_next is not None:
            dc += dc_next
        if grad_cs is not None:
            dc += grad_cs[t]
        d_act = d_pre[t]
        np.multiply(dc, g[t], out=d_act[:, :size])
        np.multiply(dc, c_prev[t], out=d_act[:, size:2 * size])
        np.multiply(dc, i[t], out=d_act[:, 2 * size:3 * size])
        np.multiply(dh, tc[t], out=d_act[:, 3 * size:])
        if grad_gates is not None:
            d_act += grad_gates[t]
        d_act *= slope[t]
        dc_next = np.multiply(dc, f[t], out=dc_next)
        dh_next = np.matmul(d_act, w_t, out=dh_next)
    grad_w = None
    if need_weight:
        h_prev = np.concatenate([hs[1:], h0[None]], 0) if reverse else \
            np.concatenate([h0[None], hs[:-1]], 0)
        flat = d_pre.reshape(steps * batch, 4 * size)
        grad_w = h_prev.reshape(flat.shape[0], size).T @ flat
    return d_pre, dh_next, dc_next, grad_w


def lstm_layer(gi, h0, c0, w_hh_t, reverse: bool = False):
    """``(hs, (h_n, c_n))`` of one LSTM layer and direction through ``LSTMLayer``, or None when
    the fused op does not apply (no steps, or arrays that are not float32/float64 ndarrays)."""
    arrays = (gi._array, h0._array, c0._array, w_hh_t._array)
    if gi._array.shape[0] == 0 or any(
        type(a) is not np.ndarray or a.dtype != gi._array.dtype or a.dtype.char not in "fd"
        for a in arrays
    ):
        return None
    hs, cs, _ = LSTMLayer.apply(gi, h0, c0, w_hh_t, reverse=reverse)
    last = 0 if reverse else -1
    return hs, (hs[last], cs[last])


def time_steps(x) -> tuple:
    """``x[0], x[1], ...`` along dim 0: one ``Unbind`` op for a plain array (one gradient op in
    backward), else one index op per step."""
    if type(x._array) is np.ndarray and x._array.ndim and x._array.shape[0]:
        return Unbind.apply(x)
    return tuple(x[t] for t in range(x.shape[0]))
