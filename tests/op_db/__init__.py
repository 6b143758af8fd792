"""The op table: one ``OpInfo`` per public op, picked up by the generic tests in test_ops.py.

Each entry's ``fn(lib, *args)`` runs unchanged on ``torch`` and on ``glassgrad``. Samples are
NumPy arrays (float arrays become inputs that require grad; integer/bool arrays become plain
tensors) or Python values passed through. Families live in their own modules and are collected here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ""


@dataclass
class OpInfo:
    name: str
    fn: Callable  # fn(lib, *tensors_and_values, **kwargs) -> Tensor or tuple of Tensors
    samples: Callable  # samples(rng) -> list[Sample]
    grad: bool = True  # check first-order VJP against torch + gradcheck
    gradgrad: bool = True  # check double backward against torch + gradgradcheck
    atol: float = 1e-6
    rtol: float = 1e-5
    float32: bool = True  # also compare forward in float32
    gradcheck_samples: int = 2  # how many samples (smallest first) get finite differences
    xfail: str = ""  # reason, when the op is knowingly incomplete


def arr(rng, *shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def positive(rng, *shape):
    return rng.uniform(0.2, 2.0, size=shape)


def unary_samples(domain=(-2.0, 2.0)):
    """The standard shapes of a one-input op: 0-d, empty, vector, matrix, 3-D, non-contiguous."""

    def make(rng):
        lo, hi = domain
        u = lambda *s: rng.uniform(lo, hi, size=s)  # noqa: E731
        return [
            Sample((u(),), desc="0-d"),
            Sample((u(0),), desc="empty"),
            Sample((u(5),), desc="vector"),
            Sample((u(3, 4),), desc="matrix"),
            Sample((u(2, 3, 4).transpose(2, 0, 1),), desc="non-contiguous 3-D"),
        ]

    return make


def binary_samples(domain=(-2.0, 2.0), domain2=None):
    """Two-input shapes with broadcasting both ways, 0-d against matrix, and empty."""

    def make(rng):
        lo, hi = domain
        lo2, hi2 = domain2 or domain
        u = lambda *s: rng.uniform(lo, hi, size=s)  # noqa: E731
        v = lambda *s: rng.uniform(lo2, hi2, size=s)  # noqa: E731
        return [
            Sample((u(), v()), desc="0-d"),
            Sample((u(4), v(4)), desc="same shape"),
            Sample((u(3, 1), v(1, 4)), desc="broadcast both"),
            Sample((u(2, 3, 4), v(4)), desc="broadcast right"),
            Sample((u(), v(2, 3)), desc="0-d with matrix"),
            Sample((u(0, 3), v(3)), desc="empty"),
        ]

    return make


def all_ops() -> list:
    """Every OpInfo of every module in this package (each defines ``OPS``): a new table file is
    picked up without a registration line, so parallel work on tables never edits one list."""
    import importlib
    import pkgutil

    ops = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        ops.extend(importlib.import_module(f"{__name__}.{info.name}").OPS)
    return ops
