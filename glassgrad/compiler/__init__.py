"""``glassgrad.compiler`` (``torch.compiler``): ``compile`` runs eagerly, ``is_compiling()`` is
False, and the decorators return what they decorate (see ``glassgrad._dynamo``)."""

from __future__ import annotations

from .._compile import compile  # noqa: F401, A004 - torch.compiler.compile
from .._dynamo import allow_in_graph, list_backends, reset  # noqa: F401


def is_compiling() -> bool:
    """False: no code is ever traced (``torch.compiler.is_compiling``)."""
    return False


def is_dynamo_compiling() -> bool:
    """False (``torch.compiler.is_dynamo_compiling``)."""
    return False


def is_exporting() -> bool:
    """False: nothing is being exported (``torch.compiler.is_exporting``)."""
    return False


def disable(fn=None, recursive: bool = True, *, reason=None):
    """``fn`` itself: it runs eagerly already (``torch.compiler.disable``)."""
    return (lambda f: f) if fn is None else fn


def assume_constant_result(fn):
    """``fn`` itself (``torch.compiler.assume_constant_result``)."""
    return fn


def cudagraph_mark_step_begin() -> None:
    """Mark a CUDA-graph step: no graphs on the CPU (a no-op)."""
