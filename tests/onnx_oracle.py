"""Export a glassgrad model to ONNX, run the file in onnxruntime, and compare with glassgrad and
with the same model built in torch (tests/test_onnx_export*.py). Import after
``pytest.importorskip("onnx")`` and ``("onnxruntime")``."""

from __future__ import annotations

import io
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch

import glassgrad
from tests.oracle import copy_params

ATOL = 1e-5


def to_lib_array(lib, a):
    """A copy of the NumPy array ``a`` as a tensor of ``lib`` (torch or glassgrad)."""
    return lib.from_numpy(a.copy())


def structure(lib, value):
    """Arrays nested in tuples and lists as ``lib``'s tensors, the nesting kept."""
    if isinstance(value, np.ndarray):
        return to_lib_array(lib, value)
    if isinstance(value, (tuple, list)):
        return tuple(structure(lib, v) for v in value)
    return value


def flat(out):
    """The tensors of a nested output, in order."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def to_numpy(t):
    """A torch or glassgrad tensor's values as a NumPy array."""
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach()._array


def run_onnx(data: bytes, feeds) -> list:
    """onnx.checker on the file, then onnxruntime's outputs for ``feeds`` (name -> array)."""
    onnx.checker.check_model(onnx.load_from_string(data))
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def export(module, args, **kw) -> tuple:
    """glassgrad.onnx.export into memory: (the file's bytes, the ONNXProgram)."""
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
    data, program = export(g_mod, structure(glassgrad, inputs), **kw)
    flat_in = flat(list(inputs))
    names = [i.name for i in program.model_proto.graph.input]
    got = run_onnx(data, dict(zip(names, flat_in)))
    ours = [to_numpy(t) for t in flat(g_mod(*structure(glassgrad, inputs)))]
    with torch.no_grad():
        theirs = [to_numpy(t) for t in flat(t_mod(*structure(torch, inputs)))]
    assert len(got) == len(ours) == len(theirs)
    for a, b, c in zip(got, ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape == c.shape
        np.testing.assert_allclose(a, b, atol=atol, rtol=atol)
        np.testing.assert_allclose(a, c, atol=atol, rtol=atol)
    return program.model_proto


def sample(*shape, seed=0):
    """A float32 standard-normal array of ``shape``."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_not_tracing():
    """After an export, even a failed one: no switch left on, no patch left in place."""
    from glassgrad.autograd.graph import _Hooks

    assert _Hooks.trace is None and not _Hooks.watch_ops and not _Hooks.any_on
    assert glassgrad.autograd.grad_mode._set_grad.__name__ == "_set_grad"
    assert glassgrad.ops.indexing.index_snapshot.__name__ == "index_snapshot"
    spaces = [vars(m) for n, m in sys.modules.items() if n.startswith("glassgrad")]
    for space in spaces + [vars(glassgrad.Tensor), vars(glassgrad.nn.LSTM)]:
        for value in list(space.values()):
            assert getattr(value, "__qualname__", "") != "_wrap.<locals>.wrapper", value
    assert not glassgrad.onnx.is_in_onnx_export()
