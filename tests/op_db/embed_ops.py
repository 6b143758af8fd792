"""Op table (issue 16, lane embed): torch's flat-weight recurrent functions (``torch.lstm``,
``gru``, ``rnn_tanh``, ``rnn_relu`` padded and packed, and the four cells), ``embedding_bag`` in
every mode and ``embedding(scale_grad_by_freq=True)``: values, VJPs, double backward and
gradcheck/gradgradcheck against torch."""

from __future__ import annotations

import numpy as np

from . import OpInfo, Sample, arr

H, F, B, T = 2, 2, 2, 2


def _shapes(*shapes):
    return lambda rng: [Sample(tuple(arr(rng, *s, lo=-1.0, hi=1.0) for s in shapes), {})]


def _cell(name, gates, states=1):
    shapes = [(B, F)] + [(B, H)] * states + [(gates * H, F), (gates * H, H), (gates * H,),
                                               (gates * H,)]

    def fn(m, x, *rest):
        hx, (w_ih, w_hh, b_ih, b_hh) = rest[:states], rest[states:]
        hx = list(hx) if states == 2 else hx[0]
        return getattr(m, name)(x, hx, w_ih, w_hh, b_ih, b_hh)

    return OpInfo(f"top_{name}", fn, _shapes(*shapes))


def _layer_params(gates, layers, directions, bias, proj=0):
    shapes = []
    for layer in range(layers):
        inp = F if layer == 0 else (proj or H) * directions
        for _ in range(directions):
            shapes += [(gates * H, inp), (gates * H, proj or H)]
            shapes += [(gates * H,), (gates * H,)] if bias else []
            shapes += [(proj, H)] if proj else []
    return shapes


def _layer(name, gates, layers=2, bidirectional=True, bias=True, batch_first=False, proj=0):
    directions = 2 if bidirectional else 1
    states = 2 if name == "lstm" else 1
    params = _layer_params(gates, layers, directions, bias, proj)
    state_shapes = [(layers * directions, B, proj or H)] + (
        [(layers * directions, B, H)] if states == 2 else [])
    x_shape = (B, T, F) if batch_first else (T, B, F)

    def fn(m, x, *rest):
        hx = list(rest[:states]) if states == 2 else rest[0]
        return getattr(m, name)(x, hx, list(rest[states:]), bias, layers, 0.0, False,
                                bidirectional, batch_first)

    tag = f"{'bi' if bidirectional else 'uni'}{layers}{'' if bias else '_nobias'}" + (
        "_bf" if batch_first else "") + (f"_proj{proj}" if proj else "")
    return OpInfo(f"top_{name}_{tag}", fn, _shapes(x_shape, *state_shapes, *params))


def _packed(name, gates, bidirectional=False):
    states = 2 if name == "lstm" else 1
    directions = 2 if bidirectional else 1
    params = _layer_params(gates, 1, directions, True)
    batch_sizes = np.array([2, 1], np.int64)

    def samples(rng):
        tensors = [arr(rng, 3, F, lo=-1.0, hi=1.0)] + [arr(rng, directions, 2, H, lo=-1.0, hi=1.0)
                                                       for _ in range(states)]
        tensors += [arr(rng, *s, lo=-1.0, hi=1.0) for s in params]
        return [Sample((tensors[0], batch_sizes, *tensors[1:]), {})]

    def fn(m, data, sizes, *rest):
        hx = list(rest[:states]) if states == 2 else rest[0]
        return getattr(m, name)(data, sizes, hx, list(rest[states:]), True, 1, 0.0, False,
                                bidirectional)

    return OpInfo(f"top_{name}_packed{'_bi' if bidirectional else ''}", fn, samples)


_BAG_INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 0, 1, 2], np.int64)
_BAG_OFFSETS = np.array([0, 2, 2, 5], np.int64)


def _bag_samples(psw=False):
    def make(rng):
        w = arr(rng, 6, 3)
        extra = (rng.uniform(0.5, 1.5, 10),) if psw else ()
        # NOTE: with include_last_offset the last offset is the input's length: torch's kernels
        # disagree among themselves about indices past a shorter last offset
        last = np.append(_BAG_OFFSETS, len(_BAG_INPUT))
        return [Sample((w, _BAG_INPUT, _BAG_OFFSETS) + extra,
                       {"padding_idx": None, "include_last_offset": False}),
                Sample((w, _BAG_INPUT, last) + extra,
                       {"padding_idx": 2, "include_last_offset": True})]

    return make


def _bag(mode, psw=False, scale=False):
    def fn(m, w, idx, off, *weights, padding_idx, include_last_offset):
        return m.nn.functional.embedding_bag(
            idx, w, off, mode=mode, per_sample_weights=weights[0] if weights else None,
            padding_idx=padding_idx, include_last_offset=include_last_offset,
            scale_grad_by_freq=scale)

    tag = ("_psw" if psw else "") + ("_freq" if scale else "")
    # NOTE: torch has no double backward for embedding_bag ("the derivative for
    # '_embedding_bag_backward' is not implemented"): glassgrad's is checked against finite
    # differences in tests/test_nn_embed.py; scale_grad_by_freq is no derivative, so no gradcheck
    return OpInfo(f"embedding_bag_{mode}{tag}", fn, _bag_samples(psw), gradgrad=False,
                  grad=not scale)


def _bag_2d(m, w, idx):
    return m.nn.functional.embedding_bag(idx, w, mode="max")


def _emb_freq(rng):
    idx = np.array([[0, 2, 2], [4, 2, 1]], np.int64)
    return [Sample((arr(rng, 5, 3), idx), {"padding_idx": p}) for p in (None, 1)]


OPS = [
    _bag("sum"),
    _bag("sum", psw=True),
    _bag("mean"),
    _bag("mean", scale=True),
    _bag("max"),
    OpInfo("embedding_bag_2d_max", _bag_2d,
           lambda rng: [Sample((arr(rng, 6, 3), np.array([[1, 2, 1], [5, 0, 0]], np.int64)))],
           gradgrad=False),
    OpInfo("top_embedding_bag",
           lambda m, w, idx, off: m.embedding_bag(w, idx, off, False, 1, False, None, False, 2),
           lambda rng: [Sample((arr(rng, 6, 3), _BAG_INPUT, _BAG_OFFSETS))], gradgrad=False),
    OpInfo("embedding_scale_grad_by_freq",
           lambda m, w, idx, padding_idx: m.nn.functional.embedding(
               idx, w, padding_idx=padding_idx, scale_grad_by_freq=True), _emb_freq,
           grad=False),  # (its gradient, no derivative, is compared in tests/test_nn_embed.py)
    _cell("lstm_cell", 4, states=2),
    _cell("gru_cell", 3),
    _cell("rnn_tanh_cell", 1),
    _cell("rnn_relu_cell", 1),
    # (multi-layer bidirectional stacks: tests/test_nn_embed_rnn.py, first order against torch)
    _layer("lstm", 4, layers=1, bidirectional=False, bias=False, batch_first=True),
    _layer("lstm", 4, layers=1, bidirectional=False, proj=1),
    _layer("gru", 3, layers=1, bidirectional=False, bias=False, batch_first=True),
    _layer("rnn_tanh", 1, layers=2, bidirectional=True),
    _layer("rnn_relu", 1, layers=1, bidirectional=False, batch_first=True),
    _packed("lstm", 4),
    _packed("gru", 3),
    _packed("rnn_tanh", 1, bidirectional=True),
]
