"""``glassgrad.backends.mkldnn``: oneDNN is not used (``torch.backends.mkldnn``).

NOTE: torch's CPU wheels ship oneDNN and answer ``is_available()`` True; glassgrad's kernels are
NumPy's, so it answers False. ``enabled`` keeps the value a program sets.
"""

from __future__ import annotations

from . import BoolFlag, install_flags


def is_available() -> bool:
    """False: glassgrad runs no oneDNN kernels (``torch.backends.mkldnn.is_available``)."""
    return False


install_flags(__name__, enabled=BoolFlag(True, "set_enabled_mkldnn"))
