"""HashStore, FileStore, TCPStore, PrefixStore against torch's: the same operations, the same
answers and errors (torch's own quirks included); a TCPStore client in another thread sees the
master's keys."""

import datetime
import threading

import pytest
import torch.distributed as tdist

import glassgrad.distributed as gdist

MS300 = datetime.timedelta(milliseconds=300)


def _script(s):
    s.set_timeout(MS300)
    out = []

    def rec(f):
        try:
            out.append(repr(f()))
        except Exception as e:  # noqa: BLE001: compared with torch's
            out.append(f"{type(e).__name__}: {e}")

    rec(lambda: s.num_keys())
    rec(lambda: s.set("a", "1"))
    rec(lambda: s.set("b", b"\x00\xff"))
    rec(lambda: (s.get("a"), s.get("b")))
    rec(lambda: (s.add("c", 5), s.add("c", -2), s.get("c"), s.add("a", 1)))
    rec(lambda: (s.compare_set("a", "2", "9"), s.compare_set("a", "2", "x"),
                 s.compare_set("z", "", "new"), s.compare_set("y", "q", "new")))
    rec(lambda: (s.check(["a", "c"]), s.check(["a", "nope"]), s.num_keys()))
    rec(lambda: (s.delete_key("a"), s.delete_key("a")))
    rec(lambda: (s.append("c", "7"), s.get("c")))
    rec(lambda: (s.multi_set(["m1", "m2"], ["x", b"y"]), s.multi_get(["m1", "m2"])))
    rec(lambda: s.wait(["m1"]))
    rec(lambda: s.wait(["nope"]))
    rec(lambda: s.wait(["nope"], datetime.timedelta(milliseconds=100)))
    rec(lambda: s.get("nope"))
    rec(lambda: (s.timeout, s.num_keys()))
    return out


@pytest.mark.parametrize("kind", ["hash", "file", "tcp"])
def test_store_answers_as_torchs(kind, tmp_path):
    def make(lib):
        if kind == "hash":
            return lib.HashStore()
        if kind == "file":
            return lib.FileStore(str(tmp_path / lib.__name__), 1)
        return lib.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=5))

    assert _script(make(gdist)) == _script(make(tdist))


def test_prefix_store_as_torchs():
    results = []
    for lib in (gdist, tdist):
        base = lib.HashStore()
        p = lib.PrefixStore("pre", base)
        p.set("k", "v")
        p.add("n", 2)
        results.append((base.get("pre/k"), p.get("k"), base.get("pre/n"), p.check(["k"]),
                        base.check(["k"]), p.num_keys(), p.underlying_store is base))
    assert results[0] == results[1]


def test_tcp_store_client_waits_for_the_master():
    master = gdist.TCPStore("127.0.0.1", 0, 2, True, timeout=datetime.timedelta(seconds=10))
    got = []

    def client():
        c = gdist.TCPStore("127.0.0.1", master.port, 2, False,
                           timeout=datetime.timedelta(seconds=10))
        got.append(c.get("ready"))      # blocks until the master sets it
        got.append(c.add("count", 1))

    t = threading.Thread(target=client)
    t.start()
    master.set("ready", "yes")
    t.join(timeout=10)
    assert got == [b"yes", 1] and master.add("count", 1) == 2
