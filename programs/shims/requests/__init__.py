"""A stand-in for the ``requests`` package that serves bundled data instead of the network.

Only what the example programs fetch is known: the gcn program's Cora archive
(``https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz``) is answered with the Cora-format graph of
programs/shims/_bundled_data.py. Any other address raises ConnectionError, as a machine without
network access would.
"""

from __future__ import annotations

import io

from _bundled_data import cora_tgz

__all__ = ["ConnectionError", "Response", "get"]

_KNOWN = {"https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz": cora_tgz}


class ConnectionError(OSError):  # noqa: A001 - requests' own name
    """No network: the address is not one the stand-in serves."""


class Response:
    """The body as ``content`` and as a file object ``raw``; usable in a ``with`` block."""

    def __init__(self, url: str, body: bytes) -> None:
        self.url, self.content, self.status_code = url, body, 200
        self.raw = io.BytesIO(body)

    def raise_for_status(self) -> None:
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.raw.close()


def get(url, stream=False, **kwargs):
    """The bundled body for a known ``url``; ConnectionError for any other."""
    if url not in _KNOWN:
        raise ConnectionError(f"requests stand-in (programs/shims): no network, and {url} is not "
                              "one of the bundled downloads")
    return Response(url, _KNOWN[url]())
