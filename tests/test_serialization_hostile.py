"""Every field of a checkpoint's header, fuzzed: each of the safetensors entries' fields, the
glassgrad metadata, every field of the tensor table and every node of the structure is replaced by
wrong types, negative, huge and non-finite numbers, unknown names, or deleted, or joined by an
unknown field. Each file must load (the change was harmless) or raise glassgrad's own ValueError
naming the file: never an OverflowError, TypeError, RecursionError, RuntimeError or MemoryError.
Deep nesting is refused alike by save and load, so what save writes, load reads."""

from __future__ import annotations

import argparse
import io
import json
import struct

import numpy as np
import pytest
import safetensors.torch
import torch

import glassgrad
from tests import reliability_figures as figures

from .test_serialization_compat import format1_object

NAME = "fuzz.ckpt"
WRONG = [None, True, False, 0, -1, 1, 3, 2**31, 2**63, 2**64, 10**30, -(10**30), 1.5,
         float("nan"), float("inf"), float("-inf"), "", "x", "F32", "float32", "__storage0__",
         [], [1], [-1], [0, 2**70], [[]], {}, {"a": 1}, {"tensor": "x"}]
_DELETE, _EXTRA = object(), object()


def _base() -> tuple[dict, bytes]:
    obj = format1_object(glassgrad)
    obj["dtype"] = glassgrad.bfloat16
    obj["param"] = glassgrad.nn.Parameter(glassgrad.ones(2))
    args = argparse.Namespace(lr=0.5)
    obj["issue14"] = [np.arange(3.0), np.arange(2, dtype=np.uint16), np.float32(1.5), 1 + 2j,
                      {1}, frozenset({2}), glassgrad.Size([1]), glassgrad.device("cpu"), args,
                      args, glassgrad.nn.functional.relu, glassgrad.nn.ReLU()]
    buf = io.BytesIO()
    glassgrad.save(obj, buf)
    data = buf.getvalue()
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + n]), data[8 + n :]


def _sites(node, path=()):
    """Every place in a JSON value: the paths of its dict fields and list items."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*path, k)
            yield from _sites(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*path, i)
            yield from _sites(v, (*path, i))


def _mutated(value, path, new):
    value = json.loads(json.dumps(value))  # a deep copy, at C speed
    *parents, last = path
    holder = value
    for p in parents:
        holder = holder[p]
    if new is _DELETE:
        del holder[last]
    elif new is _EXTRA:
        target = holder[last]
        if isinstance(target, dict):
            target["unknown"] = 1
        elif isinstance(target, list):
            target.append(0)
        else:
            return None
    else:
        holder[last] = new
    return value


def _cases():
    """(label, header) for every mutation of every site."""
    header, _ = _base()
    meta = header["__metadata__"]
    parts = {"structure": json.loads(meta["structure"]), "tensors": json.loads(meta["tensors"])}
    plain = {k: v for k, v in header.items() if k != "__metadata__"}
    for site in _sites(plain):
        for new in (*WRONG, _DELETE, _EXTRA):
            changed = _mutated(plain, site, new)
            if changed is not None:
                yield f"header {site} <- {new!r}", {**changed, "__metadata__": meta}
    for key in meta:
        for new in (*WRONG, _DELETE):
            yield f"metadata {key} <- {new!r}", {**plain,
                                                  "__metadata__": _mutated(meta, (key,), new)}
    for part, value in parts.items():
        for site in ((), *_sites(value)):
            for new in (*WRONG, _DELETE, _EXTRA):
                if not site and new in (_DELETE, _EXTRA):
                    continue
                changed = new if not site else _mutated(value, site, new)
                if changed is None and site:
                    continue
                text = json.dumps(changed, separators=(",", ":"))
                yield f"{part} {site} <- {new!r}", {**plain,
                                                     "__metadata__": {**meta, part: text}}


def _file(header: dict, data: bytes) -> io.BytesIO:
    raw = json.dumps(header).encode()
    buf = io.BytesIO(struct.pack("<Q", len(raw)) + raw + data)
    buf.name = NAME
    return buf


def test_every_header_field_fuzzed_gives_a_clean_error_or_a_load():
    _, data = _base()
    refused = loaded = 0
    for label, header in _cases():
        try:
            out = glassgrad.load(_file(header, data))
        except ValueError as e:
            # NOTE: a refused class starts with torch's words, then glassgrad's naming the file
            assert str(e).startswith(("glassgrad.load: ", "Weights only load failed")), (label, e)
            assert "glassgrad.load: " in str(e) and repr(NAME) in str(e), (label, e)
            refused += 1
            continue
        except Exception as e:  # noqa: BLE001 - the point: no other type escapes
            pytest.fail(f"{label}: {type(e).__name__}: {e}")
        loaded += 1
        for t in _tensors(out):
            t.detach().numpy().copy()  # every tensor that loads is readable
    print(f"\nheader fuzz: {refused:,} files refused, {loaded:,} harmless changes loaded")
    assert refused > 1000 and loaded > 100
    figures.add("checkpoint_cases", refused)


def _tensors(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, glassgrad.Tensor):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def _nested(kind: str, depth: int, lib=glassgrad):
    leaf = lib.ones(2)
    for _ in range(depth):
        leaf = {"list": [leaf], "tuple": (leaf,), "dict": {"k": leaf}, "items": {1: leaf}}[kind]
    return leaf


def test_deep_keys_save_exactly_what_load_reads():
    from glassgrad.serialization import MAX_DEPTH

    key = 1
    for _ in range(MAX_DEPTH - 1):
        key = (key,)
    buf = io.BytesIO()
    glassgrad.save({key: 1}, buf)  # MAX_DEPTH containers: a dict, and tuples in its key
    buf.seek(0)
    assert glassgrad.load(buf) == {key: 1}
    with pytest.raises(RecursionError, match=f"nests deeper than {MAX_DEPTH}"):
        glassgrad.save({(key,): 1}, io.BytesIO())


@pytest.mark.parametrize("kind", ["list", "tuple", "dict", "items"])
def test_deep_nesting_saves_and_loads_up_to_the_cap_and_is_refused_past_it(kind):
    from glassgrad.serialization import MAX_DEPTH

    buf = io.BytesIO()
    glassgrad.save(_nested(kind, MAX_DEPTH), buf)  # a tensor inside MAX_DEPTH containers
    buf.seek(0)
    out = glassgrad.load(buf)
    for _ in range(MAX_DEPTH):
        out = out[0] if kind in ("list", "tuple") else out["k" if kind == "dict" else 1]
    assert out.tolist() == [1.0, 1.0]
    # one more level: torch.save raises RecursionError near 500 levels; glassgrad at its cap
    with pytest.raises(RecursionError) as theirs:
        torch.save(_nested(kind, 1000, torch), io.BytesIO())
    with pytest.raises(RecursionError, match="maximum recursion depth exceeded") as ours:
        glassgrad.save(_nested(kind, MAX_DEPTH + 1), io.BytesIO())
    assert "maximum recursion depth exceeded" in str(theirs.value)
    assert f"nests deeper than {MAX_DEPTH} levels" in str(ours.value)


def test_the_value_cap_is_the_same_in_save_and_load(monkeypatch):
    from glassgrad import _checkpoint_read

    monkeypatch.setattr(_checkpoint_read, "MAX_HEADER_VALUES", 1000)
    fits = {"losses": [0.5] * 900, "w": glassgrad.ones(3)}
    buf = io.BytesIO()
    glassgrad.save(fits, buf)
    buf.seek(0)
    assert glassgrad.load(buf)["losses"] == fits["losses"]
    with pytest.raises(ValueError, match="more than the 1,000 glassgrad.load reads.*as tensors"):
        glassgrad.save({"losses": [0.5] * 1000}, io.BytesIO())
    # the same file written by hand: refused before its header is parsed
    header = json.dumps({"__metadata__": {"glassgrad": "1", "tensors": "{}",
                                          "structure": json.dumps([[]] * 1000)}}).encode()
    bad = io.BytesIO(struct.pack("<Q", len(header)) + header)
    bad.name = NAME
    with pytest.raises(ValueError, match="holds ~2,00[0-9] JSON values, more than the 1,000"):
        glassgrad.load(bad)


def test_bool_bytes_other_than_0_and_1_load_as_torch_loads_them(tmp_path):
    from safetensors.numpy import save as st_save

    raw = np.array([0, 1, 2, 255], np.uint8)
    (tmp_path / "b").write_bytes(st_save({"b": raw.view(np.bool_)}))
    view = json.dumps({"v": {"storage": "s", "view": {"dtype": "bool", "shape": [4], "offset": 0,
                                                      "strides": [1]}}})
    (tmp_path / "v").write_bytes(st_save({"s": raw}, metadata={
        "glassgrad": "1", "structure": json.dumps({"tensor": "v"}), "tensors": view}))
    theirs = safetensors.torch.load_file(tmp_path / "b")["b"]
    for ours in (glassgrad.load(tmp_path / "b")["b"], glassgrad.load(tmp_path / "v")):
        assert ours.tolist() == theirs.tolist() == [False, True, True, True]
        assert (~ours).tolist() == (~theirs).tolist()
        assert ours.sum().item() == theirs.sum().item() == 3
        assert ours.view(glassgrad.uint8).tolist() == theirs.view(torch.uint8).tolist()


def test_torch_pickles_fuzzed_give_a_clean_error_or_a_load():
    """A torch checkpoint's data.pkl with 1-4 random bytes changed, dropped or added (re-zipped,
    so the zip itself is sound): each loads or is refused with glassgrad's ValueError (torch's
    UnpicklingError or RuntimeError besides), within a second."""
    import random
    import time
    import zipfile

    buf = io.BytesIO()
    model = torch.nn.Linear(3, 2)
    torch.save({"model": model.state_dict(), "view": model.weight[1:], "blob": b"xy",
                "param": torch.nn.Parameter(torch.ones(2)), "opt": {"state": {0: {
                    "step": torch.tensor(3.0)}}, "lr": 0.1}, "n": [1, 2.5, None, True]}, buf)
    with zipfile.ZipFile(buf) as z:
        parts = {info.filename: z.read(info.filename) for info in z.infolist()}
    rng = random.Random(0)
    refused = loaded = 0
    for trial in range(1500):
        data = bytearray(parts["archive/data.pkl"])
        for _ in range(rng.randint(1, 4)):
            pos, op = rng.randrange(len(data)), rng.random()
            if op < 0.5:
                data[pos] = rng.randrange(256)
            elif op < 0.75:
                del data[pos]
            else:
                data.insert(pos, rng.randrange(256))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for name, value in parts.items():
                z.writestr(name, bytes(data) if name.endswith("data.pkl") else value)
        out.seek(0)
        out.name = NAME
        start = time.perf_counter()
        try:
            glassgrad.load(out)
            loaded += 1
        except ValueError as e:
            assert "glassgrad.load: " in str(e) and repr(NAME) in str(e), (trial, e)
            refused += 1
        except Exception as e:  # noqa: BLE001 - the point: no other type escapes
            pytest.fail(f"trial {trial}: {type(e).__name__}: {e}")
        assert time.perf_counter() - start < 1.0, trial
    assert refused > 1000 and loaded > 10
    figures.add("checkpoint_cases", refused)
