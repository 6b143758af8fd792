"""Error comparison for the lane-ops tests: the same call on glassgrad and torch must raise
the same exception type with torch's key phrase in its first line."""

import torch

import glassgrad


def error_of(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


def same_error(fn, phrase):
    """``fn(lib)`` raises on both libraries: one type, and ``phrase`` in both first lines."""
    ours, theirs = error_of(glassgrad, fn), error_of(torch, fn)
    assert theirs is not None and phrase in theirs[1], theirs
    assert ours is not None and ours[0] == theirs[0] and phrase in ours[1], (ours, theirs)
