"""Loading cannot exhaust memory (NOTE [Bounded loading]): ``/dev/zero``, a FIFO, a sparse 16 GiB
file, a 150 MB header and a 60 MB one of 20 million empty lists are each refused in under a
second with under 100 MB of extra memory,
and a good checkpoint loads at near one copy of its data. Each case runs in a fresh process that
measures its own peak resident memory around the load (``/proc/self/status`` VmHWM, reset through
``/proc/self/clear_refs``). Refused files count in the reliability figures."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from safetensors.numpy import save as st_save

from tests import reliability_figures as figures

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"),
                                reason="peak memory is read from Linux's /proc")

_CHILD = r"""
import io, json, os, sys, time
import numpy as np
import glassgrad


def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) * 1024


class Stream:  # a file object that cannot seek: a pipe
    def __init__(self, path):
        self.f = open(path, "rb")

    def read(self, n=-1):
        return self.f.read(n)


def case(kind, path, mmap):
    source = {"path": lambda: path, "file": lambda: open(path, "rb"),
              "stream": lambda: Stream(path)}[kind]()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # NOTE: resets VmHWM to the current resident size
    before = status("VmRSS")
    start = time.perf_counter()
    result = {}
    try:
        out = glassgrad.load(source, mmap=mmap)
        result["loaded"] = {k: list(v.shape) for k, v in out.items()}
        result["first"] = [float(v.reshape(-1)[:4].sum()) for v in out.values()]
        del out
    except Exception as e:
        result["error"], result["message"] = type(e).__name__, str(e)
    result["seconds"] = time.perf_counter() - start
    result["extra_mb"] = (status("VmHWM") - before) / 2**20
    return result


glassgrad.zeros(1).sum()  # warm up what the first op imports
print(json.dumps([case(*c) for c in json.loads(sys.argv[1])]))
"""


def _refused_quickly(result, *phrases):
    assert result.get("error") == "ValueError", result
    assert result["message"].startswith("glassgrad.load: "), result
    for phrase in phrases:
        assert phrase in result["message"], (phrase, result)
    assert result["seconds"] < 1.0, result
    assert result["extra_mb"] < 100, result
    figures.add("checkpoint_cases")


def _sparse(path, size, head=b""):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    if os.stat(path).st_blocks * 512 > 2**20 + len(head):
        pytest.skip(f"{path.parent} does not keep sparse files sparse")
    return path


@pytest.fixture(scope="module")
def loads(tmp_path_factory):
    """Every file below loaded in one fresh process (one interpreter start, not one per case):
    case name -> its result."""
    tmp = tmp_path_factory.mktemp("loads")
    cases = {}
    if os.path.exists("/dev/zero"):
        # given as a file object, or as a stream that cannot seek, 8 zero bytes say the header
        # is 0 bytes long, and nothing more is read
        cases.update({f"/dev/zero as a {kind}": ("/dev/zero", kind, False)
                      for kind in ("path", "file", "stream")})
    os.mkfifo(tmp / "fifo")  # NOTE: no writer: opening it for reading would block forever
    cases["fifo"] = (tmp / "fifo", "path", False)
    size = 16 * 2**30
    cases["sparse zeros"] = (_sparse(tmp / "zeros", size), "path", False)  # header length 0
    # a real header for 8 bytes of data, then 16 GiB of holes
    small = st_save({"a": np.ones(2, np.float32)})
    cases["sparse, small header"] = (_sparse(tmp / "small", size, small), "path", False)
    # a consistent header claiming 16 GiB: a legitimate file, read lazily with mmap=True; and the
    # same header streamed with 1 MB of data after it: arrays grow with what arrives
    header = json.dumps({"big": {"dtype": "F32", "shape": [2**32], "data_offsets": [0, 2**34]},
                         "a": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}).encode()
    header += b" " * (-len(header) % 8)  # safetensors' padding: the data start 8-aligned
    head = struct.pack("<Q", len(header)) + header
    cases["sparse 16 GiB tensor, mmap"] = (_sparse(tmp / "big", len(head) + 2**34, head),
                                           "path", True)
    cases["16 GiB tensor, stream cut"] = (_sparse(tmp / "cut", len(head) + 2**20, head),
                                          "stream", False)
    n = 150_000_000
    header = _sparse(tmp / "header", 8 + n + 8, struct.pack("<Q", n) + b'{"a": "')
    cases.update({f"150 MB header as a {kind}": (header, kind, False)
                  for kind in ("path", "file", "stream")})
    # 60 MB of ``[],``: json.loads would make 20 million lists (1.4 GB per 30 MB)
    lists = json.dumps({"__metadata__": {"structure": "[" + "[]," * 20_000_000 + "[]]"}})
    (tmp / "lists").write_bytes(struct.pack("<Q", len(lists)) + lists.encode())
    del lists
    cases["60 MB header of lists"] = (tmp / "lists", "path", False)
    good = {"w": np.arange(25_000_000, dtype=np.float32).reshape(5000, 5000),  # 100 MB
            "v": np.arange(12_500_000, dtype=np.float64)}  # 100 MB
    (tmp / "good").write_bytes(st_save(good))
    cases["good"], cases["good, mmap"] = (tmp / "good", "path", False), (tmp / "good", "path", True)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    spec = json.dumps([(kind, str(path), mmap) for path, kind, mmap in cases.values()])
    done = subprocess.run([sys.executable, "-c", _CHILD, spec], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    results = dict(zip(cases, json.loads(done.stdout.strip().splitlines()[-1])))
    results["good data MiB"] = sum(a.nbytes for a in good.values()) / 2**20
    return results


def test_devices_and_fifos_are_refused_before_reading(loads):
    if "/dev/zero as a path" not in loads:
        pytest.skip("no /dev/zero")
    _refused_quickly(loads["/dev/zero as a path"], "'/dev/zero' is not a regular file",
                     "character device")
    _refused_quickly(loads["/dev/zero as a file"], "no safetensors header")
    _refused_quickly(loads["/dev/zero as a stream"], "no safetensors header")
    _refused_quickly(loads["fifo"], "is not a regular file", "FIFO")


def test_a_directory_is_refused_as_torch_refuses_it(tmp_path):
    import torch

    import glassgrad

    with pytest.raises(IsADirectoryError) as theirs:
        torch.load(tmp_path)
    with pytest.raises(IsADirectoryError) as ours:
        glassgrad.load(tmp_path)
    assert str(ours.value) == str(theirs.value)


def test_sparse_16_gib_files_are_refused_or_mapped(loads):
    _refused_quickly(loads["sparse zeros"], "no safetensors header")
    _refused_quickly(loads["sparse, small header"],
                     "the header declares 8 bytes of data, the file holds")
    mapped = loads["sparse 16 GiB tensor, mmap"]
    assert mapped.get("loaded") == {"a": [0], "big": [2**32]}, mapped
    assert mapped["first"] == [0.0, 0.0] and mapped["seconds"] < 1 and mapped["extra_mb"] < 100
    _refused_quickly(loads["16 GiB tensor, stream cut"], "the file ends inside tensor 'big'")


def test_a_150_mb_header_is_refused_before_it_is_read(loads):
    for kind in ("path", "file", "stream"):
        _refused_quickly(loads[f"150 MB header as a {kind}"],
                         "the header claims 150,000,000 bytes", "100,000,000")


def test_a_header_of_millions_of_values_is_refused_before_it_is_parsed(loads):
    _refused_quickly(loads["60 MB header of lists"], "JSON values, more than the 2,000,000")


def test_a_good_load_peaks_near_one_copy_of_the_data(loads):
    copied, mapped, data_mb = loads["good"], loads["good, mmap"], loads["good data MiB"]
    assert copied["loaded"] == mapped["loaded"] == {"v": [12_500_000], "w": [5000, 5000]}
    assert copied["first"] == mapped["first"] == [6.0, 6.0]
    print(f"\nloading a {data_mb:.0f} MiB checkpoint: peak +{copied['extra_mb']:.0f} MiB in "
          f"{copied['seconds']:.2f} s; with mmap=True +{mapped['extra_mb']:.0f} MiB")
    assert copied["extra_mb"] < 1.1 * data_mb + 30, copied  # glassgrad 2704c77: +382 MiB
    assert mapped["extra_mb"] < 30, mapped
