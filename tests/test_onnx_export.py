"""glassgrad.onnx.export against torch and onnxruntime: each family of models is built on both
libraries with the same weights, exported by glassgrad, checked by onnx.checker, run in
onnxruntime, and compared with glassgrad's output and with torch's; the exporter's arguments
and errors against torch.onnx.export."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
import torch

import glassgrad

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from tests.onnx_oracle import (  # noqa: E402 - after the skips
    ATOL, assert_not_tracing, export, roundtrip, run_onnx, sample, to_numpy,
)


def test_mlp_gemm_relu_and_names():
    model = roundtrip(lambda nn: nn.nn.Sequential(nn.nn.Linear(3, 8), nn.nn.ReLU(),
                                                  nn.nn.Linear(8, 2)),
                      (sample(5, 3),), input_names=["x"], output_names=["y"])
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
    model = roundtrip(make, tuple(sample(*s, seed=i) for i, s in enumerate(shapes)))
    assert must_have <= {n.op_type for n in model.graph.node}


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
    assert_not_tracing()


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
    assert_not_tracing()


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
    model = roundtrip(_ops_model, (sample(2, 3, 4), sample(2, 3, 4, seed=1), i))
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

    model = roundtrip(make, (sample(3, 4),), opset_version=opset)
    assert model.opset_import[0].version == opset
    roundtrip(Reduce.make, (sample(3, 4, 5),), opset_version=opset)


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
    x = sample(4, 3)
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
    x = sample(1, 2)
    np.testing.assert_allclose(run_onnx((tmp_path / "m.onnx").read_bytes(), {"input": x})[0],
                               m(glassgrad.from_numpy(x)).detach().numpy(), atol=ATOL)


def test_integer_casts_trace_and_detached_views_raise():
    class Cast(glassgrad.nn.Module):
        def forward(self, x):
            return (x * 3).long() + 1, (x > 0).float()

    x = sample(2, 3)
    data, _ = export(Cast(), (glassgrad.from_numpy(x),), dynamic_axes={"x": {0: "n"}})
    x2 = sample(4, 3, seed=5)
    got = run_onnx(data, {"x": x2})
    ours = Cast()(glassgrad.from_numpy(x2))
    for a, b in zip(got, ours):
        np.testing.assert_array_equal(a, to_numpy(b))

    class Detached(glassgrad.nn.Module):
        def forward(self, x):
            return x + x.detach()[0]

    with pytest.raises(glassgrad.onnx.OnnxExporterError, match="detach"):
        export(Detached(), (glassgrad.from_numpy(x),))
    assert_not_tracing()


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
    model = roundtrip(_more_ops_model, (sample(3, 4), sample(4, seed=1)))
    ops = {n.op_type for n in model.graph.node}
    assert {"Sin", "Cos", "Atan", "Round", "Floor", "Ceil", "Sign", "HardSwish", "Mish", "Erf",
            "Min", "Asinh", "Tile", "ReduceProd", "ReduceLogSumExp", "ArgMax", "ArgMin",
            "ReduceMin"} <= ops


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
    model = roundtrip(_products_model, (sample(2, 4),))
    assert {"MatMul", "Add"} <= {n.op_type for n in model.graph.node}


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
    model = roundtrip(_norms_sorts_model, (sample(2, 4, 3, 3),))
    assert {"ReduceL2", "CumSum", "Einsum", "TopK", "GlobalMaxPool"} <= {
        n.op_type for n in model.graph.node}


def test_conv_net_with_a_dynamic_batch():
    make = FAMILIES["conv2d"][0]
    m = make(glassgrad)
    m.eval()
    data, _ = export(m, (glassgrad.from_numpy(sample(2, 3, 16, 16)),), input_names=["images"],
                     dynamic_axes={"images": {0: "batch"}, "output": {0: "batch"}})
    x = sample(5, 3, 16, 16, seed=9)
    np.testing.assert_allclose(run_onnx(data, {"images": x})[0],
                               m(glassgrad.from_numpy(x)).detach().numpy(), atol=ATOL, rtol=ATOL)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("axes", [{5: "b"}, [0, 5], [1]])
def test_dynamic_axes_past_the_input_dims_and_their_generated_names_as_in_torch(axes):
    import onnx

    results = []
    for lib, fn in ((torch, lambda *a, **k: torch.onnx.export(*a, dynamo=False, **k)),
                    (glassgrad, glassgrad.onnx.export)):
        buf = io.BytesIO()
        try:
            fn(lib.nn.Linear(3, 2), (lib.ones(1, 3),), buf, input_names=["x"],
               dynamic_axes={"x": axes})
        except RuntimeError as err:
            line = [m for m in str(err).split("\n") if "Dynamic shape axis" in m]
            results.append(("error", line[0].strip() if line else str(err)))
            continue
        dims = onnx.load_from_string(buf.getvalue()).graph.input[0].type.tensor_type.shape.dim
        results.append(("ok", [d.dim_param or d.dim_value for d in dims]))
    assert results[0] == results[1]
