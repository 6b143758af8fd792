"""Recurrent cells, layers and nn.utils.rnn against torch: copied weights, outputs, final states,
input/state/parameter gradients, packed variable-length batches, the article's dynamic-graph
loop, double backward and truncated BPTT."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.nn.modules.rnn import GRU, LSTM, RNN
from glassgrad.nn.modules.rnn_cells import GRUCell, LSTMCell, RNNCell
from glassgrad.nn.utils import rnn as gg_rnn
from tests.oracle import assert_close, copy_params

ATOL = 1e-9

CELLS = {
    "rnn_tanh": (RNNCell, torch.nn.RNNCell, {}),
    "rnn_relu": (RNNCell, torch.nn.RNNCell, {"nonlinearity": "relu"}),
    "lstm": (LSTMCell, torch.nn.LSTMCell, {}),
    "gru": (GRUCell, torch.nn.GRUCell, {}),
}
LAYERS = {
    "rnn_tanh": (RNN, torch.nn.RNN, {}),
    "rnn_relu": (RNN, torch.nn.RNN, {"nonlinearity": "relu"}),
    "lstm": (LSTM, torch.nn.LSTM, {}),
    "lstm_proj": (LSTM, torch.nn.LSTM, {"proj_size": 2}),
    "gru": (GRU, torch.nn.GRU, {}),
}


def _pair(table, name, *args, **kwargs):
    """The same layer on both libraries, float64, glassgrad's weights copied from torch's."""
    ours_cls, theirs_cls, extra = table[name]
    torch.manual_seed(0)
    theirs = theirs_cls(*args, **kwargs, **extra).double()
    ours = ours_cls(*args, **kwargs, **extra).double()
    copy_params(theirs, ours)
    return ours, theirs


def _leaf(lib, arr):
    return lib.tensor(arr, dtype=lib.float64, requires_grad=True)


def _states(lib, arrays):
    return tuple(_leaf(lib, a) for a in arrays)


def _loss(out, finals):
    """A loss that weighs every output and state differently, so wrong gradients show."""
    total = (out ** 2).sum()
    for k, s in enumerate(finals):
        total = total + (s * (k + 2)).sum()
    return total


def _finals(h):
    return tuple(h) if isinstance(h, tuple) else (h,)


def _assert_param_grads(ours, theirs):
    names = [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters()] == names
    mine = dict(ours.named_parameters())
    for n, p in theirs.named_parameters():
        assert_close(mine[n].grad, p.grad, atol=ATOL, what=f"grad of {n}")


# --- cells ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cell_matches_torch(name, batched, with_state, rng):
    ours, theirs = _pair(CELLS, name, 3, 4)
    x = rng.standard_normal((2, 3) if batched else (3,))
    shape = (2, 4) if batched else (4,)
    n_states = 2 if name == "lstm" else 1
    h0 = [rng.standard_normal(shape) for _ in range(n_states)]
    results = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs = _leaf(lib, x)
        hs = _states(lib, h0) if with_state else None
        arg = None if hs is None else (hs if n_states == 2 else hs[0])
        out = _finals(module(xs, arg))
        _loss(out[0], out[1:]).backward()
        results.append((xs, hs, out))
    (xa, ha, oa), (xb, hb, ob) = results
    for a, b in zip(oa, ob):
        assert_close(a, b, atol=ATOL, what="cell output")
    assert_close(xa.grad, xb.grad, atol=ATOL, what="input grad")
    if with_state:
        for a, b in zip(ha, hb):
            assert_close(a.grad, b.grad, atol=ATOL, what="state grad")
    _assert_param_grads(ours, theirs)


@pytest.mark.parametrize("name", list(CELLS))
def test_cell_parameters_and_init(name):
    ours, theirs = _pair(CELLS, name, 3, 16, bias=False)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert ours.bias_ih is None and ours.bias_hh is None
    assert repr(ours) == repr(theirs)
    fresh = CELLS[name][0](3, 16, **CELLS[name][2])
    bound = 1 / np.sqrt(16)
    for n, p in fresh.named_parameters():
        arr = p.detach().numpy()
        assert np.all(np.abs(arr) <= bound), n
        assert arr.std() > bound / 4, f"{n} looks unfilled"


# --- layers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_layer_matches_torch(name, batch_first, rng):
    ours, theirs = _pair(LAYERS, name, 3, 4, num_layers=2, bidirectional=True,
                         batch_first=batch_first)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    h_out = 2 if name == "lstm_proj" else 4
    h0 = [rng.standard_normal((4, 2, h_out))]
    if name.startswith("lstm"):
        h0.append(rng.standard_normal((4, 2, 4)))
    results = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs, hs = _leaf(lib, x), _states(lib, h0)
        out, h = module(xs, hs if len(hs) == 2 else hs[0])
        _loss(out, _finals(h)).backward()
        results.append((xs, hs, out, _finals(h)))
    (xa, ha, oa, fa), (xb, hb, ob, fb) = results
    assert_close(oa, ob, atol=ATOL, what="output")
    for a, b in zip(fa, fb):
        assert_close(a, b, atol=ATOL, what="final state")
    assert_close(xa.grad, xb.grad, atol=ATOL, what="input grad")
    for a, b in zip(ha, hb):
        assert_close(a.grad, b.grad, atol=ATOL, what="initial state grad")
    _assert_param_grads(ours, theirs)


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_single_direction_no_bias_zero_state(name, rng):
    ours, theirs = _pair(LAYERS, name, 3, 4, bias=False)
    x = rng.standard_normal((4, 2, 3))
    outs = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs = _leaf(lib, x)
        out, h = module(xs)
        _loss(out, _finals(h)).backward()
        outs.append((xs, out))
    assert_close(outs[0][1], outs[1][1], atol=ATOL, what="output")
    assert_close(outs[0][0].grad, outs[1][0].grad, atol=ATOL, what="input grad")
    _assert_param_grads(ours, theirs)


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_unbatched(name, rng):
    ours, theirs = _pair(LAYERS, name, 3, 4, num_layers=2, bidirectional=True)
    h_out = 2 if name == "lstm_proj" else 4
    h0 = [rng.standard_normal((4, h_out))] + (
        [rng.standard_normal((4, 4))] if name.startswith("lstm") else [])
    x = rng.standard_normal((5, 3))
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs, hs = _leaf(lib, x), _states(lib, h0)
        out, h = module(xs, hs if len(hs) == 2 else hs[0])
        _loss(out, _finals(h)).backward()
        res.append((xs, out, _finals(h)))
    assert_close(res[0][1], res[1][1], atol=ATOL, what="output")
    for a, b in zip(res[0][2], res[1][2]):
        assert_close(a, b, atol=ATOL, what="final state")
    assert_close(res[0][0].grad, res[1][0].grad, atol=ATOL, what="input grad")


@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_layer_packed_variable_lengths(name, enforce_sorted, rng):
    ours, theirs = _pair(LAYERS, name, 3, 4, num_layers=2, bidirectional=True)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = rng.standard_normal((5, 4, 3))
    h_out = 2 if name == "lstm_proj" else 4
    h0 = [rng.standard_normal((4, 4, h_out))] + (
        [rng.standard_normal((4, 4, 4))] if name.startswith("lstm") else [])
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        utils = gg_rnn if lib is glassgrad else torch.nn.utils.rnn
        xs, hs = _leaf(lib, x), _states(lib, h0)
        packed = utils.pack_padded_sequence(xs, lengths, enforce_sorted=enforce_sorted)
        out, h = module(packed, hs if len(hs) == 2 else hs[0])
        assert isinstance(out, utils.PackedSequence)
        padded, out_lengths = utils.pad_packed_sequence(out, batch_first=True)
        _loss(padded, _finals(h)).backward()
        res.append((xs, hs, out, padded, out_lengths, _finals(h)))
    (xa, ha, oa, pa, la, fa), (xb, hb, ob, pb, lb, fb) = res
    assert_close(oa.data, ob.data, atol=ATOL, what="packed output")
    assert oa.batch_sizes.tolist() == ob.batch_sizes.tolist()
    assert_close(pa, pb, atol=ATOL, what="padded output")
    assert la.tolist() == lb.tolist() == lengths
    for a, b in zip(fa, fb):
        assert_close(a, b, atol=ATOL, what="final state at each sequence's own last step")
    assert_close(xa.grad, xb.grad, atol=ATOL, what="input grad")
    for a, b in zip(ha, hb):
        assert_close(a.grad, b.grad, atol=ATOL, what="initial state grad")
    _assert_param_grads(ours, theirs)


def test_packed_final_state_is_state_at_own_last_step(rng):
    """h_n of a packed batch equals running each sequence alone to its own length."""
    ours, _ = _pair(LAYERS, "gru", 3, 4)
    seqs = [glassgrad.tensor(rng.standard_normal((n, 3))) for n in (2, 5, 3)]
    packed = gg_rnn.pack_sequence(seqs, enforce_sorted=False)
    _, h_n = ours(packed)
    for i, s in enumerate(seqs):
        _, h_alone = ours(s)
        assert_close(h_n[:, i], h_alone, atol=ATOL, what=f"sequence {i}")


def test_layer_parameter_names_repr_and_init():
    ours, theirs = _pair(LAYERS, "lstm_proj", 3, 4, num_layers=2, bidirectional=True,
                         batch_first=True, dropout=0.25)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in ours.all_weights] == [
        [tuple(p.shape) for p in ws] for ws in theirs.all_weights]
    assert repr(ours) == repr(theirs)
    for name in LAYERS:
        m, t = _pair(LAYERS, name, 3, 4, bias=False)
        assert repr(m) == repr(t)
    fresh = GRU(3, 25, num_layers=2)
    for n, p in fresh.named_parameters():
        arr = p.detach().numpy()
        assert np.all(np.abs(arr) <= 0.2) and arr.std() > 0.05, n


def test_dropout_between_layers(rng):
    ours, theirs = _pair(LAYERS, "lstm", 3, 4, num_layers=2, dropout=0.5)
    x = rng.standard_normal((5, 2, 3))
    ours.eval()
    theirs.eval()
    assert_close(ours(glassgrad.tensor(x))[0], theirs(torch.tensor(x))[0], atol=ATOL,
                 what="eval mode ignores dropout")
    ours.train()
    out = ours(glassgrad.tensor(x))[0]
    assert not np.allclose(out.detach().numpy(), theirs(torch.tensor(x))[0].detach().numpy())


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return type(e), str(e).split("\nglassgrad:")[0].replace("glassgrad.", "torch.")
    return None, None


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.RNN(4, 3)(lib.randn(5, 2, 5)),
    lambda lib: lib.nn.RNN(4, 3).double()(lib.randn(5, 2, 4, dtype=lib.float64),
                                          lib.randn(2, 2, 3, dtype=lib.float64)),
    lambda lib: lib.nn.RNN(4, 3).double()(lib.randn(5, 4, dtype=lib.float64),
                                          lib.randn(1, 2, 3, dtype=lib.float64)),
    lambda lib: lib.nn.GRU(4, 3)(lib.randn(5, 4, 2, 4)),
    lambda lib: lib.nn.LSTM(4, 3)(lib.randn(5, 4, 2, 4)),
    lambda lib: lib.nn.LSTM(4, 3)(lib.randn(5, 2, 4), (lib.randn(1, 2, 3), lib.randn(1, 1, 3))),
    lambda lib: lib.nn.LSTM(4, 3)(lib.randn(5, 2, 4), (lib.randn(2, 3), lib.randn(2, 3))),
    lambda lib: lib.nn.RNN(4, 3)(lib.randn(5, 2, 4, dtype=lib.float64)),
    lambda lib: lib.nn.RNNCell(4, 3)(lib.randn(2, 5)),
    lambda lib: lib.nn.GRUCell(4, 3)(lib.randn(2, 4), lib.randn(3, 3)),
    lambda lib: lib.nn.LSTMCell(4, 3)(lib.randn(2, 4), (lib.randn(2, 3), lib.randn(2, 2))),
    lambda lib: lib.nn.RNNCell(4, 3)(lib.randn(2, 4, 1)),
    lambda lib: lib.nn.RNNCell(4, 3, nonlinearity="foo")(lib.randn(2, 4)),
    lambda lib: lib.nn.RNN(4, 3, nonlinearity="foo"),
    lambda lib: lib.nn.RNN(4, 3, dropout=1.5),
    lambda lib: lib.nn.RNN(4, 0),
    lambda lib: lib.nn.GRU(4, 3, num_layers=0),
    lambda lib: lib.nn.GRU(4, 3, proj_size=2),
    lambda lib: lib.nn.LSTM(4, 3, proj_size=3),
])
def test_errors_match_torch(case):
    theirs = _error(lambda: case(torch))
    ours = _error(lambda: case(glassgrad))
    assert theirs[0] is not None
    assert ours == theirs


def test_dropout_warning_single_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        GRU(3, 4, dropout=0.5)


# --- nn.utils.rnn -----------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side, rng):
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 1)]
    res = []
    for lib, utils in ((glassgrad, gg_rnn), (torch, torch.nn.utils.rnn)):
        seqs = [_leaf(lib, a) for a in arrays]
        out = utils.pad_sequence(seqs, batch_first, -3.0, padding_side)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        res.append((out, seqs))
    assert_close(res[0][0], res[1][0], what="padded")
    for a, b in zip(res[0][1], res[1][1]):
        assert_close(a.grad, b.grad, what="grad")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([5, 3, 2], True), ([3, 5, 2], False)])
def test_pack_pad_roundtrip(batch_first, lengths, enforce_sorted, rng):
    x = rng.standard_normal((3, 5, 2) if batch_first else (5, 3, 2))
    res = []
    for lib, utils in ((glassgrad, gg_rnn), (torch, torch.nn.utils.rnn)):
        xs = _leaf(lib, x)
        packed = utils.pack_padded_sequence(xs, lib.tensor(lengths), batch_first, enforce_sorted)
        padded, lens = utils.pad_packed_sequence(packed, batch_first, 7.0, total_length=6)
        weight = lib.tensor(np.arange(padded.numel()).reshape(padded.shape), dtype=lib.float64)
        (padded * weight).sum().backward()
        res.append((packed, padded, lens, xs))
    (pa, da, la, xa), (pb, db, lb, xb) = res
    assert_close(pa.data, pb.data, what="packed data")
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        a, b = getattr(pa, field), getattr(pb, field)
        assert (a is None and b is None) or a.tolist() == b.tolist(), field
    assert_close(da, db, what="padded")
    assert la.tolist() == lb.tolist()
    assert_close(xa.grad, xb.grad, what="input grad")


def test_pack_sequence_and_unpack(rng):
    arrays = [rng.standard_normal((n, 3)) for n in (2, 4, 1)]
    ours = gg_rnn.pack_sequence([glassgrad.tensor(a) for a in arrays], enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays],
                                              enforce_sorted=False)
    assert_close(ours.data, theirs.data)
    assert ours._fields == theirs._fields
    for a, b in zip(gg_rnn.unpack_sequence(ours), torch.nn.utils.rnn.unpack_sequence(theirs)):
        assert_close(a, b)
    assert ours.double().data.dtype == glassgrad.float64
    padded = gg_rnn.pad_sequence([glassgrad.tensor(a) for a in arrays])
    for a, arr in zip(gg_rnn.unpad_sequence(padded, [2, 4, 1]), arrays):
        np.testing.assert_array_equal(a.numpy(), arr)


@pytest.mark.parametrize("case", [
    lambda lib, u: u.pack_padded_sequence(lib.randn(5, 3, 2), [3, 5, 2]),
    lambda lib, u: u.pack_padded_sequence(lib.randn(5, 3, 2), [5, 3, 0]),
    lambda lib, u: u.pack_padded_sequence(lib.randn(5, 3, 2), [5, 3]),
    lambda lib, u: u.pack_sequence([lib.ones(2, 2), lib.ones(3, 2)]),
    lambda lib, u: u.pad_packed_sequence(u.pack_padded_sequence(lib.randn(5, 3, 2), [5, 3, 2]),
                                         total_length=3),
    lambda lib, u: u.pad_sequence([lib.ones(2, 2)], padding_side="middle"),
    lambda lib, u: u.pad_sequence([]),
])
def test_utils_errors_match_torch(case):
    theirs = _error(lambda: case(torch, torch.nn.utils.rnn))
    ours = _error(lambda: case(glassgrad, gg_rnn))
    assert theirs[0] is not None
    assert ours == theirs


# --- workflows --------------------------------------------------------------------------------
def _graph_size(root) -> int:
    seen, stack = set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return len(seen)


def test_dynamic_graph_per_sentence(rng):
    """The article's loop: one RNNCell over sentences of different lengths builds a graph per
    input, as long as the sentence; values and gradients match torch sentence by sentence."""
    ours, theirs = _pair(CELLS, "rnn_tanh", 3, 4)
    sizes = {}
    for length in (2, 3, 6):
        sentence = rng.standard_normal((length, 3))
        losses = []
        for lib, cell in ((glassgrad, ours), (torch, theirs)):
            cell.zero_grad()
            h = lib.zeros(1, 4, dtype=lib.float64)
            for word in lib.tensor(sentence):
                h = cell(word.unsqueeze(0), h)
            loss = (h ** 2).sum()
            loss.backward()
            losses.append(loss)
        assert_close(losses[0], losses[1], atol=ATOL, what=f"loss, length {length}")
        _assert_param_grads(ours, theirs)
        sizes[length] = _graph_size(losses[0])
    per_word = sizes[3] - sizes[2]
    assert per_word > 0 and sizes[6] - sizes[3] == 3 * per_word, sizes


def test_double_backward_through_gru(rng):
    """Gradient penalty: the gradient of the parameters' gradient norm, against torch."""
    ours, theirs = _pair(LAYERS, "gru", 2, 3)
    x = rng.standard_normal((3, 2, 2))
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs = _leaf(lib, x)
        out, h = module(xs)
        loss = (out ** 2).sum() + h.sum()
        params = list(module.parameters())
        grads = lib.autograd.grad(loss, [xs] + params, create_graph=True)
        penalty = sum((g ** 2).sum() for g in grads)
        penalty.backward()
        res.append((penalty, xs))
    assert_close(res[0][0], res[1][0], atol=ATOL, what="grad norm")
    assert_close(res[0][1].grad, res[1][1].grad, atol=ATOL, what="input grad of grad norm")
    _assert_param_grads(ours, theirs)


def test_truncated_bptt(rng):
    """Carrying h.detach() between chunks trains chunk by chunk, like torch; carrying h with its
    history makes the second chunk's backward reach the freed first graph."""
    ours, theirs = _pair(LAYERS, "lstm", 3, 4)
    chunks = [rng.standard_normal((4, 2, 3)) for _ in range(3)]
    losses = {}
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        opt_params = list(module.parameters())
        state = None
        losses[lib.__name__] = []
        for chunk in chunks:
            out, state = module(lib.tensor(chunk), state)
            state = tuple(s.detach() for s in state)
            loss = (out ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in opt_params:
                    p -= 0.1 * p.grad
                    p.grad = None
            losses[lib.__name__].append(loss.item())
    np.testing.assert_allclose(losses["glassgrad"], losses["torch"], atol=ATOL)

    state = None
    out, state = ours(glassgrad.tensor(chunks[0]), state)
    (out ** 2).mean().backward()
    out, state = ours(glassgrad.tensor(chunks[1]), state)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        (out ** 2).mean().backward()
