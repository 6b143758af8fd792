"""Key-value stores (``torch.distributed.Store``): HashStore, FileStore, TCPStore, PrefixStore.

glassgrad's process groups rendezvous through MPI and need no store; these exist for programs
that use a store themselves (to exchange small values, or to pass one to init_process_group,
which accepts and ignores it). Semantics are torch's, checked side by side: values are bytes
(a str is stored UTF-8), ``add`` keeps an ASCII integer, ``get``/``wait`` block until the keys
exist or the store's timeout passes (DistStoreError), ``compare_set`` sets only when the value
equals ``expected`` (a missing key counts as ``""``) and returns the value now held (a missing
key with another ``expected`` returns ``expected``, unchanged, as torch does).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import socket
import threading
import time

from .errors import DistStoreError

__all__ = ["FileStore", "HashStore", "PrefixStore", "Store", "TCPStore"]


def _bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


class _Table:
    """The dict and its condition variable behind HashStore and TCPStore's server."""

    def __init__(self, internal: int = 0):
        self.data: dict[str, bytes] = {}
        self.cond = threading.Condition()
        self.internal = internal  # keys torch's stores keep for themselves (num_keys counts them)

    def call(self, op: str, args: list, timeout_s: float):
        with self.cond:
            if op in ("get", "wait", "multi_get"):
                keys = [args[0]] if op == "get" else list(args[0])
                if op == "wait" and len(args) > 1 and args[1] is not None:
                    timeout_s = args[1]
                if not self.cond.wait_for(lambda: all(k in self.data for k in keys), timeout_s):
                    return ("timeout", keys)
                if op == "get":
                    return self.data[keys[0]]
                return [self.data[k] for k in keys] if op == "multi_get" else None
            if op == "set":
                self.data[args[0]] = args[1]
            elif op == "multi_set":
                self.data.update(zip(args[0], args[1]))
            elif op == "add":
                value = int(self.data.get(args[0], b"0")) + int(args[1])
                self.data[args[0]] = str(value).encode()
                self.cond.notify_all()
                return value
            elif op == "append":
                self.data[args[0]] = self.data.get(args[0], b"") + args[1]
            elif op == "compare_set":
                key, expected, desired = args
                current = self.data.get(key)
                if current is None and expected != b"":
                    return expected
                if (current or b"") == expected:
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return current
            elif op == "check":
                return all(k in self.data for k in args[0])
            elif op == "delete_key":
                return self.data.pop(args[0], None) is not None
            elif op == "num_keys":
                return len(self.data) + self.internal
            else:
                raise ValueError(f"unknown store operation {op!r}")
            self.cond.notify_all()
            return None


class Store:
    """Base of the stores (``torch.distributed.Store``): see the module docstring."""

    def __init__(self, timeout: datetime.timedelta = datetime.timedelta(seconds=300)):
        self._timeout = timeout

    @property
    def timeout(self) -> datetime.timedelta:
        return self._timeout

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self._timeout = timeout

    def _call(self, op: str, *args):
        raise NotImplementedError

    def _timed_out(self, keys, timeout_s: float):
        raise DistStoreError("Wait timeout")

    def _run(self, op: str, *args, timeout_s: float | None = None):
        limit = self._timeout.total_seconds() if timeout_s is None else timeout_s
        out = self._call(op, list(args), limit)
        if isinstance(out, tuple) and out and out[0] == "timeout":
            self._timed_out(out[1], limit if op != "wait" or args[1] is None else args[1])
        return out

    def set(self, key: str, value) -> None:
        """Store ``value`` (str or bytes) under ``key``."""
        self._run("set", key, _bytes(value))

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting up to the timeout for it to be set."""
        return self._run("get", key)

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer under ``key`` (0 when missing); the new value."""
        return self._run("add", key, int(amount))

    def append(self, key: str, value) -> None:
        """Append ``value`` to the bytes under ``key`` (set it when missing)."""
        self._run("append", key, _bytes(value))

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value``; the value held."""
        return self._run("compare_set", key, _bytes(expected_value), _bytes(desired_value))

    def check(self, keys: list[str]) -> bool:
        """True when every key is set, without waiting."""
        return self._run("check", list(keys))

    def wait(self, keys: list[str], timeout: datetime.timedelta | None = None) -> None:
        """Wait until every key is set; DistStoreError after ``timeout`` (default: the store's)."""
        self._run("wait", list(keys), None if timeout is None else timeout.total_seconds())

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; True when it existed."""
        return self._run("delete_key", key)

    def num_keys(self) -> int:
        """The number of keys, the store's own included (as torch counts)."""
        return self._run("num_keys")

    def multi_get(self, keys: list[str]) -> list[bytes]:
        """The values of ``keys``, waiting for all of them."""
        return self._run("multi_get", list(keys))

    def multi_set(self, keys: list[str], values: list) -> None:
        """Set each of ``keys`` to the matching value."""
        self._run("multi_set", list(keys), [_bytes(v) for v in values])


class HashStore(Store):
    """A store in this process's memory, shared by its threads (``torch.distributed.HashStore``)."""

    def __init__(self):
        super().__init__()
        self._table = _Table()

    def _call(self, op, args, timeout_s):
        return self._table.call(op, args, timeout_s)


class PrefixStore(Store):
    """``store`` with every key prefixed by ``prefix + "/"`` (``torch.distributed.PrefixStore``)."""

    def __init__(self, prefix: str, store: Store):
        super().__init__(store.timeout)
        self.prefix = prefix
        self.underlying_store = store

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}"

    def _call(self, op, args, timeout_s):
        if op in ("check", "wait", "multi_get", "multi_set"):
            args = [[self._key(k) for k in args[0]], *args[1:]]
        elif op != "num_keys":
            args = [self._key(args[0]), *args[1:]]
        return self.underlying_store._call(op, args, timeout_s)

    def _timed_out(self, keys, timeout_s):
        self.underlying_store._timed_out(keys, timeout_s)


class FileStore(Store):
    """A store in a file that processes sharing a filesystem open by name
    (``torch.distributed.FileStore``). Each operation locks the file (``fcntl``), reads the table,
    applies itself and writes back; waits poll every 10 ms until the store's timeout."""

    def __init__(self, file_name: str, world_size: int = -1):
        super().__init__()
        self.path, self.world_size = file_name, world_size
        with open(self.path, "a"):
            pass

    def _call(self, op, args, timeout_s):
        import fcntl  # NOTE: here, not at the top: POSIX only, and glassgrad imports this module

        deadline = time.monotonic() + timeout_s
        while True:
            with open(self.path, "r+") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                text = f.read()
                table = _Table(internal=1)
                table.data = {k: base64.b64decode(v) for k, v in json.loads(text or "{}").items()}
                before = dict(table.data)
                out = table.call(op, args, 0.0)
                if table.data != before:
                    f.seek(0)
                    f.truncate()
                    json.dump({k: base64.b64encode(v).decode() for k, v in table.data.items()}, f)
            if op == "delete_key":
                return True  # NOTE: torch's FileStore answers True for a missing key too
            if not (isinstance(out, tuple) and out[0] == "timeout"):
                return out
            if time.monotonic() >= deadline:
                return ("timeout", out[1], op)
            time.sleep(0.01)

    def _timed_out(self, keys, timeout_s):
        raise RuntimeError("Wait timeout")

    def get(self, key: str) -> bytes:
        out = self._call("get", [key], self._timeout.total_seconds())
        if isinstance(out, tuple):
            raise RuntimeError(f"Timeout waiting for key: {key} after "
                               f"{int(round(self._timeout.total_seconds() * 1000))} ms")
        return out


def _encode(value):
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple):
        return {"t": [_encode(v) for v in value]}
    return value


def _decode(value):
    if isinstance(value, dict):
        return base64.b64decode(value["b"]) if "b" in value else tuple(map(_decode, value["t"]))
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _serve(host: str, port: int):
    """A threaded TCP server answering store requests (one JSON line each) from its table."""
    import socketserver  # NOTE: here: only a TCPStore master needs it (import time)

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            for line in self.rfile:
                request = json.loads(line)
                out = self.server.table.call(request["op"], _decode(request["args"]),
                                             request["timeout"])
                self.wfile.write((json.dumps({"out": _encode(out)}) + "\n").encode())
                self.wfile.flush()

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server((host, port), Handler)
    server.table = _Table(internal=1)
    threading.Thread(target=server.serve_forever, daemon=True, name="glassgrad-tcpstore").start()
    return server


class TCPStore(Store):
    """A store served over TCP by the ``is_master`` process, which the others connect to
    (``torch.distributed.TCPStore``). ``port=0`` on the master picks a free port (``.port``).
    The server runs in a daemon thread of the master; connecting retries until ``timeout``."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: datetime.timedelta = datetime.timedelta(
                     seconds=300), wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True):
        super().__init__(timeout)
        self.host, self.world_size = host_name, world_size
        self._server = None
        if is_master:
            self._server = _serve(host_name, port)
            port = self._server.server_address[1]
        self.port = port
        self._lock = threading.Lock()
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                self._sock = socket.create_connection((host_name, port), timeout=5)
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise DistStoreError(f"TCPStore: could not connect to {host_name}:{port} "
                                         f"within {timeout}: {e}") from None
                time.sleep(0.05)
        self._sock.settimeout(None)
        self._file = self._sock.makefile("rwb")

    def _call(self, op, args, timeout_s):
        line = json.dumps({"op": op, "args": _encode(args), "timeout": timeout_s}) + "\n"
        with self._lock:
            self._file.write(line.encode())
            self._file.flush()
            reply = self._file.readline()
        if not reply:
            raise DistStoreError(f"TCPStore: the server at {self.host}:{self.port} closed the "
                                 "connection")
        return _decode(json.loads(reply)["out"])

    def _timed_out(self, keys, timeout_s):
        raise DistStoreError(f"wait timeout after {int(round(timeout_s * 1000))}ms, keys: "
                             + ", ".join("/" + k for k in keys))
