"""Multi-layer recurrent layers: ``RNN``, ``LSTM``, ``GRU`` (``torch.nn.RNN`` ...).

A layer is a Python loop over time steps of the cell steps in ``rnn_cells.py``: define-by-run,
so each call records a graph as long as its input. Per layer and direction the input projection
``x @ W_ih^T + b_ih`` of all steps is one matmul; each step then adds ``h @ W_hh^T`` and applies
the gates.

NOTE [Packed recurrence]: with a ``PackedSequence`` (NOTE [Packed layout] in
``nn/utils/rnn.py``) step ``t`` only runs the first ``batch_sizes[t]`` sequences. Going forward
in time the batch shrinks: the rows that leave are each sequence's final state and are kept
aside, so ``h_n`` is every sequence's state at its own last step. Going backward in time the
batch grows: the rows that join start from the initial state. ``h_n`` is then put back in the
caller's batch order with ``unsorted_indices``.
"""

from __future__ import annotations

import numbers

from ..._factories import empty, zeros
from ...ops.indexing import index_select
from ...ops.rnn_fused import lstm_layer, time_steps
from ...ops.shape import cat, stack
from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .rnn_cells import (
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNCellBase,
    gru_step,
    linear,
    lstm_step,
    rnn_relu_step,
    rnn_tanh_step,
    uniform_reset,
)
from ..._user_warning import warn_user

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step,
          "GRU": gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """Parameters, checks and the time loop shared by ``RNN``, ``LSTM`` and ``GRU``
    (``torch.nn.RNNBase``). Parameter names are PyTorch's: ``weight_ih_l{k}``, ``weight_hh_l{k}``,
    ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}`` (LSTM projection), with a ``_reverse``
    suffix for the backward direction."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                    proj_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {"weight_ih": (gate_size, layer_input_size),
                          "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    setattr(self, kind + suffix, Parameter(empty(*shape, dtype=dtype)))
                    names.append(kind + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters grouped per layer and direction (``torch.nn.RNNBase.all_weights``)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """No-op: there is no cuDNN weight buffer to compact on NumPy."""

    def reset_parameters(self) -> None:
        uniform_reset(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --- forward --------------------------------------------------------------------------
    def _state_sizes(self) -> tuple:
        """Feature size of each state tensor: (H,) or, for LSTM, (H_out, H)."""
        h_out = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (h_out, self.hidden_size) if self.mode == "LSTM" else (h_out,)

    def _forward(self, input, hx):
        """The shared forward: returns (output, tuple of final states)."""
        n_states = len(self._state_sizes())
        layers = self.num_layers * (2 if self.bidirectional else 1)
        packed = isinstance(input, PackedSequence)
        if packed:
            x, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = batch_sizes_t._array
            batch = int(batch_sizes[0])
            is_batched = True
        else:
            batch_sizes = sorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(_DIM_ERRORS[self.mode].format(input.dim()))
            is_batched = input.dim() == 3
            if not is_batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            x = input.transpose(0, 1) if self.batch_first else input
            batch = x.shape[1]
        if hx is None:
            states = tuple(zeros(layers, batch, size, dtype=x.dtype)
                           for size in self._state_sizes())
        else:
            states = self._check_hx(hx, n_states, is_batched)
            if packed and sorted_indices is not None:
                states = tuple(index_select(s, 1, sorted_indices) for s in states)
        self._check_input(x, packed)
        expected = [(layers, batch, size) for size in self._state_sizes()]
        for k, (s, shape) in enumerate(zip(states, expected)):
            if tuple(s.shape) != shape:
                what = "hidden" if n_states == 1 else f"hidden[{k}]"
                raise RuntimeError(f"Expected {what} size {shape}, got {list(s.shape)}")
        output, finals = self._run_layers(x, states, batch_sizes)
        if packed:
            if unsorted_indices is not None:
                finals = tuple(index_select(s, 1, unsorted_indices) for s in finals)
            return PackedSequence(output, batch_sizes_t, sorted_indices, unsorted_indices), finals
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            finals = tuple(s.squeeze(1) for s in finals)
        return output, finals

    def _check_hx(self, hx, n_states: int, is_batched: bool) -> tuple:
        states = tuple(hx) if n_states == 2 else (hx,)
        want = 3 if is_batched else 2
        if any(s.dim() != want for s in states):
            kind = "batched 3-D" if is_batched else "unbatched 2-D"
            dims = f"{want}-D"
            if n_states == 2:
                got = ", ".join(f"{s.dim()}-D" for s in states)
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {dims} but got ({got}) tensors"
                )
            raise RuntimeError(
                f"For {kind} input, hx should also be {dims} but got {states[0].dim()}-D tensor"
            )
        return states if is_batched else tuple(s.unsqueeze(1) for s in states)

    def _check_input(self, x, packed: bool) -> None:
        weight = self._flat_weights[0]
        if x.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({x.dtype}) does not match weight dtype ({weight.dtype}). "
                f"Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({x.dtype})"
            )
        expected_dim = 2 if packed else 3
        if x.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {x.dim()}")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{x.shape[-1]}"
            )

    def _run_layers(self, x, states, batch_sizes):
        """Every layer and direction in turn; returns (last layer's output, final states)."""
        weights = [[getattr(self, name) for name in names] for names in self._all_weights]
        return run_layers(self.mode, x, states, weights, self.bias, self.proj_size > 0,
                          self.num_layers, self.bidirectional, self.dropout, self.training,
                          batch_sizes)


def run_layers(mode, x, states, weights, bias, proj, num_layers, bidirectional, dropout,
               training, batch_sizes):
    """The stacked recurrence of ``RNNBase`` and ``torch.lstm``/``gru``/``rnn_*``: ``weights``
    holds each (layer, direction)'s ``[w_ih, w_hh, (b_ih, b_hh), (w_hr)]``; ``x`` is ``(T, B, F)``
    or packed data with ``batch_sizes``. Returns (last layer's output, final states stacked)."""
    step = _STEPS[mode]
    # NOTE: b_hh can join b_ih in the all-steps projection except in GRU (b_hn is inside r*)
    fold_bias = mode != "GRU"
    directions = 2 if bidirectional else 1
    finals = [[] for _ in states]
    layer_input = x
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            idx = layer * directions + direction
            out, final = _run_direction(
                step, layer_input, tuple(s[idx] for s in states), weights[idx], bias, proj,
                batch_sizes, direction == 1, fold_bias,
            )
            outputs.append(out)
            for k, s in enumerate(final):
                finals[k].append(s)
        layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
        if dropout and training and layer < num_layers - 1:
            from .. import functional as F

            layer_input = F.dropout(layer_input, dropout, True)
    return layer_input, tuple(stack(f, 0) for f in finals)


def _run_direction(step, x, state, weights, bias, proj, batch_sizes, reverse, fold_bias):
    """One layer, one direction over all time steps (NOTE [Packed recurrence])."""
    w_ih, w_hh = weights[0], weights[1]
    b_ih, b_hh = (weights[2], weights[3]) if bias else (None, None)
    w_hr_t = weights[-1].t() if proj else None
    if fold_bias and b_ih is not None:
        b_ih, b_hh = b_ih + b_hh, None
    gi = linear(x, w_ih.t(), b_ih)  # (T, B, G) padded, (sum(lengths), G) packed
    w_hh_t = w_hh.t().contiguous()  # NOTE: BLAS runs ~2x faster on a contiguous operand
    if batch_sizes is None:
        if step is lstm_step and not proj and b_hh is None:  # NOTE [Fused LSTM] in ops/rnn_fused.py
            fused = lstm_layer(gi, state[0], state[1], w_hh_t, reverse)
            if fused is not None:
                return fused
        n_steps = gi.shape[0]
        outputs = [None] * n_steps
        steps_in = time_steps(gi)
        for t in (range(n_steps - 1, -1, -1) if reverse else range(n_steps)):
            state = step(steps_in[t], state, w_hh_t, b_hh, w_hr_t)
            outputs[t] = state[0]
        return stack(outputs, 0), state
    sizes = [int(b) for b in batch_sizes]
    starts = [0] * len(sizes)
    for t in range(1, len(sizes)):
        starts[t] = starts[t - 1] + sizes[t - 1]
    outputs = [None] * len(sizes)
    if not reverse:
        done = []  # final states of sequences that ended, latest ended first at the end
        active = sizes[0]
        for t, size in enumerate(sizes):
            if size < active:
                done.append(tuple(s[size:active] for s in state))
                state = tuple(s[:size] for s in state)
                active = size
            state = step(gi[starts[t]:starts[t] + size], state, w_hh_t, b_hh, w_hr_t)
            outputs[t] = state[0]
        if done:
            pieces = [state] + done[::-1]
            state = tuple(cat([p[k] for p in pieces], 0) for k in range(len(state)))
        return cat(outputs, 0), state
    initial = state
    active = sizes[-1]
    if active < sizes[0]:
        state = tuple(s[:active] for s in initial)
    for t in range(len(sizes) - 1, -1, -1):
        size = sizes[t]
        if size > active:
            state = tuple(cat([s, s0[active:size]], 0) for s, s0 in zip(state, initial))
            active = size
        state = step(gi[starts[t]:starts[t] + size], state, w_hh_t, b_hh, w_hr_t)
        outputs[t] = state[0]
    return cat(outputs, 0), state


def _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                proj_size) -> None:
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the probability of an "
            "element being zeroed"
        )
    if dropout > 0 and num_layers == 1:
        warn_user(
            "dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
            f"expects num_layers greater than 1, but got dropout={dropout} and "
            f"num_layers={num_layers}",
            stacklevel=4,
        )
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


_DIM_ERRORS = {
    "RNN_TANH": "RNN: Expected input to be 2D or 3D, got {}D tensor instead",
    "RNN_RELU": "RNN: Expected input to be 2D or 3D, got {}D tensor instead",
    "LSTM": "LSTM: Expected input to be 2D or 3D, got {}D instead",
    "GRU": "GRU: Expected input to be 2D or 3D, got {}D instead",
}


class RNN(RNNBase):
    """A multi-layer Elman RNN, ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (or ReLU)
    (``torch.nn.RNN``).

    ``forward(input, hx=None) -> (output, h_n)``: input ``(L, N, H_in)`` (``(N, L, H_in)`` if
    batch_first), ``(L, H_in)`` unbatched, or a ``PackedSequence``; ``hx`` and ``h_n`` are
    ``(D*num_layers, N, H)``; ``output`` is ``(L, N, D*H)`` (packed in, packed out). Raises
    ValueError for an unknown nonlinearity or bad arguments, RuntimeError for mismatched sizes.

    Example::

        >>> rnn = glassgrad.nn.RNN(10, 20, num_layers=2)
        >>> output, h_n = rnn(glassgrad.randn(5, 3, 10))  # (5, 3, 20), (2, 3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None,
                 **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx: Tensor | None = None):
        output, (h_n,) = self._forward(input, hx)
        return output, h_n


class LSTM(RNNBase):
    """A multi-layer long short-term memory RNN (``torch.nn.LSTM``), gates i, f, g, o; with
    ``proj_size > 0`` each ``h_t`` is projected by ``weight_hr_l{k}`` to ``proj_size`` features.

    ``forward(input, hx=None) -> (output, (h_n, c_n))``: input as ``RNN``; ``hx = (h_0, c_0)`` with
    ``h_0`` ``(D*num_layers, N, H_out)`` and ``c_0`` ``(D*num_layers, N, H)``; ``output`` is
    ``(L, N, D*H_out)`` where ``H_out = proj_size or hidden_size``.

    Example::

        >>> lstm = glassgrad.nn.LSTM(10, 20, batch_first=True)
        >>> output, (h_n, c_n) = lstm(glassgrad.randn(3, 5, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        output, (h_n, c_n) = self._forward(input, hx)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit RNN (``torch.nn.GRU``), gates r, z, n with
    ``n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))``.

    ``forward(input, hx=None) -> (output, h_n)`` with the shapes of ``RNN``.

    Example::

        >>> gru = glassgrad.nn.GRU(10, 20, bidirectional=True)
        >>> output, h_n = gru(glassgrad.randn(5, 3, 10))  # (5, 3, 40), (2, 3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)

    def forward(self, input, hx: Tensor | None = None):
        output, (h_n,) = self._forward(input, hx)
        return output, h_n
