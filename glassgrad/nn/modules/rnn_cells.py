"""Recurrent cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and the one-step update each computes.

The step functions below are the whole mathematics of recurrence; the multi-step layers in
``rnn.py`` call the same functions, so a cell and a layer with copied weights agree exactly.
Everything is composed from existing ops (matmul, sigmoid, tanh, slicing): no derivative code,
so gradients of any order come from the primitives.

NOTE [Step signature]: ``step(gi, state, w_hh_t, b_hh, w_hr_t) -> state``. ``gi`` is the input
projection ``x @ W_ih^T + b_ih`` of shape ``(B, G)`` (computed for all steps at once by the layers);
``state`` is ``(h,)`` or ``(h, c)``; ``w_hh_t`` is ``W_hh^T``; ``b_hh`` may be None when the caller
has folded it into ``gi`` (allowed for RNN and LSTM, not for GRU where ``b_hn`` sits inside
``r * (...)``); ``w_hr_t`` is the LSTM projection's ``W_hr^T`` or None.
"""

from __future__ import annotations

import math

from ..._factories import empty, zeros
from ...autograd.grad_mode import no_grad
from ...ops.elementwise import relu, sigmoid, tanh
from ...ops.linalg import matmul
from ..module import Module
from ..parameter import Parameter

__all__ = ["GRUCell", "LSTMCell", "RNNCell", "RNNCellBase"]


def linear(x, weight_t, bias):
    """``x @ weight_t + bias`` with a pre-transposed weight ``(in, out)``; bias may be None."""
    if x.dim() > 2:
        # NOTE: one 2-D GEMM over all leading dims, not a batched matmul whose weight gradient
        # would materialise one (in, out) slab per leading index before the engine sums them
        lead = tuple(x.shape[:-1])
        out = matmul(x.reshape(-1, x.shape[-1]), weight_t).reshape(*lead, weight_t.shape[-1])
    else:
        out = matmul(x, weight_t)
    return out if bias is None else out + bias


def rnn_tanh_step(gi, state, w_hh_t, b_hh, w_hr_t=None):
    """Elman step: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``."""
    return (tanh(gi + linear(state[0], w_hh_t, b_hh)),)


def rnn_relu_step(gi, state, w_hh_t, b_hh, w_hr_t=None):
    """Elman step with ReLU: ``h' = relu(W_ih x + b_ih + W_hh h + b_hh)``."""
    return (relu(gi + linear(state[0], w_hh_t, b_hh)),)


def lstm_step(gi, state, w_hh_t, b_hh, w_hr_t=None):
    """LSTM step, gates in PyTorch's order (i, f, g, o); ``h' = W_hr h'`` with a projection."""
    h, c = state
    gates = gi + linear(h, w_hh_t, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    if w_hr_t is not None:
        h = matmul(h, w_hr_t)
    return h, c


def gru_step(gi, state, w_hh_t, b_hh, w_hr_t=None):
    """GRU step, gates (r, z, n): ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h`` (computed as ``n + z * (h - n)``, as ATen does)."""
    h = state[0]
    gh = linear(h, w_hh_t, b_hh)
    size = h.shape[-1]
    # r and z share one add and one sigmoid over the first 2H columns
    rz = sigmoid(gi[..., : 2 * size] + gh[..., : 2 * size])
    r, z = rz[..., :size], rz[..., size:]
    n = tanh(gi[..., 2 * size:] + r * gh[..., 2 * size:])
    return (n + z * (h - n),)


def uniform_reset(module, hidden_size: int) -> None:
    """PyTorch's RNN init: every parameter from ``U(-1/sqrt(hidden), 1/sqrt(hidden))``."""
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    with no_grad():
        for weight in module.parameters():
            weight.uniform_(-stdv, stdv)


class RNNCellBase(Module):
    """Shared parameters of the cells: ``weight_ih (chunks*H, H_in)``, ``weight_hh (chunks*H, H)``,
    ``bias_ih``, ``bias_hh (chunks*H,)`` (``torch.nn.RNNCellBase``)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        uniform_reset(self, self.hidden_size)

    def _prepare(self, input, hx, n_states: int):
        """Checks like ATen's; unbatched input gets a batch dim; a missing state becomes zeros.
        Returns (input (B, H_in), states, is_batched)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = None if hx is None else (tuple(hx) if n_states == 2 else (hx,))
        if states is not None:
            for k, s in enumerate(states):
                if s.dim() not in (1, 2):
                    what = f"hx[{k}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected "
                f"{self.input_size}\nglassgrad: {name} was built with input_size="
                f"{self.input_size}; the input has shape {list(input.shape)}."
            )
        if states is None:
            zero = zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
            return input, (zero,) * n_states, is_batched
        if not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        for k, s in enumerate(states):
            if s.shape[0] != input.shape[0]:
                raise RuntimeError(
                    f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size "
                    f"{s.shape[0]}"
                )
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, expected "
                    f"{self.hidden_size}"
                )
        return input, states, is_batched

    def _cell(self, step, input, states):
        gi = linear(input, self.weight_ih.t(), self.bias_ih)
        return step(gi, states, self.weight_hh.t(), self.bias_hh)


class RNNCell(RNNCellBase):
    """An Elman cell ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or ReLU) (``torch.nn.RNNCell``).

    Input ``(N, H_in)`` or ``(H_in,)``, hidden ``(N, H)`` or ``(H,)`` (zeros when omitted); returns
    ``h'`` of the hidden's shape. Parameters as ``RNNCellBase`` with one chunk, initialised from
    ``U(-1/sqrt(H), 1/sqrt(H))``. Raises ValueError for inputs that are not 1-D/2-D and
    RuntimeError for mismatched sizes.

    Example::

        >>> cell = glassgrad.nn.RNNCell(10, 20)
        >>> h = cell(glassgrad.randn(3, 10))  # (3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity == "tanh":
            step = rnn_tanh_step
        elif self.nonlinearity == "relu":
            step = rnn_relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, states, is_batched = self._prepare(input, hx, 1)
        (h,) = self._cell(step, input, states)
        return h if is_batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell (``torch.nn.LSTMCell``): gates i, f, g, o from
    ``W_ih x + b_ih + W_hh h + b_hh``; ``c' = f*c + i*g``, ``h' = o*tanh(c')``.

    Input ``(N, H_in)`` or ``(H_in,)``; ``hx = (h, c)`` each ``(N, H)`` or ``(H,)`` (zeros when
    omitted); returns ``(h', c')``. ``weight_ih`` is ``(4H, H_in)``, ``weight_hh`` ``(4H, H)``.

    Example::

        >>> cell = glassgrad.nn.LSTMCell(10, 20)
        >>> h, c = cell(glassgrad.randn(3, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, states, is_batched = self._prepare(input, hx, 2)
        h, c = self._cell(lstm_step, input, states)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell (``torch.nn.GRUCell``): gates r, z, n with
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = (1 - z) * n + z * h``.

    Input ``(N, H_in)`` or ``(H_in,)``, hidden ``(N, H)`` or ``(H,)`` (zeros when omitted); returns
    ``h'``. ``weight_ih`` is ``(3H, H_in)``, ``weight_hh`` ``(3H, H)``.

    Example::

        >>> cell = glassgrad.nn.GRUCell(10, 20)
        >>> h = cell(glassgrad.randn(3, 10))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, states, is_batched = self._prepare(input, hx, 1)
        (h,) = self._cell(gru_step, input, states)
        return h if is_batched else h.squeeze(0)
