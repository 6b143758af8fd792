"""``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` as ONNX LSTM, GRU and RNN nodes, one per layer (both
directions in one node), so the sequence length stays a dimension of the file, not a loop."""

from __future__ import annotations

import numpy as np

from ._patches import patch
from .tracer import unsupported

# ONNX's gate blocks, as positions in PyTorch's: LSTM (i, f, g, o) -> (i, o, f, c);
# GRU (r, z, n) -> (z, r, h), with linear_before_reset=1 as PyTorch's r * (W_hn h + b_hn)
_GATES = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN_TANH": (0,), "RNN_RELU": (0,)}


def _gates(arr, hidden: int, order):
    return np.concatenate([arr[k * hidden:(k + 1) * hidden] for k in order], axis=0)


def _layer_weights(rnn, layer: int, dirs: int):
    """W, R, B of one layer in ONNX's layout: (D, G*H, in), (D, G*H, H), (D, 2*G*H)."""
    hidden, order = rnn.hidden_size, _GATES[rnn.mode]
    w, r, b = [], [], []
    for d in range(dirs):
        params = [getattr(rnn, n)._array for n in rnn._all_weights[layer * dirs + d]]
        w.append(_gates(params[0], hidden, order))
        r.append(_gates(params[1], hidden, order))
        if rnn.bias:
            b.append(np.concatenate([_gates(params[2], hidden, order),
                                     _gates(params[3], hidden, order)]))
        else:
            b.append(np.zeros(2 * len(order) * hidden, params[0].dtype))
    return np.stack(w), np.stack(r), np.stack(b)


def _node_attrs(rnn, dirs: int) -> dict:
    attrs = {"hidden_size": rnn.hidden_size,
             "direction": "bidirectional" if dirs == 2 else "forward"}
    if rnn.mode == "GRU":
        attrs["linear_before_reset"] = 1
    elif rnn.mode != "LSTM":
        attrs["activations"] = ["Tanh" if rnn.mode == "RNN_TANH" else "Relu"] * dirs
    return attrs


def _recurrent(tracer, args, kwargs, result):
    from ..tensor import Tensor

    rnn, input = args[0], args[1]
    hx = args[2] if len(args) > 2 else kwargs.get("hx")
    g = tracer.g
    if not isinstance(input, Tensor) or input.ndim != 3 or getattr(rnn, "proj_size", 0):
        raise unsupported(rnn.mode.lower(), [input] if isinstance(input, Tensor) else [],
                          g.opset, "packed sequences, unbatched input or proj_size")
    dirs = 2 if rnn.bidirectional else 1
    n_states = 2 if rnn.mode == "LSTM" else 1
    x = tracer.value(input)
    if rnn.batch_first:
        x = g.op("Transpose", x, perm=[1, 0, 2])
    states = None
    if hx is not None:
        states = [tracer.value(s) for s in (hx if n_states == 2 else (hx,))]
    finals = [[] for _ in range(n_states)]
    for layer in range(rnn.num_layers):
        w, r, b = _layer_weights(rnn, layer, dirs)
        inits = [""] * n_states
        if states is not None:
            lo, hi = g.ints([layer * dirs]), g.ints([(layer + 1) * dirs])
            inits = [g.op("Slice", s, lo, hi, g.ints([0])) for s in states]
        op_type = "RNN" if rnn.mode.startswith("RNN") else rnn.mode
        outs = g.op(op_type, x, g.initializer(w), g.initializer(r), g.initializer(b), "", *inits,
                    outputs=1 + n_states, **_node_attrs(rnn, dirs))
        for k in range(n_states):
            finals[k].append(outs[1 + k])
        # Y is (T, D, N, H): the next layer's input is (T, N, D * H)
        y = g.op("Transpose", outs[0], perm=[0, 2, 1, 3])
        x = g.op("Reshape", y, g.ints([0, 0, -1]))
    out = g.op("Transpose", x, perm=[1, 0, 2]) if rnn.batch_first else x
    return (out, *[f[0] if len(f) == 1 else g.op("Concat", *f, axis=0) for f in finals])


for _cls in ("LSTM", "GRU", "RNN"):
    patch(f"class:glassgrad.nn.modules.rnn.{_cls}", "forward")(_recurrent)
