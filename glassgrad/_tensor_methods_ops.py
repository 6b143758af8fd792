"""Lane ops' Tensor methods (issue 15): attached with setattr, as _tensor_methods.py does, so
tensor.py stays small. The in-place and *_copy variants are made in _ops_variants.py."""

from __future__ import annotations

from . import _ops_variants  # noqa: F401 - X_ and X_copy methods
