"""What programs put in checkpoints, saved by glassgrad.save and by torch.save and loaded back:
NumPy arrays and scalars, complex numbers, sets, argparse.Namespace, dataclasses, optimizer and
scheduler state, and whole models (word_language_model's ``torch.save(model, f)`` then
``torch.load(f)`` inside ``torch.serialization.safe_globals``). Every value, type and error is
compared with what torch gives for the same object."""

from __future__ import annotations

import argparse
import dataclasses
import io
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

import glassgrad

from .test_serialization import assert_same, to_torch

NP_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
             "uint16", "uint32", "uint64", "bool", "complex64", "complex128", ">f4", ">i8"]


@dataclasses.dataclass
class Config:
    lr: float = 0.1
    layers: tuple = (2, 3)
    name: str = "run"


def _net_class(lib, name: str):
    """A word_language_model-like model class for ``lib``, defined at this module's top level
    (a whole-model checkpoint names its class by module and qualname)."""

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = lib.nn.Embedding(10, 4)
            self.rnn = lib.nn.LSTM(4, 4, 2)
            self.drop = lib.nn.Dropout(0.2)
            self.decoder = lib.nn.Linear(4, 10)
            self.decoder.weight = self.encoder.weight  # tied, as word_language_model --tied
            self.act = lib.nn.functional.relu

        def forward(self, x):
            out, _ = self.rnn(self.drop(self.encoder(x)))
            return self.decoder(self.act(out))

    Net.__name__ = Net.__qualname__ = name
    return Net


GlassNet = _net_class(glassgrad, "GlassNet")
TorchNet = _net_class(torch, "TorchNet")


def _both(obj, tmp_path, **load_args):
    """``obj`` through glassgrad.save/load and its torch twin through torch.save/load."""
    glassgrad.save(obj, tmp_path / "g.ckpt")
    torch.save(to_torch(obj), tmp_path / "t.pt")
    return (glassgrad.load(tmp_path / "g.ckpt", **load_args),
            torch.load(tmp_path / "t.pt", weights_only=False))


def _same_numpy(ours, theirs, path="obj"):
    assert type(ours) is type(theirs), path
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, path
    np.testing.assert_array_equal(ours, theirs, err_msg=path)


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_arrays_come_back_as_numpy(tmp_path, dtype):
    rng = np.random.default_rng(0)
    base = (rng.standard_normal((3, 4)) * 50).astype(dtype)
    obj = {"array": base, "zero_d": base[1, 2].copy().reshape(()), "strided": base.T[::2],
           "empty": base[:0], "scalar": base[0, 0], "again": base}
    ours, theirs = _both(obj, tmp_path)
    for key in obj:
        _same_numpy(ours[key], theirs[key], key)
    assert ours["again"] is ours["array"]  # one object, as pickle's memo gives it back
    assert not np.shares_memory(ours["strided"], ours["array"])  # pickle copies views apart
    ours["array"][0, 0] = 1  # writable
    with pytest.raises(TypeError, match="cannot save a NumPy ndarray of dtype object"):
        glassgrad.save({"o": np.array([None])}, io.BytesIO())


def test_numbers_sets_and_sizes_match_torch(tmp_path):
    obj = {"complex": 1.5 - 2j, "complex_inf": complex(float("inf"), float("nan")),
           "set": {1, 2, "a"}, "frozenset": frozenset({(1, 2)}), "np_float": np.float64(0.1),
           "np_int": np.int64(-3), "np_bool": np.bool_(True), "np_complex": np.complex64(1j),
           "size": glassgrad.Size([2, 3]), "nested": [{"losses": [np.float32(1.25)] * 3}]}
    ours, theirs = _both(obj, tmp_path)
    for key in ("complex", "set", "frozenset", "np_float", "np_int", "np_bool", "np_complex"):
        assert type(ours[key]) is type(theirs[key]) and ours[key] == theirs[key], key
    assert np.isinf(ours["complex_inf"].real) and np.isnan(ours["complex_inf"].imag)
    assert list(ours["size"]) == list(theirs["size"]) and type(ours["size"]) is glassgrad.Size
    assert [type(v) for v in ours["nested"][0]["losses"]] == [np.float32] * 3


def test_namespace_comes_back_as_namespace(tmp_path):
    args = argparse.Namespace(lr=0.01, epochs=3, model="LSTM", tied=True, seed=None)
    obj = {"args": args, "model": {"w": glassgrad.ones(2)}}
    ours, theirs = _both(obj, tmp_path)
    assert type(ours["args"]) is argparse.Namespace and vars(ours["args"]) == vars(theirs["args"])
    assert_same(ours["model"], theirs["model"])


def test_dataclass_needs_the_allowlist_as_in_torch(tmp_path):
    obj = {"cfg": Config(lr=0.5), "epoch": 2}
    glassgrad.save(obj, tmp_path / "g.ckpt")
    torch.save(obj, tmp_path / "t.pt")
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(tmp_path / "t.pt")
    with pytest.raises(pickle.UnpicklingError) as ours:
        glassgrad.load(tmp_path / "g.ckpt")
    phrase = f"Unsupported global: GLOBAL {Config.__module__}.Config was not an allowed global"
    for err in (theirs, ours):
        assert "Weights only load failed" in str(err.value) and phrase in str(err.value)
    assert isinstance(ours.value, ValueError)  # glassgrad's type for every refused file
    with torch.serialization.safe_globals([Config]):
        expected = torch.load(tmp_path / "t.pt")
    with glassgrad.serialization.safe_globals([Config]):
        assert glassgrad.serialization.get_safe_globals() == [Config]
        got = glassgrad.load(tmp_path / "g.ckpt")
    assert got == expected and type(got["cfg"]) is Config
    assert glassgrad.serialization.get_safe_globals() == []
    glassgrad.serialization.add_safe_globals([(Config, f"{Config.__module__}.Config")])
    try:
        assert glassgrad.load(tmp_path / "g.ckpt") == expected
        glassgrad.serialization.add_safe_globals([Config])
        with glassgrad.serialization.safe_globals([Config]):
            pass
        assert len(glassgrad.serialization.get_safe_globals()) == 2  # kept after the block
    finally:
        glassgrad.serialization.clear_safe_globals()
    assert glassgrad.serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        glassgrad.load(tmp_path / "g.ckpt", weights_only=False)  # never widens: nothing runs
    with pytest.raises(TypeError, match="safe_globals must be a list"):
        glassgrad.serialization.add_safe_globals(Config)
    assert glassgrad.serialization.DEFAULT_PROTOCOL == torch.serialization.DEFAULT_PROTOCOL


def test_optimizer_and_scheduler_state_resume(tmp_path):
    def run(lib, state=None):
        model = lib.nn.Linear(3, 2)
        with lib.no_grad():  # the same start on both libraries, whatever their generators
            model.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            model.bias.copy_(lib.tensor([0.05, -0.05]))
        opt = lib.optim.Adam(model.parameters(), lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
        x = lib.ones(4, 3)
        for _ in range(3):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()
            sched.step()
        return {"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "args": argparse.Namespace(lr=0.1)}

    first = run(glassgrad)
    glassgrad.save(first, tmp_path / "g.ckpt")
    resumed = run(glassgrad, glassgrad.load(tmp_path / "g.ckpt"))
    torch.save(run(torch), tmp_path / "t.pt")
    theirs = torch.load(tmp_path / "t.pt", weights_only=False)
    reloaded = glassgrad.load(tmp_path / "g.ckpt")
    assert reloaded["scheduler"] == first["scheduler"]
    assert sorted(reloaded["scheduler"]) == sorted(theirs["scheduler"])
    assert reloaded["optimizer"]["param_groups"][0]["lr"] == theirs["optimizer"]["param_groups"][
        0]["lr"]
    resumed_theirs = run(torch, theirs)
    np.testing.assert_allclose(resumed["model"]["weight"].numpy(),
                               resumed_theirs["model"]["weight"].numpy(), rtol=1e-5, atol=1e-6)


def test_whole_model_save_and_load_inside_safe_globals(tmp_path):
    glassgrad.manual_seed(0)
    ours = GlassNet().eval()
    theirs = TorchNet().eval()
    theirs.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                            for k, v in ours.state_dict().items()})
    with open(tmp_path / "g.pt", "wb") as f:  # as word_language_model saves it
        glassgrad.save(ours, f)
    with open(tmp_path / "t.pt", "wb") as f:
        torch.save(theirs, f)
    with pytest.raises(pickle.UnpicklingError) as torch_err:
        torch.load(tmp_path / "t.pt")
    with pytest.raises(pickle.UnpicklingError) as our_err:
        glassgrad.load(tmp_path / "g.pt")
    for err, name in ((torch_err, "TorchNet"), (our_err, "GlassNet")):
        assert f"Unsupported global: GLOBAL {__name__}.{name} was not an allowed" in str(
            err.value)
    with open(tmp_path / "t.pt", "rb") as f, torch.serialization.safe_globals([
            TorchNet, torch.nn.Embedding, torch.nn.LSTM, torch.nn.Dropout, torch.nn.Linear,
            torch.nn.functional.relu]):
        theirs = torch.load(f)
    with open(tmp_path / "g.pt", "rb") as f, glassgrad.serialization.safe_globals([GlassNet]):
        loaded = glassgrad.load(f)
    x = [[1, 2], [3, 4], [5, 6]]
    np.testing.assert_allclose(loaded(glassgrad.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert type(loaded) is GlassNet and not loaded.training
    assert loaded.decoder.weight is loaded.encoder.weight  # tied stays tied
    assert isinstance(loaded.decoder.bias, glassgrad.nn.Parameter)
    assert loaded.act is glassgrad.nn.functional.relu
    assert list(loaded.state_dict()) == list(ours.state_dict())
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    loaded.train()
    loaded(glassgrad.tensor(x)).sum().backward()
    assert loaded.encoder.weight.grad is not None


def test_paths_and_file_objects(tmp_path):
    obj = {"w": glassgrad.arange(3.0), "a": np.arange(2)}
    for target in (str(tmp_path / "s.pt"), tmp_path / "p.pt"):
        glassgrad.save(obj, target)
        assert glassgrad.load(target)["a"].tolist() == [0, 1]
    with open(tmp_path / "f.pt", "wb") as f:
        glassgrad.save(obj, f)
    with open(tmp_path / "f.pt", "rb") as f:
        assert glassgrad.load(f)["w"].tolist() == [0.0, 1.0, 2.0]
    assert Path(tmp_path / "f.pt").stat().st_size > 0


def test_unsaveable_objects_say_why():
    with pytest.raises(TypeError, match="a lambda or a local definition"):
        glassgrad.save({"f": lambda x: x}, io.BytesIO())

    class Local:
        pass

    with pytest.raises(TypeError, match="cannot save an object of type Local at obj"):
        glassgrad.save({"obj": Local()}, io.BytesIO())


def test_objects_pickle_refuses_and_bad_protocols_are_refused_at_save_as_in_torch(tmp_path):
    import threading
    with open(tmp_path / "open.txt", "w") as handle:
        for obj in (handle, threading.Lock()):
            with pytest.raises(TypeError, match="cannot pickle"):
                torch.save({"h": obj}, io.BytesIO())
            with pytest.raises(TypeError, match=f"cannot save an object of type "
                               f"{type(obj).__name__} at h"):
                glassgrad.save({"h": obj}, io.BytesIO())
    for protocol, error in ((6, ValueError), ("2", TypeError), (2.0, TypeError)):
        messages = []
        for lib in (torch, glassgrad):
            with pytest.raises(error) as err:
                lib.save({"a": 1}, io.BytesIO(), pickle_protocol=protocol)
            messages.append(str(err.value))
        assert messages[0] == messages[1]
    for protocol in (-1, 0, 5):
        glassgrad.save({"a": 1}, io.BytesIO(), pickle_protocol=protocol)
