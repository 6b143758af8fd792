"""``nn.LSTM`` as ONNX LSTM nodes, one per layer (both directions in one node)."""

from __future__ import annotations

import numpy as np

from ._patches import patch
from .tracer import unsupported

# PyTorch's gate blocks are (i, f, g, o); ONNX's are (i, o, f, c)
_ONNX_GATES = (0, 3, 1, 2)


def _gates(arr, hidden: int):
    blocks = [arr[k * hidden:(k + 1) * hidden] for k in _ONNX_GATES]
    return np.concatenate(blocks, axis=0)


@patch("class:glassgrad.nn.modules.rnn.LSTM", "forward")
def _lstm(tracer, args, kwargs, result):
    from ..tensor import Tensor

    lstm, input = args[0], args[1]
    hx = args[2] if len(args) > 2 else kwargs.get("hx")
    g = tracer.g
    if not isinstance(input, Tensor) or input.ndim != 3 or lstm.proj_size:
        raise unsupported("lstm", [input] if isinstance(input, Tensor) else [], g.opset,
                          "packed sequences, unbatched input or proj_size")
    hidden, dirs = lstm.hidden_size, 2 if lstm.bidirectional else 1
    x = tracer.value(input)
    if lstm.batch_first:
        x = g.op("Transpose", x, perm=[1, 0, 2])
    states = [tracer.value(s) for s in hx] if hx is not None else None
    finals_h, finals_c = [], []
    for layer in range(lstm.num_layers):
        w, r, b = [], [], []
        for d in range(dirs):
            names = lstm._all_weights[layer * dirs + d]
            params = [getattr(lstm, n)._array for n in names]
            w.append(_gates(params[0], hidden))
            r.append(_gates(params[1], hidden))
            if lstm.bias:
                b.append(np.concatenate([_gates(params[2], hidden), _gates(params[3], hidden)]))
            else:
                b.append(np.zeros(8 * hidden, params[0].dtype))
        inits = ["", ""]
        if states is not None:
            lo, hi = g.ints([layer * dirs]), g.ints([(layer + 1) * dirs])
            inits = [g.op("Slice", s, lo, hi, g.ints([0])) for s in states]
        y, y_h, y_c = g.op(
            "LSTM", x, g.initializer(np.stack(w)), g.initializer(np.stack(r)),
            g.initializer(np.stack(b)), "", *inits, outputs=3, hidden_size=hidden,
            direction="bidirectional" if dirs == 2 else "forward")
        finals_h.append(y_h)
        finals_c.append(y_c)
        # Y is (T, D, N, H): the next layer's input is (T, N, D * H)
        y = g.op("Transpose", y, perm=[0, 2, 1, 3])
        x = g.op("Reshape", y, g.ints([0, 0, -1]))
    out = g.op("Transpose", x, perm=[1, 0, 2]) if lstm.batch_first else x
    h_n = finals_h[0] if len(finals_h) == 1 else g.op("Concat", *finals_h, axis=0)
    c_n = finals_c[0] if len(finals_c) == 1 else g.op("Concat", *finals_c, axis=0)
    return out, h_n, c_n
