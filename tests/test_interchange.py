"""DLPack, frombuffer, asarray and from_file: the same calls on torch and glassgrad, compared for
values, dtypes, memory sharing and errors (issue 15, lane surface)."""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _outcome(fn, lib, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib, *args)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            return type(exc).__name__, str(exc).split("\n")[0]
    return "ok", out


def _share(lib, make):
    """``make(lib)`` -> (tensor, writer, reader): writes through one side, reads the other."""
    t, write, read = make(lib)
    write()
    return str(t.dtype).split(".")[1], t.tolist(), read()


def _dlpack_roundtrip(lib):
    x = lib.arange(4.0)
    y = lib.from_dlpack(lib.utils.dlpack.to_dlpack(x))
    y[0] = 9.0
    n = np.from_dlpack(x)
    n[1] = 8.0
    z = lib.from_dlpack(x)
    z[2] = 7.0
    return x.tolist(), int(x.__dlpack_device__()[0]), x.__dlpack_device__()[1]


def _dlpack_numpy(lib):
    a = np.arange(3.0)
    t = lib.from_dlpack(a)
    t[0] = 5.0
    return a.tolist(), str(t.dtype).split(".")[-1]


def _capsule_twice(lib):
    c = lib.to_dlpack(lib.arange(3.0))
    lib.from_dlpack(c)
    return lib.from_dlpack(c)


def _asarray_shares(lib):
    a = np.arange(3.0)
    t = lib.asarray(a)
    t[0] = 5.0
    t2 = lib.asarray(a, dtype=lib.float32)
    t2[1] = 6.0
    t3 = lib.asarray(a, copy=True)
    t3[2] = 7.0
    buf = array.array("f", [1, 2])
    tb = lib.asarray(buf)
    tb[0] = 4.0
    return a.tolist(), buf.tolist(), str(tb.dtype).split(".")[-1]


def _asarray_tensor(lib):
    q = lib.ones(2)
    r = lib.asarray(q, requires_grad=True)
    return (lib.asarray(q) is q, lib.asarray(q, copy=True) is q, r is q, q.requires_grad,
            str(lib.asarray(q, dtype=lib.float64).dtype).split(".")[-1])


def _frombuffer_shares(lib):
    b = bytearray(np.array([1.0, 2.0], np.float32).tobytes())
    f = lib.frombuffer(b, dtype=lib.float32)
    b[0:4] = np.array([3.0], np.float32).tobytes()
    g = lib.frombuffer(b, dtype=lib.float32, count=1, offset=4)
    return f.tolist(), g.tolist(), lib.frombuffer(bytearray(8), dtype=lib.float32,
                                                 requires_grad=True).requires_grad


def _from_file(lib, path, shared, size, write):
    np.arange(5, dtype=np.float32).tofile(path)
    t = lib.from_file(str(path), shared=shared, size=size, dtype=lib.float32)
    if write:
        t[0] = 9.0
    return t.tolist(), np.fromfile(path, dtype=np.float32).tolist()


CASES = {
    "dlpack round trip": (_dlpack_roundtrip,),
    "dlpack from numpy": (_dlpack_numpy,),
    "dlpack capsule twice": (_capsule_twice,),
    "dlpack requires grad": (lambda lib: lib.from_dlpack(lib.ones(2, requires_grad=True)),),
    "dlpack export requires grad": (lambda lib: np.from_dlpack(lib.ones(2, requires_grad=True)),),
    "dlpack strided": (lambda lib: lib.from_dlpack(lib.arange(6.0)[::2]).stride(),),
    "asarray shares": (_asarray_shares,),
    "asarray tensor": (_asarray_tensor,),
    "asarray no alias dtype": (lambda lib: lib.asarray(np.arange(3.0), copy=False,
                                                       dtype=lib.float32),),
    "asarray no alias sequence": (lambda lib: lib.asarray([1, 2], copy=False),),
    "asarray sequences": (lambda lib: [
        (lib.asarray(v).tolist(), str(lib.asarray(v).dtype).split(".")[-1])
        for v in ([1, 2], [1.0, 2], 3, 3.5, np.float32(2), np.arange(3), [[1, 2], [3, 4]])],),
    "asarray int grad": (lambda lib: lib.asarray([1, 2], requires_grad=True),),
    "asarray bytes dtype": (lambda lib: lib.asarray(bytearray(b"\x01\x02"),
                                                    dtype=lib.uint8).tolist(),),
    "frombuffer shares": (_frombuffer_shares,),
    "frombuffer too long": (lambda lib: lib.frombuffer(bytearray(8), dtype=lib.float64,
                                                       count=2),),
    "frombuffer ragged": (lambda lib: lib.frombuffer(bytearray(3), dtype=lib.float32),),
    "frombuffer empty": (lambda lib: lib.frombuffer(bytearray(), dtype=lib.float32),),
    "frombuffer offset": (lambda lib: lib.frombuffer(bytearray(8), dtype=lib.float32,
                                                     offset=9),),
    "frombuffer readonly": (lambda lib: lib.frombuffer(b"\x00\x00\x80?",
                                                       dtype=lib.float32).tolist(),),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    fn, = CASES[name]
    theirs, ours = (_outcome(fn, lib) for lib in LIBS)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
    else:
        assert ours[1].startswith(theirs[1]), (ours, theirs)


@pytest.mark.parametrize("shared,size,write", [(False, 5, True), (None, 3, False),
                                               (True, 2, True), (False, 10, False),
                                               (False, 0, False)])
def test_from_file_matches_torch(tmp_path, shared, size, write):
    theirs, ours = (_outcome(_from_file, lib, tmp_path / lib.__name__, shared, size, write)
                    for lib in LIBS)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1] == theirs[1]
    else:  # the message names the file, which differs: compare what follows
        assert ours[1].split(">", 1)[1] == theirs[1].split(">", 1)[1]


def test_from_file_missing():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="unable to open file </nonexistent/f> in "
                                               "read-only mode"):
            lib.from_file("/nonexistent/f", size=2)


def test_dlpack_with_real_torch():
    """A glassgrad tensor read by torch and a torch tensor read by glassgrad share memory."""
    g = glassgrad.arange(3.0)
    t = torch.from_dlpack(g)
    t[0] = 5.0
    tt = torch.arange(3.0)
    gg = glassgrad.from_dlpack(tt)
    gg[1] = 6.0
    assert g.tolist() == [5.0, 1.0, 2.0] and tt.tolist() == [0.0, 6.0, 2.0]
    assert torch.from_dlpack(glassgrad.to_dlpack(g)).tolist() == g.tolist()
