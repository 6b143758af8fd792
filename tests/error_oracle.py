"""One check for error tests: the same call on glassgrad and on torch raises the same exception
type, and glassgrad's message contains torch's key phrase."""

from __future__ import annotations

import warnings

import pytest
import torch

import glassgrad


def first_line(message: str) -> str:
    return message.split("\n")[0].split(" (Triggered")[0]


def assert_raises_like_torch(bad, key=first_line):
    """``bad(lib)`` raises for both libraries; ``key`` picks torch's phrase from its message."""
    caught = []
    for m in (glassgrad, torch):
        with pytest.raises(Exception) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bad(m)
        caught.append(info)
    ours, theirs = caught
    assert ours.type is theirs.type, (ours.value, theirs.value)
    phrase = key(str(theirs.value))
    assert phrase in str(ours.value), (str(ours.value), phrase)
