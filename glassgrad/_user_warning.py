"""``warn_user``: every warning glassgrad gives names the user's line, as torch's do.

NOTE [User's line]: ``warnings.warn(stacklevel=n)`` counts frames, and the count from a warning
site to user code varies with the way in (a public function wrapped by ``_arg_check``, a module's
``__call__``, a method that delegates, the engine running a hook), so a fixed ``stacklevel``
points into glassgrad as often as not. ``warn_user`` walks out of glassgrad's own files instead
(Python 3.12's ``skip_file_prefixes``, which 3.11 lacks), so the warning shows the file, line
and text of the first frame outside the package. Warnings are not on any hot path.
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel(depth: int = 1) -> int:
    """The ``stacklevel`` that names the first frame outside glassgrad, counted from the frame
    ``depth`` levels up from this function's caller (0: the caller itself)."""
    f = sys._getframe(depth + 1)
    level = 1
    while f.f_back is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
        level += 1
    return level


def warn_user(message, category=UserWarning, stacklevel=None, source=None) -> None:
    """``warnings.warn`` attributed to the user's line (``stacklevel`` is accepted and ignored:
    the level is found, NOTE [User's line])."""
    warnings.warn(message, category, stacklevel=user_stacklevel(1) + 1, source=source)
