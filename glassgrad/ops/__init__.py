"""Primitives: every op with a derivative, one family per module (see DESIGN.md)."""

from . import elementwise, indexing, linalg, reduction, shape  # noqa: F401
from .primitive import REGISTRY, Primitive  # noqa: F401
