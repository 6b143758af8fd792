"""Run one probe on torch and on glassgrad and compare what happens: the value returned, or the
exception's type and torch's message (glassgrad appends its own explanation after a newline
starting "glassgrad:", which is cut before comparing)."""

from __future__ import annotations

import warnings

import torch

import glassgrad


def outcome(probe, lib):
    """('returns', value) or ('raises', type name, message without glassgrad's explanation)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = probe(lib)
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return ("raises", type(exc).__name__, str(exc).split("\nglassgrad:")[0])
    if isinstance(value, (torch.device, glassgrad.device)):
        value = str(value)
    return ("returns", value)


def same_outcome(probe):
    """Assert ``probe(torch)`` and ``probe(glassgrad)`` return the same value or raise alike."""
    theirs, ours = outcome(probe, torch), outcome(probe, glassgrad)
    assert ours == theirs, f"glassgrad {ours} != torch {theirs}"
    return ours
