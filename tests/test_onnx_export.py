"""glassgrad.onnx.export against torch and onnxruntime: each family of models is built on both
libraries with the same weights, exported by glassgrad, checked by onnx.checker, run in
onnxruntime, and compared with glassgrad's output and with torch's."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import copy_params

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

ATOL = 1e-5


def _to(lib, a):
    return lib.from_numpy(a.copy())


def _structure(lib, value):
    if isinstance(value, np.ndarray):
        return _to(lib, value)
    if isinstance(value, (tuple, list)):
        return tuple(_structure(lib, v) for v in value)
    return value


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach()._array


def run_onnx(data: bytes, feeds) -> list:
    """onnx.checker on the file, then onnxruntime's outputs for ``feeds`` (name -> array)."""
    onnx.checker.check_model(onnx.load_from_string(data))
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def export(module, args, **kw) -> tuple:
    buf = io.BytesIO()
    program = glassgrad.onnx.export(module, args, buf, **kw)
    return buf.getvalue(), program


def roundtrip(make, inputs, atol=ATOL, **kw):
    """Build ``make(lib)`` on torch and glassgrad (torch's weights copied), export glassgrad's
    with ``inputs`` (NumPy arrays, nested in tuples where the model takes tuples), and compare
    onnxruntime's outputs with glassgrad's and torch's. Returns the ONNX model proto."""
    t_mod, g_mod = make(torch), make(glassgrad)
    copy_params(t_mod, g_mod)
    t_mod.eval()
    g_mod.eval()
    data, program = export(g_mod, _structure(glassgrad, inputs), **kw)
    flat_in = _flat(list(inputs))
    names = [i.name for i in program.model_proto.graph.input]
    got = run_onnx(data, dict(zip(names, flat_in)))
    ours = [_numpy(t) for t in _flat(g_mod(*_structure(glassgrad, inputs)))]
    with torch.no_grad():
        theirs = [_numpy(t) for t in _flat(t_mod(*_structure(torch, inputs)))]
    assert len(got) == len(ours) == len(theirs)
    for a, b, c in zip(got, ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape == c.shape
        np.testing.assert_allclose(a, b, atol=atol, rtol=atol)
        np.testing.assert_allclose(a, c, atol=atol, rtol=atol)
    return program.model_proto


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_mlp_gemm_relu_and_names():
    model = roundtrip(lambda nn: nn.nn.Sequential(nn.nn.Linear(3, 8), nn.nn.ReLU(),
                                                  nn.nn.Linear(8, 2)),
                      (_x(5, 3),), input_names=["x"], output_names=["y"])
    g = model.graph
    assert [n.op_type for n in g.node] == ["Gemm", "Relu", "Gemm"]
    assert [i.name for i in g.input] == ["x"] and [o.name for o in g.output] == ["y"]
    assert {i.name for i in g.initializer} == {"0.weight", "0.bias", "2.weight", "2.bias"}


def _seq(*layers):
    return lambda lib: lib.nn.Sequential(*[layer(lib) for layer in layers])


FAMILIES = {
    "activations": (_seq(lambda L: L.nn.Linear(4, 6), lambda L: L.nn.Tanh(),
                         lambda L: L.nn.Linear(6, 6), lambda L: L.nn.Sigmoid(),
                         lambda L: L.nn.Linear(6, 6), lambda L: L.nn.GELU(),
                         lambda L: L.nn.Linear(6, 6), lambda L: L.nn.GELU("tanh"),
                         lambda L: L.nn.LeakyReLU(0.2), lambda L: L.nn.ELU(0.7),
                         lambda L: L.nn.Softplus(), lambda L: L.nn.SiLU(),
                         lambda L: L.nn.Dropout(0.3), lambda L: L.nn.LogSoftmax(1)),
                    [(3, 4)], {"Tanh", "Sigmoid", "Gelu", "LeakyRelu", "Elu", "Softplus",
                               "LogSoftmax"}),
    "softmax_3d": (_seq(lambda L: L.nn.Linear(4, 5), lambda L: L.nn.Softmax(-1)), [(2, 3, 4)],
                   {"Softmax"}),
    "conv2d": (_seq(lambda L: L.nn.Conv2d(3, 4, 3, stride=2, padding=1),
                    lambda L: L.nn.BatchNorm2d(4), lambda L: L.nn.ReLU(),
                    lambda L: L.nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2),
                    lambda L: L.nn.MaxPool2d(2), lambda L: L.nn.Flatten(),
                    lambda L: L.nn.Linear(64, 3)), [(2, 3, 16, 16)],
               {"Conv", "BatchNormalization", "MaxPool", "Gemm"}),
    "conv1d": (_seq(lambda L: L.nn.Conv1d(2, 3, 3, padding=1, bias=False),
                    lambda L: L.nn.AvgPool1d(2), lambda L: L.nn.BatchNorm1d(3)), [(2, 2, 9)],
               {"Conv", "AveragePool", "BatchNormalization"}),
    "conv_transpose": (_seq(lambda L: L.nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1),
                            lambda L: L.nn.Tanh()), [(1, 3, 5, 5)], {"ConvTranspose"}),
    "pools": (_seq(lambda L: L.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
                   lambda L: L.nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),
                   lambda L: L.nn.AvgPool2d(2), lambda L: L.nn.AdaptiveAvgPool2d(1)),
              [(2, 3, 11, 11)], {"MaxPool", "AveragePool"}),
    "layer_norm": (_seq(lambda L: L.nn.Linear(4, 6), lambda L: L.nn.LayerNorm(6)), [(2, 3, 4)],
                   {"LayerNormalization"}),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family(family):
    make, shapes, must_have = FAMILIES[family]
    model = roundtrip(make, tuple(_x(*s, seed=i) for i, s in enumerate(shapes)))
    assert must_have <= {n.op_type for n in model.graph.node}


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
    hidden = (_x(layers * d, 3, 5, seed=1), _x(layers * d, 3, 5, seed=2))
    model = roundtrip(lambda lib: _WordModel.make(lib, batch_first, bidirectional, layers),
                      (idx, hidden), atol=2e-5)
    assert [i.name for i in model.graph.input] == ["input", "hidden.0", "hidden.1"]
    assert len(model.graph.output) == 3
    assert {"Gather", "LSTM", "LogSoftmax"} <= {n.op_type for n in model.graph.node}


def test_lstm_without_hidden_state():
    model = roundtrip(lambda lib: lib.nn.LSTM(3, 4, batch_first=True), (_x(2, 5, 3),))
    assert [n.op_type for n in model.graph.node].count("LSTM") == 1


def test_dynamic_axes_run_at_other_sizes():
    """Symbolic dims in the file; the exported model runs on another batch and length."""
    g_mod = _WordModel.make(glassgrad)
    g_mod.eval()
    idx = np.zeros((6, 3), dtype=np.int64)
    hidden = (_x(2, 3, 5), _x(2, 3, 5, seed=1))
    axes = {"input": {0: "seq", 1: "batch"}, "h": {1: "batch"}, "c": {1: "batch"},
            "output": {0: "rows"}}
    data, program = export(g_mod, _structure(glassgrad, (idx, hidden)),
                           input_names=["input", "h", "c"], output_names=["output", "h_n", "c_n"],
                           dynamic_axes=axes)
    dims = [d.dim_param or d.dim_value for d in program.model_proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["seq", "batch"]
    idx2 = np.random.default_rng(3).integers(0, 11, (4, 2))
    hidden2 = (_x(2, 2, 5, seed=4), _x(2, 2, 5, seed=5))
    got = run_onnx(data, {"input": idx2, "h": hidden2[0], "c": hidden2[1]})
    ours = _flat(g_mod(*_structure(glassgrad, (idx2, hidden2))))
    for a, b in zip(got, ours):
        np.testing.assert_allclose(a, _numpy(b), atol=2e-5, rtol=2e-5)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's TorchScript exporter
def test_unsupported_op_names_it():
    def make(lib):
        class CumProd(lib.nn.Module):
            def forward(self, x):
                return x.cumprod(1)

        return CumProd()

    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError) as theirs:
        torch.onnx.export(make(torch), (torch.randn(2, 3),), io.BytesIO(), dynamo=False)
    with pytest.raises(glassgrad.onnx.errors.UnsupportedOperatorError) as ours:
        export(make(glassgrad), (glassgrad.randn(2, 3),))
    assert isinstance(ours.value, glassgrad.onnx.OnnxExporterError)
    assert isinstance(ours.value, RuntimeError)
    key = "Exporting the operator 'aten::cumprod' to ONNX opset version"
    assert key in str(theirs.value) and key in str(ours.value)
    assert "Cumprod" in str(ours.value) and "[2, 3]" in str(ours.value)
    _assert_not_tracing()


def _assert_not_tracing():
    from glassgrad.autograd.graph import _Hooks

    assert _Hooks.trace is None and not _Hooks.watch_ops and not _Hooks.any_on
    assert glassgrad.autograd.grad_mode._set_grad.__name__ == "_set_grad"
    assert glassgrad.ops.indexing.index_snapshot.__name__ == "index_snapshot"
    spaces = [vars(m) for n, m in sys.modules.items() if n.startswith("glassgrad")]
    for space in spaces + [vars(glassgrad.Tensor), vars(glassgrad.nn.LSTM)]:
        for value in list(space.values()):
            assert getattr(value, "__qualname__", "") != "_wrap.<locals>.wrapper", value
    assert not glassgrad.onnx.is_in_onnx_export()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_is_in_onnx_export_and_state_restored():
    seen = {}

    def make(lib):
        class Probe(lib.nn.Module):
            def forward(self, x):
                seen[lib.__name__] = (lib.onnx.is_in_onnx_export(), self.training)
                return x * 2

        return Probe()

    torch.onnx.export(make(torch), (torch.randn(2),), io.BytesIO(), dynamo=False)
    probe = make(glassgrad)
    export(probe, (glassgrad.randn(2),))
    assert seen["glassgrad"] == seen["torch"] == (True, False)
    assert probe.training  # put back in train mode after the export
    _assert_not_tracing()


def test_missing_onnx_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"pip install glassgrad\[onnx\]"):
        export(glassgrad.nn.Linear(2, 2), (glassgrad.randn(1, 2),))


def _ops_model(lib):
    """Elementwise, reduction, shape and indexing ops of two inputs and an integer index input;
    a buffer and a parameter that are no inputs become initializers; several outputs."""

    class Ops(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", lib.arange(4, dtype=lib.float32) * 0.5)
            self.table = lib.nn.Parameter(lib.arange(15, dtype=lib.float32).reshape(5, 3))

        def forward(self, x, y, i):
            a = (x + y) * 2 - y / 3 + self.offset
            b = a.abs().sqrt() + a.exp().log1p() - (-a).sigmoid() + 2 ** x
            p = lib.pow(a.abs() + 1, y) + (y.abs() + 1) ** 0.5 + (x * x).rsqrt().clamp(0, 3)
            s = lib.cat([a.transpose(1, 2), b.permute(0, 2, 1)], dim=1)  # (2, 8, 3)
            t = lib.stack([x[:, 0], y[:, 1:3].sum(1), x[..., ::2].mean(-1)[:, :1].expand(2, 4)],
                          dim=-1)  # (2, 4, 3)
            u = x.reshape(2, -1).unsqueeze(1).squeeze(1).flatten(1)[:, 3:9]
            m = lib.matmul(x, y.transpose(1, 2)) + lib.bmm(y, x.transpose(1, 2)).exp()
            w = lib.where(x > y, x, y).masked_fill(x < -0.5, 0.25) + lib.maximum(x, y)
            r = x.var(1) + x.std(2, keepdim=True).sum(1) + x.amax(1) - x.sum(0, keepdim=True)[0, 0]
            g = (x.gather(2, lib.tensor([[[1], [0], [3]]]).expand(2, 3, 1))
                 + x[:, [0, 2]].sum(2, keepdim=True).sum(1, keepdim=True))
            e = self.table[i] + x[0][None, :, :1].squeeze(0)
            return (a, b, p.softmax(1)), s, t, u, m, w, r, g, (e * 1.5).neg()

    return Ops()


def test_elementwise_shape_and_index_ops():
    i = np.array([[4, 0, 2]], dtype=np.int64).reshape(3, 1)
    model = roundtrip(_ops_model, (_x(2, 3, 4), _x(2, 3, 4, seed=1), i))
    ops = {n.op_type for n in model.graph.node}
    assert {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Clip",
            "Concat", "Transpose", "Slice", "Gather", "Reshape", "ReduceMean", "ReduceSum",
            "ReduceMax", "MatMul", "Where", "Greater", "Less", "GatherElements",
            "Expand"} <= ops
    inits = {i.name for i in model.graph.initializer}
    assert {"offset", "table"} <= inits and len(model.graph.input) == 3
    assert len(model.graph.output) == 11


@pytest.mark.parametrize("opset", [13, 17, 18, 23])
def test_opset_versions(opset):
    """Reductions take axes as attributes before opset 18; GELU is a formula before 20."""
    def make(lib):
        return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.GELU(), lib.nn.GELU("tanh"),
                                 lib.nn.Softmax(1))

    class Reduce:
        @staticmethod
        def make(lib):
            class M(lib.nn.Module):
                def forward(self, x):
                    return x.mean(1) + x.amax(1) + x.var(1) + x.unbind(1)[2]

            return M()

    model = roundtrip(make, (_x(3, 4),), opset_version=opset)
    assert model.opset_import[0].version == opset
    roundtrip(Reduce.make, (_x(3, 4, 5),), opset_version=opset)


@pytest.mark.filterwarnings("ignore")  # torch warns about its TorchScript exporter and opset 30
def test_opset_out_of_range():
    for lib, fn in ((torch, lambda *a, **k: torch.onnx.export(*a, dynamo=False, **k)),
                    (glassgrad, glassgrad.onnx.export)):
        with pytest.raises(RuntimeError, match="Unsupported onnx_opset_version: 30"):
            fn(lib.nn.Linear(2, 2), (lib.randn(1, 2),), io.BytesIO(), opset_version=30)


def test_export_params_false_and_a_path(tmp_path):
    m = glassgrad.nn.Linear(3, 2)
    path = tmp_path / "m.onnx"
    glassgrad.onnx.export(m, (glassgrad.randn(4, 3),), str(path), export_params=False,
                          input_names=["x"])
    proto = onnx.load(str(path))
    assert not proto.graph.initializer
    assert [i.name for i in proto.graph.input] == ["x", "weight", "bias"]
    x = _x(4, 3)
    feeds = {"x": x, "weight": m.weight.detach().numpy(), "bias": m.bias.detach().numpy()}
    np.testing.assert_allclose(run_onnx(path.read_bytes(), feeds)[0],
                               m(glassgrad.from_numpy(x)).detach().numpy(), atol=ATOL)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_dynamic_axes_with_an_unknown_name_warns():
    def kwargs():  # NOTE: torch rewrites the dynamic_axes it is given (lists become dicts)
        return dict(input_names=["x"], dynamic_axes={"x": [0], "targets": {0: "batch"}})

    for lib, fn in ((torch, lambda *a, **k: torch.onnx.export(*a, dynamo=False, **k)),
                    (glassgrad, glassgrad.onnx.export)):
        with pytest.warns(UserWarning) as record:
            fn(lib.nn.Linear(2, 2), (lib.randn(1, 2),), io.BytesIO(), **kwargs())
        messages = [str(w.message) for w in record]
        for key in ("Provided key targets for dynamic axes is not a valid input/output name",
                    "Automatically generated names will be applied to each dynamic axes of "
                    "input x"):
            assert any(key in m for m in messages), (lib.__name__, messages)
    with pytest.warns(UserWarning):
        proto = export(glassgrad.nn.Linear(2, 2), (glassgrad.randn(1, 2),), **kwargs())[1]
    proto = proto.model_proto
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_dynamic_axes_1"


@pytest.mark.parametrize("kind,kw", [("GRU", {}), ("GRU", {"bidirectional": True}),
                                     ("RNN", {"nonlinearity": "relu", "batch_first": True}),
                                     ("RNN", {"bias": False})])
def test_gru_and_rnn(kind, kw):
    d = 2 if kw.get("bidirectional") else 1
    x = _x(2, 5, 3) if kw.get("batch_first") else _x(5, 2, 3)
    model = roundtrip(lambda lib: getattr(lib.nn, kind)(3, 4, 2, **kw),
                      (x, _x(2 * d, 2, 4, seed=1)))
    assert [n.op_type for n in model.graph.node].count(kind) == 2
    assert len(model.graph.output) == 2


def test_recurrent_export_keeps_the_sequence_length_dynamic():
    m = glassgrad.nn.GRU(3, 4)
    data, _ = export(m, (glassgrad.from_numpy(_x(5, 2, 3)),), input_names=["x"],
                     dynamic_axes={"x": {0: "time"}, "output": {0: "time"}})
    x = _x(9, 2, 3, seed=2)
    got = run_onnx(data, {"x": x})
    for a, b in zip(got, _flat(m(glassgrad.from_numpy(x)))):
        np.testing.assert_allclose(a, _numpy(b), atol=ATOL, rtol=ATOL)


def test_training_modes_and_initializers_as_inputs():
    m = glassgrad.nn.Sequential(glassgrad.nn.Linear(2, 3), glassgrad.nn.Dropout(0.5))
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(mod.training))
    _, program = export(m, (glassgrad.randn(1, 2),), training=glassgrad.onnx.TrainingMode.PRESERVE,
                        keep_initializers_as_inputs=True)
    assert seen == [True] and m.training
    g = program.model_proto.graph
    assert [i.name for i in g.input] == ["input", "0.weight", "0.bias"]
    assert {"0.weight", "0.bias"} <= {i.name for i in g.initializer}
    # train-mode dropout is ONNX's Dropout, random where it runs: about half the outputs are 0
    dropout = next(n for n in g.node if n.op_type == "Dropout")
    assert len(dropout.input) == 3
    m.eval()
    data, _ = export(m, (glassgrad.randn(1, 2),), training=glassgrad.onnx.TrainingMode.TRAINING,
                     dynamic_axes={"input": {0: "n"}, "output": {0: "n"}})
    assert seen[-1] is True and not m.training
    x = np.ones((2000, 2), np.float32)
    zeros = (run_onnx(data, {"input": x})[0] == 0).mean()
    assert 0.4 < zeros < 0.6
    with pytest.raises(TypeError):
        export(m, (glassgrad.randn(1, 2),), no_such_argument=1)


def test_onnx_program_save(tmp_path):
    m = glassgrad.nn.Linear(2, 3)
    program = glassgrad.onnx.export(m, (glassgrad.randn(1, 2),))
    program.save(str(tmp_path / "m.onnx"))
    x = _x(1, 2)
    np.testing.assert_allclose(run_onnx((tmp_path / "m.onnx").read_bytes(), {"input": x})[0],
                               m(glassgrad.from_numpy(x)).detach().numpy(), atol=ATOL)


def test_integer_casts_trace_and_detached_views_raise():
    class Cast(glassgrad.nn.Module):
        def forward(self, x):
            return (x * 3).long() + 1, (x > 0).float()

    x = _x(2, 3)
    data, _ = export(Cast(), (glassgrad.from_numpy(x),), dynamic_axes={"x": {0: "n"}})
    x2 = _x(4, 3, seed=5)
    got = run_onnx(data, {"x": x2})
    ours = Cast()(glassgrad.from_numpy(x2))
    for a, b in zip(got, ours):
        np.testing.assert_array_equal(a, _numpy(b))

    class Detached(glassgrad.nn.Module):
        def forward(self, x):
            return x + x.detach()[0]

    with pytest.raises(glassgrad.onnx.OnnxExporterError, match="detach"):
        export(Detached(), (glassgrad.from_numpy(x),))
    _assert_not_tracing()


def _more_ops_model(lib):
    """The rest of the op table: trigonometry, rounding, flips, repeats, splits, max/min over a
    dim with their indices, argmax, prod, logsumexp, products of vectors."""

    class More(lib.nn.Module):
        def forward(self, x, v):
            a = lib.add(x, x.sin().cos() * x.tanh().atan(), alpha=2) - lib.sub(x, 1, alpha=3)
            b = (x * 3).round() + x.floor() - x.ceil() + x.sign() * x.reciprocal().clamp(min=-2)
            c = (lib.nn.functional.hardswish(x) + lib.nn.functional.mish(x) + x.erf()
                 + lib.minimum(x, x.flip(1)) + x.clone().asinh())
            d = x.repeat(1, 2)[:, 2:6] + x.prod(1, keepdim=True) + x.logsumexp(1, keepdim=True)
            e = lib.cat(x.split([1, 3], dim=1)[::-1], 1) + lib.stack(x.unbind(0)) * 0.5
            values, indices = x.max(1)
            low, where = x.min(0, keepdim=True)
            f = values + x.amin(1) + x.min() + lib.mv(x, v) + lib.dot(v, v) + x.argmax(1)
            return a, b, c, d, e, f, indices, low, where, x.argmin(), x.argmax(0, keepdim=True)

    return More()


def test_more_ops():
    model = roundtrip(_more_ops_model, (_x(3, 4), _x(4, seed=1)))
    ops = {n.op_type for n in model.graph.node}
    assert {"Sin", "Cos", "Atan", "Round", "Floor", "Ceil", "Sign", "HardSwish", "Mish", "Erf",
            "Min", "Asinh", "Tile", "ReduceProd", "ReduceLogSumExp", "ArgMax", "ArgMin",
            "ReduceMin"} <= ops


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
    model = roundtrip(_attention_model, (_x(2, 5, 8),))
    assert "Softmax" in {n.op_type for n in model.graph.node}


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

    roundtrip(make, (_x(2, 2),))
    with pytest.raises(glassgrad.onnx.OnnxExporterError, match="DoubleBackward"):
        export(make(glassgrad, numpy_forward=True), (glassgrad.randn(2, 2),))
    _assert_not_tracing()


def _products_model(lib):
    class Products(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.linspace(-1, 1, 12).reshape(4, 3))
            self.b = lib.nn.Parameter(lib.linspace(0, 1, 3))

        def forward(self, x):
            return (lib.addmm(self.b, x, self.w), lib.mm(x, self.w), x @ self.w,
                    lib.nn.functional.linear(x, self.w.t()), lib.matmul(x[None], self.w))

    return Products()


def test_matrix_products():
    model = roundtrip(_products_model, (_x(2, 4),))
    assert {"MatMul", "Add"} <= {n.op_type for n in model.graph.node}


def test_conv_net_with_a_dynamic_batch():
    make = FAMILIES["conv2d"][0]
    m = make(glassgrad)
    m.eval()
    data, _ = export(m, (glassgrad.from_numpy(_x(2, 3, 16, 16)),), input_names=["images"],
                     dynamic_axes={"images": {0: "batch"}, "output": {0: "batch"}})
    x = _x(5, 3, 16, 16, seed=9)
    np.testing.assert_allclose(run_onnx(data, {"images": x})[0],
                               m(glassgrad.from_numpy(x)).detach().numpy(), atol=ATOL, rtol=ATOL)


def test_forward_that_writes_its_input_in_place():
    def make(lib):
        class Normalize(lib.nn.Module):
            def forward(self, x):
                x.sub_(0.5).div_(2.0)
                return (x * 3).relu_()

        return Normalize()

    x = _x(2, 3)
    user_input = glassgrad.from_numpy(x.copy())
    data, _ = export(make(glassgrad), (user_input,))
    np.testing.assert_array_equal(user_input.numpy(), x)  # the export wrote to its own copy
    expected = make(torch)(torch.from_numpy(x.copy())).numpy()
    np.testing.assert_allclose(run_onnx(data, {"x": x})[0], expected, atol=ATOL)


def _norms_sorts_model(lib):
    """Norms, cumulative sums, einsum, sort and topk (their indices are found outside the op),
    adaptive max pooling to 1, group norm, normalize."""

    class M(lib.nn.Module):
        def forward(self, x):
            F = lib.nn.functional
            n = x.norm(dim=1) + x.norm(p=1, dim=1) + x.norm() + x.norm(p=3, dim=1)
            s = (x.sort(1)[0] + x.sort(2, descending=True)[0] + x.cumsum(1)
                 + lib.einsum("bchw,bcwk->bchk", x, x))
            t = x.topk(2, dim=1)[0] + x.topk(2, dim=1, largest=False)[0]
            p = F.adaptive_max_pool2d(x, 1) + F.group_norm(x, 2) + F.normalize(x, dim=1)
            return n, s, t, p, lib.einsum("bchw->bw", x)

    return M()


def test_norms_sorts_and_einsum():
    model = roundtrip(_norms_sorts_model, (_x(2, 4, 3, 3),))
    assert {"ReduceL2", "CumSum", "Einsum", "TopK", "GlobalMaxPool"} <= {
        n.op_type for n in model.graph.node}


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

    model = roundtrip(make, (_x(3, 4),))
    assert {"ReduceMax", "ReduceMean", "Div"} <= {n.op_type for n in model.graph.node}
    data, _ = export(make(glassgrad), (glassgrad.from_numpy(_x(3, 4)),))
    x = _x(3, 4, seed=8)  # another input: the statistics are computed, not frozen
    np.testing.assert_allclose(run_onnx(data, {"x": x})[0],
                               make(torch)(torch.from_numpy(x)).numpy(), atol=ATOL)
    assert glassgrad.is_grad_enabled() and not glassgrad.is_inference_mode_enabled()
