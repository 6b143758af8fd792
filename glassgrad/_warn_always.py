"""``torch.set_warn_always``: a leaf module (no glassgrad imports), so that every once-only
warning of glassgrad, wherever it lives, can read the switch.

NOTE [Warn always]: torch's TORCH_WARN_ONCE warnings show once per process unless
``set_warn_always(True)``; glassgrad's once-only warnings test ``ALWAYS[0]`` before skipping a
repeat.
"""

from __future__ import annotations

from ._user_warning import warn_user

ALWAYS = [False]


def set_warn_always(b: bool) -> None:
    """Make warnings that show once show every time (``torch.set_warn_always``)."""
    ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether once-only warnings repeat (``torch.is_warn_always_enabled``)."""
    return ALWAYS[0]


def warn_once(seen: set, key, message: str, category=UserWarning, stacklevel: int = 3) -> None:
    """Warn ``message`` the first time ``key`` is met, every time under ``set_warn_always``."""
    if key in seen and not ALWAYS[0]:
        return
    seen.add(key)
    warn_user(message, category, stacklevel=stacklevel)
