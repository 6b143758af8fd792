"""torch's flat-weight recurrent functions (issue 16, lane embed): ``torch.lstm``, ``torch.gru``,
``torch.rnn_tanh``, ``torch.rnn_relu`` in both of ATen's overloads, padded
``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)`` and
packed ``(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``,
and the one-step cells ``torch.lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``
``(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)``.

They run the same step functions and layer loop as ``nn.RNN``/``LSTM``/``GRU`` and their cells
(``nn/modules/rnn.py``, ``rnn_cells.py``), so a module and these functions with the same weights
agree exactly; gradients of any order come from the composed ops."""

from __future__ import annotations

import numpy as np

from ._arg_check import _type_name
from ._nn_top import _tensor_args
from .nn.modules.rnn import run_layers
from .nn.modules.rnn_cells import gru_step, linear, lstm_step, rnn_relu_step, rnn_tanh_step
from .tensor import Tensor

__all__ = ["gru", "gru_cell", "lstm", "lstm_cell", "rnn_relu", "rnn_relu_cell", "rnn_tanh",
           "rnn_tanh_cell"]

_PADDED = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
           "bidirectional", "batch_first")
_PACKED = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout", "train",
           "bidirectional")
_SIGNATURES = {False: "(Tensor input, {hx} hx, tuple of Tensors params, bool has_biases, int "
                      "num_layers, float dropout, bool train, bool bidirectional, bool batch_first)",
               True: "(Tensor data, Tensor batch_sizes, {hx} hx, tuple of Tensors params, bool "
                     "has_biases, int num_layers, float dropout, bool train, bool bidirectional)"}


def _tensor_list(value, position: int) -> None:
    """torch's TypeError for a non-Tensor in a ``tuple of Tensors`` argument (0-based position)."""
    for j, item in enumerate(value):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {j} in argument {position}, but got "
                            f"{_type_name(item)}")


def _check_types(name: str, a: dict, packed: bool, lstm_mode: bool) -> None:
    """torch's argument parser on the Tensor arguments: a value of the wrong kind matches neither
    overload ("invalid combination of arguments"), then each list's elements must be Tensors."""
    seq = (list, tuple)
    fits = isinstance(a["data" if packed else "input"], Tensor) and isinstance(a["params"], seq)
    fits = fits and isinstance(a["hx"], seq if lstm_mode else Tensor)
    # its bool takes a Python bool only, its int any integer but a bool
    flags = ("has_biases", "train", "bidirectional") + (() if packed else ("batch_first",))
    fits = fits and all(type(a[f]) is bool for f in flags) and isinstance(
        a["num_layers"], (int, np.integer)) and not isinstance(a["num_layers"], bool)
    fits = fits and isinstance(a["dropout"], (int, float, np.number, Tensor))
    if not fits or packed and not isinstance(a["batch_sizes"], Tensor):
        names = _PACKED if packed else _PADDED
        got = ", ".join("Tensor" if isinstance(a[n], Tensor) else _type_name(a[n]) for n in names)
        hx = "tuple of Tensors" if lstm_mode else "Tensor"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * {_SIGNATURES[True].format(hx=hx)}\n * {_SIGNATURES[False].format(hx=hx)}"
            f"\nglassgrad: convert the values with glassgrad.tensor(value) first")
    if lstm_mode:
        _tensor_list(a["hx"], 1 + packed)
    _tensor_list(a["params"], 2 + packed)


def _check_batch_sizes(batch_sizes, n: int) -> None:
    """ATen narrows the packed data one time step at a time: its errors for a negative batch size
    or one that runs past the data, at the first such step."""
    start = 0
    for length in batch_sizes.tolist():
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.\nglassgrad: packed "
                               f"batch_sizes {batch_sizes.tolist()} holds a negative size")
        if start + length > n:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n})."
                               f"\nglassgrad: packed batch_sizes {batch_sizes.tolist()} add up to "
                               f"more than the data's {n} rows")
        start += length


def _bind(name: str, args: tuple, kwargs: dict) -> dict:
    """The arguments of whichever overload the call names: the packed one has ``params`` (a list)
    fourth, where the padded one has ``has_biases``."""
    packed = "batch_sizes" in kwargs or "data" in kwargs or (
        len(args) > 3 and isinstance(args[3], (list, tuple)))
    names = _PACKED if packed else _PADDED
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} arguments but {len(args)} were given")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in bound:
            raise TypeError(f"{name}() got an unexpected or repeated argument '{key}'")
        bound[key] = value
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"{name}() missing required argument '{missing[0]}'\nglassgrad: its "
                        f"signature is {name}({', '.join(names)})")
    return bound


def _layers(mode: str, name: str, args: tuple, kwargs: dict):
    """The stacked recurrence behind ``torch.lstm``/``gru``/``rnn_*``: (output, final states)."""
    a = _bind(name, args, kwargs)
    packed = "data" in a
    x = a["data"] if packed else a["input"]
    lstm_mode = mode == "LSTM"
    _check_types(name, a, packed, lstm_mode)
    if lstm_mode:
        states = tuple(a["hx"])
        if len(states) != 2:
            raise RuntimeError("lstm expects two hidden states")
    else:
        states = (a["hx"],)
    want = 2 if packed else 3
    if x.dim() != want:
        raise RuntimeError(f"input must have {want} dimensions, got {x.dim()}\nglassgrad: {name} "
                           f"takes {'packed data (sum(lengths), F)' if packed else '(T, B, F)'}")
    bidirectional, num_layers = bool(a["bidirectional"]), int(a["num_layers"])
    has_biases = bool(a["has_biases"])
    proj = lstm_mode and states[0].shape[-1] != states[1].shape[-1]
    stride = 2 + 2 * has_biases + proj
    params = list(a["params"])
    groups = num_layers * (2 if bidirectional else 1)
    if len(params) % stride:
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by stride "
                           f"{stride}\nglassgrad: each layer and direction of {name} takes "
                           f"[w_ih, w_hh{', b_ih, b_hh' if has_biases else ''}"
                           f"{', w_hr' if proj else ''}]")
    if len(params) != stride * groups:
        raise RuntimeError(f"{name}: expected {stride * groups} parameters ({stride} for each of "
                           f"{groups} layers and directions), got {len(params)}")
    weights = [params[k * stride:(k + 1) * stride] for k in range(groups)]
    batch_first = not packed and bool(a["batch_first"])
    if batch_first:
        x = x.transpose(0, 1)
    batch_sizes = a["batch_sizes"]._array if packed else None
    if packed:
        _check_batch_sizes(batch_sizes.reshape(-1), x.shape[0])
    batch = int(batch_sizes[0]) if packed else x.shape[1]
    for k, s in enumerate(states):
        size = s.shape[-1]
        if s.dim() != 3 or tuple(s.shape[:2]) != (groups, batch):
            raise RuntimeError(f"Expected hidden{f'[{k}]' if lstm_mode else ''} size "
                               f"{(groups, batch, size)}, got {list(s.shape)}")
    dropout = float(a["dropout"])
    output, finals = run_layers(mode, x, states, weights, has_biases, proj, num_layers,
                                bidirectional, dropout, bool(a["train"]), batch_sizes)
    if batch_first:
        output = output.transpose(0, 1)
    return (output,) + finals


def lstm(*args, **kwargs):
    """``torch.lstm``: a multi-layer LSTM on flat weights -> ``(output, h_n, c_n)``.

    Padded: ``lstm(input (T, B, F) or (B, T, F), hx=[h_0, c_0], params, has_biases, num_layers,
    dropout, train, bidirectional, batch_first)``; packed: ``lstm(data (N, F), batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional)`` with data sorted as in a
    ``PackedSequence``. ``params`` lists ``w_ih, w_hh, (b_ih, b_hh), (w_hr)`` per layer and
    direction (``nn.LSTM._flat_weights``); a projection is inferred from ``h_0``'s size.
    RuntimeError for a wrong number of states or parameters, or mismatched sizes.
    """
    return _layers("LSTM", "lstm", args, kwargs)


def gru(*args, **kwargs):
    """``torch.gru``: a multi-layer GRU on flat weights -> ``(output, h_n)``; the overloads and
    ``params`` of ``lstm`` with ``hx`` one tensor ``(layers * directions, B, H)``."""
    return _layers("GRU", "gru", args, kwargs)


def rnn_tanh(*args, **kwargs):
    """``torch.rnn_tanh``: a multi-layer Elman RNN (tanh) on flat weights -> ``(output, h_n)``;
    arguments as ``gru``."""
    return _layers("RNN_TANH", "rnn_tanh", args, kwargs)


def rnn_relu(*args, **kwargs):
    """``torch.rnn_relu``: a multi-layer Elman RNN (ReLU) on flat weights -> ``(output, h_n)``;
    arguments as ``gru``."""
    return _layers("RNN_RELU", "rnn_relu", args, kwargs)


def _cell(step, name: str, gates: int, input, states, w_ih, w_hh, b_ih, b_hh):
    """ATen's cell checks, then one step of ``step``."""
    _tensor_args(name, input=(1, input), w_ih=(3, w_ih), w_hh=(4, w_hh), b_ih=(5, b_ih),
                 b_hh=(6, b_hh))
    if len(states) == 1:
        _tensor_args(name, hx=(2, states[0]))
    else:
        _tensor_list(states, 1)
    if not isinstance(input, Tensor) or input.dim() != 2:
        got = input.dim() if isinstance(input, Tensor) else 0
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(got, 1)}, "
                         f"{max(got, 1) - 1}], but got 1)\nglassgrad: {name} takes a batched "
                         f"(B, input_size) input; got {got}-D")
    hidden = w_hh.shape[1]
    if w_ih.shape[0] != gates * hidden:
        raise RuntimeError(f"weight_ih first dim must be {gates} * hidden_size = "
                           f"{gates * hidden}, but got {w_ih.shape[0]}")
    if w_hh.shape[0] != gates * hidden:
        raise RuntimeError(f"weight_hh first dim must be {gates} * hidden_size = "
                           f"{gates * hidden}, but got {w_hh.shape[0]}")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    for k, s in enumerate(states):
        if s.dim() != 2 or s.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} batch "
                               f"size {s.shape[0] if s.dim() else 0}")
        if s.shape[1] != hidden:
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.shape[1]}, "
                               f"expected {hidden}")
    gi = linear(input, w_ih.t(), b_ih)
    return step(gi, states, w_hh.t(), b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.lstm_cell``: one LSTM step, ``input (B, F)``, ``hx = [h (B, H), c (B, H)]``,
    ``w_ih (4H, F)``, ``w_hh (4H, H)``, biases ``(4H,)`` or None -> ``(h', c')``. RuntimeError for
    inconsistent sizes (ATen's text)."""
    if not isinstance(hx, (list, tuple)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                        f"{'Tensor' if isinstance(hx, Tensor) else _type_name(hx)}")
    states = tuple(hx)
    if len(states) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    return _cell(lstm_step, "lstm_cell", 4, input, states, w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.gru_cell``: one GRU step (gates r, z, n) -> ``h' (B, H)``; weights ``(3H, *)``."""
    return _cell(gru_step, "gru_cell", 3, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_tanh_cell``: ``tanh(input @ w_ih^T + b_ih + hx @ w_hh^T + b_hh)``."""
    return _cell(rnn_tanh_step, "rnn_tanh_cell", 1, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_relu_cell``: ``relu(input @ w_ih^T + b_ih + hx @ w_hh^T + b_hh)``."""
    return _cell(rnn_relu_step, "rnn_relu_cell", 1, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]
