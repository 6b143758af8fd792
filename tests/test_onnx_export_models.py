"""glassgrad.onnx.export of whole models: recurrent (LSTM, GRU, RNN as ONNX nodes, the
word_language_model shape), attention, custom Functions, no_grad and in-place writes inside
forward, dynamic axes run at other sizes; against onnxruntime and torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from tests.onnx_oracle import (  # noqa: E402 - after the skips
    ATOL, assert_not_tracing, export, flat, roundtrip, run_onnx, sample, structure, to_numpy,
)


class _WordModel:
    """word_language_model's shape of model: Embedding -> LSTM -> Linear -> log_softmax, called
    with (input, (h, c)) and returning (output, (h, c))."""

    @staticmethod
    def make(lib, batch_first=False, bidirectional=False, layers=2):
        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = lib.nn.Embedding(11, 4)
                self.rnn = lib.nn.LSTM(4, 5, layers, dropout=0.2 if layers > 1 else 0.0,
                                       batch_first=batch_first,
                                       bidirectional=bidirectional)
                self.decoder = lib.nn.Linear(5 * (2 if bidirectional else 1), 11)

            def forward(self, input, hidden):
                emb = self.encoder(input)
                output, hidden = self.rnn(emb, hidden)
                decoded = self.decoder(output).view(-1, 11)
                return lib.nn.functional.log_softmax(decoded, dim=1), hidden

        return Model()


@pytest.mark.parametrize("batch_first,bidirectional,layers",
                         [(False, False, 2), (True, False, 1), (False, True, 2)])
def test_lstm_word_language_model(batch_first, bidirectional, layers):
    d = 2 if bidirectional else 1
    idx = np.random.default_rng(0).integers(0, 11, (6, 3) if not batch_first else (3, 6))
    hidden = (sample(layers * d, 3, 5, seed=1), sample(layers * d, 3, 5, seed=2))
    model = roundtrip(lambda lib: _WordModel.make(lib, batch_first, bidirectional, layers),
                      (idx, hidden), atol=2e-5)
    assert [i.name for i in model.graph.input] == ["input", "hidden.0", "hidden.1"]
    assert len(model.graph.output) == 3
    assert {"Gather", "LSTM", "LogSoftmax"} <= {n.op_type for n in model.graph.node}


def test_lstm_without_hidden_state():
    model = roundtrip(lambda lib: lib.nn.LSTM(3, 4, batch_first=True), (sample(2, 5, 3),))
    assert [n.op_type for n in model.graph.node].count("LSTM") == 1


def test_dynamic_axes_run_at_other_sizes():
    """Symbolic dims in the file; the exported model runs on another batch and length."""
    g_mod = _WordModel.make(glassgrad)
    g_mod.eval()
    idx = np.zeros((6, 3), dtype=np.int64)
    hidden = (sample(2, 3, 5), sample(2, 3, 5, seed=1))
    axes = {"input": {0: "seq", 1: "batch"}, "h": {1: "batch"}, "c": {1: "batch"},
            "output": {0: "rows"}}
    data, program = export(g_mod, structure(glassgrad, (idx, hidden)),
                           input_names=["input", "h", "c"], output_names=["output", "h_n", "c_n"],
                           dynamic_axes=axes)
    shape = program.model_proto.graph.input[0].type.tensor_type.shape
    dims = [d.dim_param or d.dim_value for d in shape.dim]
    assert dims == ["seq", "batch"]
    idx2 = np.random.default_rng(3).integers(0, 11, (4, 2))
    hidden2 = (sample(2, 2, 5, seed=4), sample(2, 2, 5, seed=5))
    got = run_onnx(data, {"input": idx2, "h": hidden2[0], "c": hidden2[1]})
    ours = flat(g_mod(*structure(glassgrad, (idx2, hidden2))))
    for a, b in zip(got, ours):
        np.testing.assert_allclose(a, to_numpy(b), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("kind,kw", [("GRU", {}), ("GRU", {"bidirectional": True}),
                                     ("RNN", {"nonlinearity": "relu", "batch_first": True}),
                                     ("RNN", {"bias": False})])
def test_gru_and_rnn(kind, kw):
    d = 2 if kw.get("bidirectional") else 1
    x = sample(2, 5, 3) if kw.get("batch_first") else sample(5, 2, 3)
    model = roundtrip(lambda lib: getattr(lib.nn, kind)(3, 4, 2, **kw),
                      (x, sample(2 * d, 2, 4, seed=1)))
    assert [n.op_type for n in model.graph.node].count(kind) == 2
    assert len(model.graph.output) == 2


def test_recurrent_export_keeps_the_sequence_length_dynamic():
    m = glassgrad.nn.GRU(3, 4)
    data, _ = export(m, (glassgrad.from_numpy(sample(5, 2, 3)),), input_names=["x"],
                     dynamic_axes={"x": {0: "time"}, "output": {0: "time"}})
    x = sample(9, 2, 3, seed=2)
    got = run_onnx(data, {"x": x})
    for a, b in zip(got, flat(m(glassgrad.from_numpy(x)))):
        np.testing.assert_allclose(a, to_numpy(b), atol=ATOL, rtol=ATOL)


def _attention_model(lib):
    class Attention(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = lib.nn.MultiheadAttention(8, 2, batch_first=True)
            self.register_buffer("mask", lib.triu(lib.ones(5, 5), 1).bool())

        def forward(self, x):
            out, weights = self.mha(x, x, x, attn_mask=self.mask)
            q = x.view(2, 5, 2, 4).transpose(1, 2)
            sdpa = lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
            return out, weights, sdpa.transpose(1, 2).reshape(2, 5, 8)

    return Attention()


def test_multihead_and_scaled_dot_product_attention():
    model = roundtrip(_attention_model, (sample(2, 5, 8),))
    assert "Softmax" in {n.op_type for n in model.graph.node}


def test_custom_functions():
    """A custom Function's forward written with glassgrad ops is recorded (as PyTorch's tracer
    does); one that leaves the op path (NumPy) raises instead of being frozen."""

    def make(lib, numpy_forward=False):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if numpy_forward:
                    return lib.from_numpy(x.detach().numpy() * 2)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        class M(lib.nn.Module):
            def forward(self, x):
                return Double.apply(x).exp()

        return M()

    roundtrip(make, (sample(2, 2),))
    with pytest.raises(glassgrad.onnx.OnnxExporterError, match="DoubleBackward"):
        export(make(glassgrad, numpy_forward=True), (glassgrad.randn(2, 2),))
    assert_not_tracing()


def test_no_grad_inside_forward_is_traced():
    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                with lib.no_grad():
                    scale = x.abs().amax(1, keepdim=True) + 1
                with lib.inference_mode():
                    shift = x.mean()
                return x / scale - shift

        return M()

    model = roundtrip(make, (sample(3, 4),))
    assert {"ReduceMax", "ReduceMean", "Div"} <= {n.op_type for n in model.graph.node}
    data, _ = export(make(glassgrad), (glassgrad.from_numpy(sample(3, 4)),))
    x = sample(3, 4, seed=8)  # another input: the statistics are computed, not frozen
    np.testing.assert_allclose(run_onnx(data, {"x": x})[0],
                               make(torch)(torch.from_numpy(x)).numpy(), atol=ATOL)
    assert glassgrad.is_grad_enabled() and not glassgrad.is_inference_mode_enabled()


def test_forward_that_writes_its_input_in_place():
    def make(lib):
        class Normalize(lib.nn.Module):
            def forward(self, x):
                x.sub_(0.5).div_(2.0)
                return (x * 3).relu_()

        return Normalize()

    x = sample(2, 3)
    user_input = glassgrad.from_numpy(x.copy())
    data, _ = export(make(glassgrad), (user_input,))
    np.testing.assert_array_equal(user_input.numpy(), x)  # the export wrote to its own copy
    expected = make(torch)(torch.from_numpy(x.copy())).numpy()
    np.testing.assert_allclose(run_onnx(data, {"x": x})[0], expected, atol=ATOL)


def test_export_under_no_grad_and_requires_grad_inputs():
    """Programs export inside no_grad (fast_neural_style) or with inputs that require grad."""
    m = glassgrad.nn.Sequential(glassgrad.nn.Linear(3, 4), glassgrad.nn.Tanh())
    x = glassgrad.randn(2, 3, requires_grad=True)
    with glassgrad.no_grad():
        data, _ = export(m, (x,))
        assert not glassgrad.is_grad_enabled()  # the export's grad mode ends with it
    np.testing.assert_allclose(run_onnx(data, {"input": x.detach().numpy()})[0],
                               m(x).detach().numpy(), atol=ATOL)
    assert x.grad_fn is None and x.requires_grad
