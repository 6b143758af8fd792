"""PyTorch's own checkpoint files: what real ``torch.save`` writes loads in glassgrad (values,
dtypes, views, Parameters, map_location), a state dict from a torch model drives a glassgrad model
to the same outputs, and what glassgrad refuses it refuses as torch does. Hostile torch files are
in tests/test_reliability_checkpoints.py."""

from __future__ import annotations

import argparse
import collections
import io
import pickle

import numpy as np
import pytest
import torch

import glassgrad

from .test_serialization import assert_same, to_torch

TORCH_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                "uint8", "bool"]


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_tensors_of_every_dtype_load_with_their_views(dtype):
    torch.manual_seed(0)
    base = (torch.randn(4, 6) * 20).to(getattr(torch, dtype))
    obj = {"base": base, "rows": base[1:3], "t": base.t(), "strided": base[::2, 1::3],
           "scalar": base[2, 2], "empty": base[:0], "grad": torch.ones(2, requires_grad=True)}
    ours = glassgrad.load(_saved(obj))
    assert_same(ours, torch.load(_saved(obj)))
    for name in ("rows", "t", "strided", "scalar"):
        assert np.shares_memory(ours[name].numpy(), ours["base"].numpy()), name
    item = obj["t"].element_size()
    assert ours["t"].numpy().strides == tuple(s * item for s in obj["t"].stride())
    with glassgrad.no_grad():
        ours["base"][2, 3] = 1
    assert ours["rows"][1, 3].item() == ours["t"][3, 2].item() == 1


def test_containers_numbers_and_parameters_as_torch_loads_them():
    obj = {"model": collections.OrderedDict(w=torch.nn.Parameter(torch.ones(2, 3))),
           "step": 7, "loss": 0.25, "nan": float("nan"), "name": "x", "none": None,
           "blob": b"\x00\xff", "tuple": (1, [2, 3]), "keys": {1: "a", (2, 3): "b"},
           "set": {1, 2}, "complex": 1 - 2j, "size": torch.Size([2, 3]),
           "dtype": torch.bfloat16, "device": torch.device("cpu"), "bytearray": bytearray(b"ab")}
    ours = glassgrad.load(_saved(obj))
    theirs = torch.load(_saved(obj))
    assert isinstance(ours["model"], collections.OrderedDict)
    assert type(ours["model"]["w"]) is glassgrad.nn.Parameter and ours["model"]["w"].requires_grad
    np.testing.assert_array_equal(ours["model"]["w"].detach().numpy(),
                                  theirs["model"]["w"].detach().numpy())
    for key in ("step", "loss", "name", "none", "blob", "tuple", "keys", "set", "complex",
                "bytearray"):
        assert ours[key] == theirs[key] and type(ours[key]) is type(theirs[key]), key
    assert np.isnan(ours["nan"]) and list(ours["size"]) == [2, 3]
    assert ours["dtype"] is glassgrad.bfloat16 and str(ours["device"]) == "cpu"


def test_a_torch_state_dict_drives_a_glassgrad_model_to_the_same_outputs(tmp_path):
    def net(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                                 lib.nn.Flatten(), lib.nn.Linear(4 * 6 * 6, 5))

    torch.manual_seed(0)
    theirs = net(torch)
    theirs.train()
    theirs(torch.randn(8, 1, 8, 8))  # BatchNorm running stats and num_batches_tracked move
    theirs.eval()
    torch.save(theirs.state_dict(), tmp_path / "torch.pt")
    ours = net(glassgrad).eval()
    result = ours.load_state_dict(glassgrad.load(tmp_path / "torch.pt"))
    assert not result.missing_keys and not result.unexpected_keys
    x = np.random.default_rng(0).standard_normal((2, 1, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(ours(glassgrad.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert ours[1].num_batches_tracked.item() == 1


def test_a_torch_optimizer_checkpoint_resumes_in_glassgrad(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 1},
               tmp_path / "ckpt.pt")
    ckpt = glassgrad.load(tmp_path / "ckpt.pt")
    ours = glassgrad.nn.Linear(3, 2)
    ours.load_state_dict(ckpt["model"])
    our_opt = glassgrad.optim.Adam(ours.parameters(), lr=0.1)
    our_opt.load_state_dict(ckpt["optimizer"])
    for lib, m, o in ((torch, model, opt), (glassgrad, ours, our_opt)):
        o.zero_grad()
        m(lib.ones(4, 3)).sum().backward()
        o.step()
    np.testing.assert_allclose(ours.weight.detach().numpy(), model.weight.detach().numpy(),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("map_location", ["cpu", "device", {"cpu": "cpu"}, "callable", None])
def test_map_location_as_torch_accepts_it(map_location, tmp_path):
    torch.save({"w": torch.arange(3.0)}, tmp_path / "t.pt")
    seen = []
    if map_location == "device":
        map_location = glassgrad.device("cpu")
    elif map_location == "callable":
        def map_location(storage, location):
            seen.append(location)
            return storage
    ours = glassgrad.load(tmp_path / "t.pt", map_location=map_location)
    assert ours["w"].tolist() == [0.0, 1.0, 2.0]
    assert seen in ([], ["cpu"])


def test_cuda_locations_fail_as_in_torch_on_a_cpu_machine(tmp_path):
    torch.save({"w": torch.arange(3.0)}, tmp_path / "t.pt")
    if torch.cuda.is_available():  # pragma: no cover - the oracle is the CPU build
        pytest.skip("torch has a GPU here")
    with pytest.raises(RuntimeError) as theirs:
        torch.load(tmp_path / "t.pt", map_location="cuda")
    with pytest.raises(RuntimeError) as ours:
        glassgrad.load(tmp_path / "t.pt", map_location="cuda")
    assert str(ours.value).startswith(str(theirs.value) + "\nglassgrad.load: ")
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        glassgrad.load(tmp_path / "t.pt", map_location=lambda s, loc: s.cuda())


def test_refusals_match_torch():
    with_numpy = _saved({"a": np.arange(3)})
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(with_numpy)
    with_numpy.seek(0)
    with pytest.raises(pickle.UnpicklingError) as ours:
        glassgrad.load(with_numpy)
    for err in (theirs, ours):
        assert "Weights only load failed" in str(err.value)
    assert "GLOBAL numpy" in str(ours.value) and "Nothing in the file was run" in str(ours.value)
    with pytest.raises(pickle.UnpicklingError, match="Nothing in the file was run"):
        glassgrad.load(_saved({"c": torch.ones(2, dtype=torch.complex32)}))


def test_complex_tensors_round_trip_with_torch(tmp_path):
    ref = {"a": torch.randn(2, 3, dtype=torch.cfloat), "b": torch.randn(5, dtype=torch.cdouble)}
    ref["view"] = ref["b"][1::2]
    ours = glassgrad.load(_saved(ref))
    for key, value in ref.items():
        assert ours[key].dtype.name == str(value.dtype).split(".")[1]
        np.testing.assert_array_equal(ours[key].numpy(), value.numpy())
    glassgrad.save(ours, tmp_path / "c.pt", format="torch")
    back = torch.load(tmp_path / "c.pt", weights_only=True)
    for key, value in ref.items():
        assert back[key].dtype == value.dtype and torch.equal(back[key], value)
    glassgrad.save(ours, tmp_path / "c.safetensors")
    native = glassgrad.load(tmp_path / "c.safetensors")
    for key, value in ref.items():
        np.testing.assert_array_equal(native[key].numpy(), value.numpy())


def test_unseekable_streams_and_the_allowlist_under_the_alias():
    class Stream(io.RawIOBase):
        def __init__(self, data):
            self._data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, buf):
            return self._data.readinto(buf)

    assert glassgrad.load(Stream(_saved({"w": torch.ones(2)}).getvalue()))["w"].tolist() == [1, 1]
    counter = _saved(collections.Counter("aab"))
    assert glassgrad.load(counter) == collections.Counter("aab")


def _ours_for_torch(obj, tmp_path, name="g.pt"):
    glassgrad.save(obj, tmp_path / name, format="torch")
    return torch.load(tmp_path / name, weights_only=True)


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_glassgrad_writes_files_torch_reads(dtype, tmp_path):
    base = (glassgrad.arange(24, dtype=glassgrad.float32).reshape(4, 6) / 3 - 2).to(
        getattr(glassgrad, dtype))
    obj = {"base": base, "rows": base[1:3], "t": base.t(), "strided": base[::2, 1::3],
           "scalar": base[2, 2], "empty": base[:0], "flipped": base.flip(0),
           "grad": glassgrad.ones(2).requires_grad_(), "param": glassgrad.nn.Parameter(
               glassgrad.ones(3)), "step": 3, "lr": 0.5, "none": None, "name": "adam",
           "betas": (0.9, 0.999), "keys": {1: [2, {3}]}, "blob": b"\x00\xff", "c": 2j,
           "dtype": glassgrad.float16, "size": glassgrad.Size([2, 3])}
    theirs = _ours_for_torch(obj, tmp_path)
    twin = to_torch({k: v for k, v in obj.items() if k not in ("dtype", "size")})
    assert type(theirs["param"]) is torch.nn.Parameter and theirs["param"].requires_grad
    twin["param"] = torch.nn.Parameter(twin["param"])
    back = glassgrad.load(tmp_path / "g.pt")  # glassgrad reads it back alike
    assert back.pop("dtype") is glassgrad.float16 and type(back.pop("size")) is glassgrad.Size
    assert_same(back, {k: v for k, v in theirs.items() if k not in ("dtype", "size")})
    for key, value in twin.items():
        if isinstance(value, torch.Tensor):
            assert value.dtype == theirs[key].dtype and value.shape == theirs[key].shape, key
            assert value.requires_grad == theirs[key].requires_grad, key
            assert torch.equal(value.detach(), theirs[key].detach()), key
        else:
            assert value == theirs[key] and type(value) is type(theirs[key]), key
    assert theirs["dtype"] is torch.float16 and theirs["size"] == torch.Size([2, 3])
    ptr = theirs["base"].untyped_storage().data_ptr()
    for name in ("rows", "t", "strided", "scalar"):  # views share one storage, as in torch
        assert theirs[name].untyped_storage().data_ptr() == ptr, name
        item = theirs[name].element_size()
        assert obj[name].numpy().strides == tuple(s * item for s in theirs[name].stride()), name
    theirs["base"][2, 2] = 1
    assert theirs["scalar"].item() == 1
    mapped = torch.load(tmp_path / "g.pt", weights_only=True, mmap=True)  # storages aligned
    assert torch.equal(mapped["base"], _ours_for_torch(obj, tmp_path, "again.pt")["base"])


def test_a_glassgrad_state_dict_drives_a_torch_model(tmp_path):
    def net(lib):
        return lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.LayerNorm(8), lib.nn.Tanh(),
                                 lib.nn.Linear(8, 3))

    ours = net(glassgrad)
    opt = glassgrad.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    ours(glassgrad.tensor(x)).sum().backward()
    opt.step()
    glassgrad.save({"model": ours.state_dict(), "optimizer": opt.state_dict(), "epoch": 1},
                   tmp_path / "ckpt.pt", format="torch")
    ckpt = torch.load(tmp_path / "ckpt.pt")
    theirs = net(torch)
    theirs.load_state_dict(ckpt["model"])
    torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9).load_state_dict(ckpt["optimizer"])
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(),
                               ours(glassgrad.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_what_torch_could_not_read_is_refused_when_writing():
    for obj in ({"a": np.arange(3)}, {"ns": __import__("argparse").Namespace(a=1)},
                frozenset({1})):
        with pytest.raises(TypeError, match="cannot save an object of type"):
            glassgrad.save(obj, io.BytesIO(), format="torch")
    with pytest.raises(ValueError, match="format must be 'glassgrad' or 'torch'"):
        glassgrad.save({}, io.BytesIO(), format="pickle")


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_legacy_torch_files_load(dtype, tmp_path):
    base = (torch.arange(24.0).reshape(4, 6) / 3 - 2).to(getattr(torch, dtype))
    obj = {"base": base, "rows": base[1:3], "t": base.t(), "other": base[0].clone(),
           "param": torch.nn.Parameter(torch.ones(3)), "step": 3, "names": ["a", "b"]}
    torch.save(obj, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    ours = glassgrad.load(tmp_path / "legacy.pt")
    assert_same(ours, torch.load(tmp_path / "legacy.pt"))
    assert np.shares_memory(ours["rows"].numpy(), ours["base"].numpy())
    assert not np.shares_memory(ours["other"].numpy(), ours["base"].numpy())
    with open(tmp_path / "legacy.pt", "rb") as f:
        assert_same(glassgrad.load(io.BytesIO(f.read()))["t"], obj["t"])


def test_a_whole_torch_model_loads_as_glassgrad_modules_when_allowlisted(tmp_path):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    torch.save(theirs, tmp_path / "model.pt")
    with pytest.raises(pickle.UnpicklingError) as torch_err:
        torch.load(tmp_path / "model.pt")
    with pytest.raises(pickle.UnpicklingError) as our_err:
        glassgrad.load(tmp_path / "model.pt")
    for err in (torch_err, our_err):
        assert "GLOBAL torch.nn.modules.container.Sequential was not an allowed global" in str(
            err.value)
    nn = glassgrad.nn  # what `torch.nn` is under `import glassgrad as torch`
    with glassgrad.serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
        ours = glassgrad.load(tmp_path / "model.pt")
    assert type(ours) is nn.Sequential and type(ours[0]) is nn.Linear
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(glassgrad.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    # weights_only=False: torch unpickles anything; glassgrad rebuilds torch.nn's classes as its
    # own without an allowlist, and still refuses a class of the user's
    again = glassgrad.load(tmp_path / "model.pt", weights_only=False)
    np.testing.assert_allclose(again(glassgrad.tensor(x)).detach().numpy(),
                               torch.load(tmp_path / "model.pt", weights_only=False)(
                                   torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
    theirs.extra = collections.OrderedDict(note=argparse.ArgumentParser)  # not torch.nn's
    torch.save(theirs, tmp_path / "model2.pt")
    with pytest.raises(pickle.UnpicklingError, match="argparse.ArgumentParser"):
        glassgrad.load(tmp_path / "model2.pt", weights_only=False)


def test_numpy_in_a_torch_file_loads_with_the_allowlist_torch_asks_for():
    obj = {"best_acc": np.float64(0.9), "perm": np.arange(3)}
    allow = [np._core.multiarray.scalar, np.dtype, np.dtypes.Float64DType,
             np._core.multiarray._reconstruct, np.ndarray, np.dtypes.Int64DType]
    with torch.serialization.safe_globals(allow):
        theirs = torch.load(_saved(obj))
    with glassgrad.serialization.safe_globals(allow):
        ours = glassgrad.load(_saved(obj))
    assert type(ours["best_acc"]) is np.float64 and ours["best_acc"] == theirs["best_acc"]
    np.testing.assert_array_equal(ours["perm"], theirs["perm"])


class _System:
    """Unpickles as ``os.system(command)``: a hostile file's reduce trick."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        import os
        return (os.system, (self.command,))


@pytest.mark.parametrize("entry", ["plain", "named"])
def test_globals_of_blocked_modules_are_refused_even_when_allowlisted(tmp_path, entry):
    import os
    marker = tmp_path / "ran"
    buf = _saved({"x": _System(f"touch {marker}")})
    allow = [os.system] if entry == "plain" else [(os.system, f"{os.system.__module__}.system")]
    errors = []
    for lib in (torch, glassgrad):
        with lib.serialization.safe_globals(allow):
            with pytest.raises(pickle.UnpicklingError) as err:
                lib.load(io.BytesIO(buf.getvalue()))
        errors.append(str(err.value))
    for message in errors:
        assert (f"Trying to load unsupported GLOBAL {os.system.__module__}.system whose module "
                f"{os.system.__module__} is blocked") in message
    assert not marker.exists()


def test_an_empty_file_is_torch_eoferror(tmp_path):
    (tmp_path / "empty.pt").write_bytes(b"")
    for lib in (torch, glassgrad):
        for source in (tmp_path / "empty.pt", io.BytesIO(b"")):
            with pytest.raises(EOFError):
                lib.load(source, weights_only=False)
    with pytest.raises(ValueError, match="it is empty"):  # glassgrad's refusals stay ValueErrors
        glassgrad.load(tmp_path / "empty.pt")
