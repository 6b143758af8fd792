"""glassgrad.save / glassgrad.load against torch.save / torch.load and safetensors."""

from __future__ import annotations

import collections
import io
import json
import os
import pickle

import ml_dtypes
import numpy as np
import pytest
import safetensors.torch
import torch

import glassgrad
from glassgrad import serialization

from .oracle import to_np

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
          "bool"]


def _array(name, shape, rng):
    if name == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if name == "bfloat16":
        return np.asarray(rng.standard_normal(shape), dtype=ml_dtypes.bfloat16)
    if name.startswith("float"):
        return np.asarray(rng.standard_normal(shape), dtype=name)
    return np.asarray(rng.integers(-100 if name != "uint8" else 0, 100, shape), dtype=name)


def to_torch(value):
    """The torch twin of a glassgrad object (tensors copied, structure kept)."""
    if isinstance(value, glassgrad.Tensor):
        arr = np.asarray(value.detach()._array)
        if arr.dtype == ml_dtypes.bfloat16:
            t = torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(arr.copy())
        return t.requires_grad_(value.requires_grad)
    if isinstance(value, dict):
        return type(value)((k, to_torch(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value


def assert_same(ours, theirs, path="obj"):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, glassgrad.Tensor), path
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], path
        assert tuple(ours.shape) == tuple(theirs.shape), path
        assert ours.requires_grad == theirs.requires_grad, path
        np.testing.assert_array_equal(to_np(ours), to_np(theirs), err_msg=path)
        return
    assert type(ours) is type(theirs), f"{path}: {type(ours)} vs {type(theirs)}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), path
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, float) and np.isnan(theirs):
        assert np.isnan(ours), path
    else:
        assert ours == theirs, path


def roundtrip_vs_torch(obj, tmp_path):
    """Save/load ``obj`` with glassgrad and its twin with torch; the results must agree."""
    glassgrad.save(obj, tmp_path / "g.ckpt")
    torch.save(to_torch(obj), tmp_path / "t.pt")
    ours = glassgrad.load(tmp_path / "g.ckpt")
    assert_same(ours, torch.load(tmp_path / "t.pt", weights_only=True))
    return ours


def test_every_dtype_and_layout_round_trips(tmp_path, rng):
    obj = {}
    for name in DTYPES:
        obj[name] = glassgrad.from_numpy(_array(name, (3, 4), rng))
        obj[name + "_0d"] = glassgrad.from_numpy(_array(name, (), rng))
        obj[name + "_empty"] = glassgrad.from_numpy(_array(name, (0, 2), rng))
    obj["transposed"] = glassgrad.from_numpy(_array("float32", (3, 5), rng)).t()
    obj["scalar_result"] = glassgrad.ones(3).sum()
    obj["requires_grad"] = glassgrad.randn(2, requires_grad=True)
    ours = roundtrip_vs_torch(obj, tmp_path)
    for name, t in ours.items():
        assert t._array.flags.writeable, name
    ours["float32"].add_(1)  # loaded tensors are ordinary writable tensors


def test_optimizer_like_state_round_trips(tmp_path, rng):
    def t(*shape):
        return glassgrad.from_numpy(rng.standard_normal(shape).astype(np.float32))

    obj = {
        "model": collections.OrderedDict([("fc.weight", t(3, 2)), ("fc.bias", t(3)),
                                          ("bn.num_batches_tracked", glassgrad.tensor(7))]),
        "optimizer": {
            "state": {0: {"step": glassgrad.tensor(3.0), "exp_avg": t(3, 2), "exp_avg_sq": t(3, 2)},
                      1: {"step": glassgrad.tensor(3.0), "momentum_buffer": None}},
            "param_groups": [{"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                              "weight_decay": 0, "amsgrad": False, "foreach": None,
                              "maximize": False, "name": "all"}],
        },
        "epoch": 12, "big": 2**70, "neg_zero": -0.0, "specials": [float("inf"), float("-inf")],
        "nan": float("nan"), "nested": [[1, (2, [3.5, "x"])], {"k": (None, True)}],
        "mixed_keys": {1: "a", "b": 2, (1, 2): [3], None: 0, 2.5: "f", False: "no"},
        "blob": b"\x00\xffbytes", "empty": {}, "empty_list": [], "empty_tuple": (),
    }
    ours = roundtrip_vs_torch(obj, tmp_path)
    assert isinstance(ours["model"], collections.OrderedDict)
    assert str(ours["neg_zero"]) == "-0.0" and ours["big"] == 2**70
    scalar = glassgrad.save(glassgrad.arange(3), tmp_path / "single")
    assert scalar is None and glassgrad.load(tmp_path / "single").tolist() == [0, 1, 2]
    glassgrad.save({"dtype": glassgrad.bfloat16, "n": np.int64(4)}, tmp_path / "misc")
    assert glassgrad.load(tmp_path / "misc") == {"dtype": glassgrad.bfloat16, "n": 4}


def test_shared_tensors_are_stored_once_and_come_back_sharing(tmp_path, rng):
    w = glassgrad.from_numpy(rng.standard_normal((64, 32)).astype(np.float32))
    tied = {"encoder.weight": w, "decoder.weight": w.detach(), "same_object": w,
            "again": [w]}
    out = roundtrip_vs_torch(tied, tmp_path)
    assert os.path.getsize(tmp_path / "g.ckpt") < w.nbytes * 1.5  # one copy of the data on disk
    tw = torch.from_numpy(w.numpy().copy())
    torch.save({"encoder.weight": tw, "decoder.weight": tw.detach(), "same_object": tw,
                "again": [tw]}, tmp_path / "t.pt")
    theirs = torch.load(tmp_path / "t.pt")
    for lib_out, shares in ((out, lambda a, b: np.shares_memory(a.numpy(), b.numpy())),
                            (theirs, lambda a, b: a.data_ptr() == b.data_ptr())):
        assert lib_out["same_object"] is lib_out["encoder.weight"] is lib_out["again"][0]
        assert lib_out["decoder.weight"] is not lib_out["encoder.weight"]
        assert shares(lib_out["decoder.weight"], lib_out["encoder.weight"])

    views = {"w": w, "t": w.t(), "row": w[3], "cols": w[:, 5:9], "strided": w[::2]}
    glassgrad.save(views, tmp_path / "views")
    assert os.path.getsize(tmp_path / "views") < w.nbytes * 1.5
    back = glassgrad.load(_save({**views, "copy": w.flip(0)}, tmp_path / "views"))
    for k, v in views.items():
        np.testing.assert_array_equal(back[k].numpy(), np.asarray(v.numpy()), err_msg=k)
    back["w"].mul_(0).add_(1)  # writes through the one buffer reach every view
    for k in views:
        assert np.all(back[k].numpy() == 1), k
    assert not np.any(back["copy"].numpy() == 1)  # a copy stays a copy
    # partial overlap of two slices that never saw their base
    halves = {"a": w[:40], "b": w[30:]}
    back = glassgrad.load(_save(halves, tmp_path / "halves"))
    back["a"][35].zero_()
    assert np.all(back["b"][5].numpy() == 0)


def _save(obj, path):
    glassgrad.save(obj, path)
    return path


def test_files_interoperate_with_safetensors(tmp_path, rng):
    sd = {"fc.weight": glassgrad.from_numpy(_array("float32", (3, 2), rng)),
          "half": glassgrad.from_numpy(_array("bfloat16", (4,), rng))}
    glassgrad.save(sd, tmp_path / "g.safetensors")
    theirs = safetensors.torch.load_file(tmp_path / "g.safetensors")
    assert_same(sd, theirs)
    plain = {"a": torch.randn(2, 3), "b": torch.arange(4), "c": torch.randn(2).to(torch.bfloat16)}
    safetensors.torch.save_file(plain, tmp_path / "plain.safetensors")
    assert_same(glassgrad.load(tmp_path / "plain.safetensors"), plain)


def test_file_objects_and_ignored_arguments(tmp_path):
    buf = io.BytesIO()
    glassgrad.save({"x": glassgrad.arange(3)}, buf, pickle_protocol=2)
    buf.seek(0)
    out = glassgrad.load(buf, map_location="cpu", weights_only=False, mmap=False)
    assert out["x"].tolist() == [0, 1, 2]
    torch.save({"x": torch.arange(3)}, tmp_path / "t.pt")
    with open(tmp_path / "t.pt", "rb") as theirs, pytest.raises(ValueError) as torch_error:
        torch.load(theirs, mmap=True)
    buf.seek(0)
    with pytest.raises(ValueError) as our_error:
        glassgrad.load(buf, mmap=True)  # mmap needs a path, in torch as here
    assert str(our_error.value) == str(torch_error.value)
    glassgrad.save([1], str(tmp_path / "s"))
    assert glassgrad.load(str(tmp_path / "s"), weights_only=True) == [1]


def test_parameters_round_trip(tmp_path):
    nn = pytest.importorskip("glassgrad.nn")
    p = nn.Parameter(glassgrad.randn(3))
    out = glassgrad.load(_save({"p": p, "alias": p.detach()}, tmp_path / "p"))
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert not isinstance(out["alias"], nn.Parameter) and not out["alias"].requires_grad
    assert np.shares_memory(out["p"]._array, out["alias"]._array)


def test_missing_folder_matches_torch(tmp_path):
    with pytest.raises(RuntimeError) as theirs:
        torch.save({}, tmp_path / "nope" / "t.pt")
    with pytest.raises(RuntimeError) as ours:
        glassgrad.save({}, tmp_path / "nope" / "g.ckpt")
    assert str(ours.value) == str(theirs.value)


def test_unsupported_objects_are_refused():
    with pytest.raises(TypeError, match="cannot save an object of type generator at a.0"):
        glassgrad.save({"a": [(i for i in range(2))]}, io.BytesIO())
    with pytest.raises(TypeError, match="never pickles"):
        glassgrad.save(object(), io.BytesIO())
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        glassgrad.save(loop, io.BytesIO())


def test_writes_are_atomic(tmp_path, monkeypatch):
    path = tmp_path / "ckpt"
    glassgrad.save({"v": glassgrad.ones(1000)}, path)
    before = path.read_bytes()

    def crash_half_way(f, payload):
        f.write(payload[: len(payload) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write_all", crash_half_way)
    with pytest.raises(OSError, match="disk full"):
        glassgrad.save({"v": glassgrad.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt"]
    assert glassgrad.load(path)["v"].sum().item() == 1000

    def crash_on_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", crash_on_replace)
    with pytest.raises(KeyboardInterrupt):
        glassgrad.save({"v": glassgrad.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt"]
    glassgrad.save({"v": glassgrad.zeros(1000)}, path)
    assert glassgrad.load(path)["v"].sum().item() == 0


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickle_payloads_are_rejected_and_never_run(tmp_path):
    marker = str(tmp_path / "pwned")
    crafted = tmp_path / "evil.pt"
    crafted.write_bytes(pickle.dumps({"weight": _Payload(marker)}))
    with pytest.raises(ValueError, match="Weights only load failed"):
        glassgrad.load(crafted)  # read as a legacy torch file: restricted unpickler
    torch.save({"w": torch.zeros(2), "evil": _Payload(marker)}, tmp_path / "torch.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        glassgrad.load(tmp_path / "torch.pt")  # a torch zip file: restricted unpickler
    # a pickle smuggled into the metadata of a real safetensors file is only ever read as JSON
    smuggled = pickle.dumps(_Payload(marker)).hex()
    for structure in (json.dumps({"pickle": smuggled}), smuggled, json.dumps({"tensor": "nope"})):
        from safetensors.numpy import save as st_save

        data = st_save({"a": np.zeros(2, np.float32)},
                       metadata={"glassgrad": "1", "structure": structure, "tensors": "{}"})
        (tmp_path / "meta").write_bytes(data)
        with pytest.raises(ValueError, match="malformed glassgrad structure"):
            glassgrad.load(tmp_path / "meta")
    assert not os.path.exists(marker)


@pytest.mark.parametrize("content", [b"", b"hello world, not a checkpoint", b"\xff" * 64,
                                     b"\x10\x00\x00\x00\x00\x00\x00\x00[1, 2, 3, 4, 5, 6, 7]  "])
def test_non_checkpoints_give_a_clear_error(tmp_path, content):
    (tmp_path / "f").write_bytes(content)
    with pytest.raises(ValueError, match="is not a glassgrad checkpoint"):
        glassgrad.load(tmp_path / "f")
    future = safetensors.torch.save({"a": torch.zeros(1)}, metadata={"glassgrad": "99"})
    with pytest.raises(ValueError, match="format version '99'"):
        glassgrad.load(io.BytesIO(future))


def test_training_resumes_exactly_from_a_checkpoint(tmp_path):
    nn, optim = pytest.importorskip("glassgrad.nn"), pytest.importorskip("glassgrad.optim")
    x, y = glassgrad.randn(8, 3), glassgrad.randn(8, 2)

    def make():
        glassgrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        return model, optim.Adam(model.parameters(), lr=0.1)

    def steps(model, opt, n):
        for _ in range(n):
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            opt.step()

    straight, straight_opt = make()
    steps(straight, straight_opt, 4)
    model, opt = make()
    steps(model, opt, 2)
    glassgrad.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ck")
    resumed, resumed_opt = make()
    ck = glassgrad.load(tmp_path / "ck")
    resumed.load_state_dict(ck["model"])
    resumed_opt.load_state_dict(ck["opt"])
    steps(resumed, resumed_opt, 2)
    for a, b in zip(resumed.parameters(), straight.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _views_of_one_buffer(lib):
    w = lib.arange(20, dtype=lib.float32).reshape(4, 5)
    v = lib.arange(5, dtype=lib.float32)
    return {"w": w, "diag": w.diagonal(), "diag1": w.diagonal(1), "diagT": w.t().diagonal(-1),
            "narrow": w.narrow(1, 1, 3), "flat": w.view(-1), "v": v, "expand": v.expand(3, 5)}


def test_views_through_diagonal_and_expand_come_back_tied_like_torch(tmp_path):
    # NOTE: diagonal() and expand() are NumPy as_strided views, whose base is no ndarray
    written = {}
    for lib, path in ((glassgrad, tmp_path / "g"), (torch, tmp_path / "t")):
        lib.save(_views_of_one_buffer(lib), path)
        out = lib.load(path)
        with lib.no_grad():
            out["w"].mul_(0).add_(-1)
            out["v"].fill_(-2)
        written[lib] = {k: t.detach().clone() for k, t in out.items()}
    assert_same(written[glassgrad], written[torch])
    assert all(bool((t < 0).all()) for t in written[torch].values())
    # a module whose weight is tied to a parameter through a diagonal view
    for lib, path in ((glassgrad, tmp_path / "gm"), (torch, tmp_path / "tm")):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 3)
        lib.save({"model": lin.state_dict(), "scale": lin.weight.detach().diagonal()}, path)
        back = lib.load(path)
        with lib.no_grad():
            back["scale"].fill_(5.0)
        written[lib] = back["model"]["weight"].diagonal().tolist()
    assert written[glassgrad] == written[torch] == [5.0, 5.0, 5.0]
